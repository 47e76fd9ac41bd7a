"""Date and timestamp quasi-identifiers (``kind: date``, ``kind: timestamp``).

Pure: parsing (formats, zones, offsets, daylight-saving edges) to epoch days and UTC
seconds, calendar level labels and their nesting, centroids, ranges and NCP, hand-worked.
Jobs: every family on the local engine over a tiny table with a date and a timestamp
quasi-identifier, verified; bad input and bad config exit 2 naming the key; one Spark
run reads the same table from Parquet (DateType, TimestampType) and publishes the rows
the local engine publishes.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkanon.attributes.dates import (
    DateKind,
    TemporalFormat,
    TimestampKind,
    calendar_levels,
    unit_label,
    unit_start,
)
from sparkanon.attributes.levels import LevelHierarchy
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import ConfigError, InputError
from sparkanon.families import parse_config
from sparkanon.pipeline import run_job

DAY_2020_01_03 = 18264
"""2020-01-03 in days since 1970-01-01 (18262 is 2020-01-01)."""
T_2020_01_03_10H = DAY_2020_01_03 * 86400 + 10 * 3600
"""2020-01-03T10:00:00Z in seconds since the epoch."""


# ------------------------------------------------------------------ parsing


def test_dates_parse_with_their_format_and_the_rest_is_invalid() -> None:
    reader = TemporalFormat(date=True, format="%d/%m/%Y")
    values = pd.Series(["03/01/2020", " 04/01/2020 ", "2020-01-03", None, "31/02/2020"])
    days, invalid = reader.parse(values)
    assert days[:2].tolist() == [DAY_2020_01_03, DAY_2020_01_03 + 1]
    assert invalid.tolist() == [False, False, True, True, True]


def test_date_objects_and_iso_text_parse_alike() -> None:
    iso = TemporalFormat(date=True)
    objects = pd.Series([dt.date(2020, 1, 3), dt.date(1969, 12, 31)], dtype=object)
    assert iso.parse(objects)[0].tolist() == [DAY_2020_01_03, -1]
    assert iso.parse(pd.Series(["2020-01-03", "1969-12-31"]))[0].tolist() == [DAY_2020_01_03, -1]
    # a format ignores date-typed values: they need none
    assert TemporalFormat(True, "%d/%m/%Y").parse(objects)[0].tolist() == [DAY_2020_01_03, -1]


def test_timestamps_convert_to_utc_by_offset_or_zone() -> None:
    paris = TemporalFormat(date=False, zone="Europe/Paris")
    values = pd.Series(
        [
            "2020-01-03T10:00:00",  # naive, winter: UTC+1
            "2020-01-03T10:00:00Z",
            "2020-01-03 11:00+01:00",
            "2020-07-03T12:00",  # naive, summer: UTC+2
            "2020-01-03",  # midnight in Paris
            "not a time",
        ]
    )
    seconds, invalid = paris.parse(values)
    summer = (DAY_2020_01_03 + 182) * 86400 + 10 * 3600
    assert seconds[:5].tolist() == [
        T_2020_01_03_10H - 3600,
        T_2020_01_03_10H,
        T_2020_01_03_10H,
        summer,
        DAY_2020_01_03 * 86400 - 3600,
    ]
    assert invalid.tolist() == [False] * 5 + [True]


def test_datetime64_values_naive_in_the_zone_aware_as_they_are() -> None:
    paris = TemporalFormat(date=False, zone="Europe/Paris")
    naive = pd.Series(pd.to_datetime(["2020-01-03T10:00:00"]))
    aware = naive.dt.tz_localize("UTC")
    assert paris.parse(naive)[0].tolist() == [T_2020_01_03_10H - 3600]
    assert paris.parse(aware)[0].tolist() == [T_2020_01_03_10H]
    assert paris.parse(naive.astype("datetime64[us]"))[0].tolist() == [T_2020_01_03_10H - 3600]


def test_daylight_saving_edges_are_deterministic() -> None:
    paris = TemporalFormat(date=False, zone="Europe/Paris")
    # 02:30 happens twice on 2020-10-25 (read as standard time, UTC+1) and never on
    # 2020-03-29 (moved forward to 03:00 CEST, 01:00Z)
    seconds, _ = paris.parse(pd.Series(["2020-10-25T02:30:00", "2020-03-29T02:30:00"]))
    expected = pd.to_datetime(["2020-10-25T01:30:00Z", "2020-03-29T01:00:00Z"]).asi8 // 10**9
    assert seconds.tolist() == expected.tolist()


def test_timestamp_format_with_an_offset() -> None:
    reader = TemporalFormat(date=False, format="%d.%m.%Y %H:%M %z", zone="Asia/Tokyo")
    seconds, invalid = reader.parse(pd.Series(["03.01.2020 12:00 +0200", "03.01.2020 12:00"]))
    assert seconds[0] == T_2020_01_03_10H
    assert invalid.tolist() == [False, True]


# ------------------------------------------------------------------ kinds


def test_date_kind_centroid_range_and_ncp() -> None:
    kind = DateKind("visit", 1.0, low=DAY_2020_01_03, high=DAY_2020_01_03 + 100)
    codes, invalid = kind.encode(pd.Series(["2020-01-03", "2020-01-05", "2020-01-10"]))
    assert not invalid.any()
    assert np.allclose(codes, [0.0, 0.02, 0.07])
    # mean 2020-01-06 (day 3.33 after the 3rd) rounded to the nearest day
    assert kind.decode(np.array([kind.centroid(codes)])).tolist() == [dt.date(2020, 1, 6)]
    assert kind.generalized(codes) == "[2020-01-03, 2020-01-10]"
    assert kind.generalized(codes[:1]) == "2020-01-03"
    assert kind.ncp(codes) == pytest.approx(0.07)


def test_timestamp_kind_publishes_utc_instants_and_whole_second_ranges() -> None:
    kind = TimestampKind("seen", 1.0, low=T_2020_01_03_10H, high=T_2020_01_03_10H + 3600)
    codes, _ = kind.encode(pd.Series(["2020-01-03T10:00:00.25Z", "2020-01-03T10:30:00.5Z"]))
    assert kind.generalized(codes) == "[2020-01-03T10:00:00Z, 2020-01-03T10:30:01Z]"
    published = kind.decode(np.array([kind.centroid(codes)]))
    assert str(published.dtype) == "datetime64[us, UTC]"
    assert published[0] == pd.Timestamp("2020-01-03T10:15:00.375Z")


# ------------------------------------------------------------------ calendar levels


def test_unit_starts_and_labels() -> None:
    day = np.array([18326])  # 2020-03-05, a Thursday
    expected = {
        "day": "2020-03-05",
        "week": "2020-W10",
        "month": "2020-03",
        "quarter": "2020-Q1",
        "year": "2020",
        "decade": "2020s",
    }
    for unit, label in expected.items():
        assert unit_label(unit, unit_start(unit, day)) == [label], unit
    assert unit_label("hour", np.array([T_2020_01_03_10H])) == ["2020-01-03T10:00Z"]
    # 2019-12-30 is the Monday of ISO week 2020-W01
    assert unit_label("week", unit_start("week", np.array([18260]))) == ["2020-W01"]


def test_calendar_levels_nest_and_weigh_their_span() -> None:
    low, high = 18260, 18300  # 2019-12-30 .. 2020-02-08
    cal = calendar_levels(("day", "week", "year"), low, high, False, 1000, "k")
    LevelHierarchy("d", cal.maps, cal.labels, cal.ncp)  # raises unless every level nests
    assert len(cal.labels[0]) == 41
    assert cal.labels[1][0] == "2020-W01" and cal.labels[1][-1] == "2020-W06"
    # 2019-12-30 falls in ISO week 2020-W01, so in the year 2020: one year, no root added
    assert cal.labels[2] == ("2020",)
    assert cal.ncp[0].tolist() == [0.0] * 41  # a day of a date column is an exact value
    assert cal.ncp[1][0] == pytest.approx(6 / 40)  # Monday .. Sunday
    assert cal.ncp[2].tolist() == [1.0]
    months = calendar_levels(("month", "quarter"), low, high, False, 1000, "k")
    assert months.labels == (("2019-12", "2020-01", "2020-02"), ("2019-Q4", "2020-Q1"), ("*",))
    # 2019-12-30 .. 31 and 2020-01-01 .. 02-08 of the range: spans 1 and 38 days of 40
    assert months.ncp[1].tolist() == pytest.approx([1 / 40, 38 / 40])


def test_calendar_levels_of_a_timestamp_start_at_the_hour() -> None:
    t0 = T_2020_01_03_10H + 1800
    cal = calendar_levels(("hour", "day"), t0, t0 + 86400, True, 1000, "k")
    assert cal.labels[0][0] == "2020-01-03T10:00Z" and len(cal.labels[0]) == 25
    assert cal.labels[1] == ("2020-01-03", "2020-01-04")
    assert cal.edges[0] == T_2020_01_03_10H
    with pytest.raises(ValueError, match="k: 25 hours"):
        calendar_levels(("hour", "day"), t0, t0 + 86400, True, 24, "k")


# ------------------------------------------------------------------ jobs


def tiny_table(n: int = 48, seed: int = 5) -> pd.DataFrame:
    """A date (as ``%d/%m/%Y`` text), a UTC timestamp, a number and a sensitive value."""
    rng = np.random.default_rng(seed)
    day = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 400, n), unit="D")
    seen = pd.Timestamp("2021-03-01T00:00:00Z") + pd.to_timedelta(
        rng.integers(0, 90 * 86400, n), unit="s"
    )
    return pd.DataFrame(
        {
            "visit": day.strftime("%d/%m/%Y"),
            "seen": seen.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "age": rng.integers(20, 70, n),
            "disease": rng.choice(["flu", "cold", "hiv", "cancer"], n),
        }
    )


def job(
    data: Path, out: Path, algorithm: dict[str, Any], fmt: str = "csv", **sections: Any
) -> dict[str, Any]:
    """A job over :func:`tiny_table` (``fmt: parquet``: date- and timestamp-typed columns)."""
    cfg: dict[str, Any] = {
        "input": {"format": fmt, "path": str(data)},
        "attributes": [
            {"name": "visit", "kind": "date"} | ({"format": "%d/%m/%Y"} if fmt == "csv" else {}),
            {"name": "seen", "kind": "timestamp", "timezone": "Europe/Paris"},
            {"name": "age", "kind": "continuous", "levels": {"widths": [10, 20]}},
        ],
        "sensitive": {"name": "disease"},
        "model": {"name": "k", "k": 4},
        "algorithm": algorithm,
        "output": {"path": str(out)},
        "report": {"enabled": False},
    }
    for key, value in sections.items():
        cfg[key] = cfg.get(key, {}) | value if isinstance(value, dict) else value
    return cfg


@pytest.fixture()
def tiny_csv(tmp_path: Path) -> Path:
    path = tmp_path / "in.csv"
    tiny_table().to_csv(path, index=False)
    return path


def _published(out: Path) -> tuple[pa.Schema, pd.DataFrame]:
    table = pq.read_table(out / "data")
    return table.schema, table.to_pandas()


def _groups_hold_k(frame: pd.DataFrame, k: int = 4) -> None:
    sizes = frame.groupby(["visit", "seen", "age"], dropna=False).size()
    assert sizes.min() >= k


@pytest.mark.parametrize("name", ["mdav", "maa_slie", "kl_cluster"])
def test_block_centroids_publish_dates_and_timestamps(
    tiny_csv: Path, tmp_path: Path, name: str
) -> None:
    out = tmp_path / "out"
    run_job(LocalEngine(batch_rows=16), parse_config(job(tiny_csv, out, {"name": name})))
    schema, frame = _published(out)
    assert str(schema.field("visit").type) == "date32[day]"
    assert str(schema.field("seen").type) == "timestamp[us, tz=UTC]"
    assert len(frame) == 48
    _groups_hold_k(frame)
    days = pd.to_datetime(tiny_table()["visit"], format="%d/%m/%Y")
    assert days.min().date() <= frame["visit"].min() <= frame["visit"].max() <= days.max().date()


def test_mondrian_generalized_ranges_hold_their_rows(tiny_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    cfg = job(tiny_csv, out, {"name": "mondrian"}, output={"publish": "generalized"})
    run_job(LocalEngine(), parse_config(cfg))
    schema, frame = _published(out)
    assert str(schema.field("visit").type) == "string"
    _groups_hold_k(frame)
    lows = frame["visit"].str.strip("[]").str.split(", ").str[0]
    assert pd.to_datetime(lows, format="%Y-%m-%d").notna().all()
    published = sorted(frame["visit"])
    # every input date lies in some published range
    for day in pd.to_datetime(tiny_table()["visit"], format="%d/%m/%Y").dt.strftime("%Y-%m-%d"):
        assert any(_inside(day, r) for r in published)


def _inside(day: str, published: str) -> bool:
    if not published.startswith("["):
        return day == published
    lo, hi = published.strip("[]").split(", ")
    return lo <= day <= hi


def test_full_domain_publishes_calendar_labels(tiny_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    cfg = job(tiny_csv, out, {"name": "samarati"}, output={"publish": "generalized"})
    cfg["attributes"][1]["levels"] = ["hour", "day", "week", "quarter", "year"]
    result = run_job(LocalEngine(), parse_config(cfg))
    _, frame = _published(out)
    _groups_hold_k(frame)
    labels = {
        "visit": ("2020-01-03", "2020-01", "2020-Q1", "2020", "2020s", "*"),
        "seen": ("2021-03-01T10:00Z", "2021-03-01", "2021-W09", "2021-Q1", "2021", "*"),
    }
    for column, examples in labels.items():
        level = result.metrics["node"][column]
        # each published value has the shape of its level's label
        assert frame[column].str.len().nunique() <= 2
        assert frame[column].iloc[0].count("-") == examples[level].count("-"), column


def test_perturbation_noises_dates_and_timestamps(tiny_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    columns = [
        {"name": "visit", "noise": "gaussian", "scale": 10},
        {"name": "seen", "noise": "uniform", "scale_share": 0.05},
    ]
    cfg = job(tiny_csv, out, {"name": "perturb", "columns": columns})
    del cfg["model"]
    run_job(LocalEngine(), parse_config(cfg))
    schema, frame = _published(out)
    assert str(schema.field("visit").type) == "date32[day]"
    assert str(schema.field("seen").type) == "timestamp[us, tz=UTC]"
    original = pd.to_datetime(tiny_table()["visit"], format="%d/%m/%Y")
    # No row id: the sorted values pair up with a gap no wider than the largest noise.
    published = np.sort(pd.to_datetime(frame["visit"]).to_numpy())
    shift = (published - np.sort(original.to_numpy())) / np.timedelta64(1, "D")
    assert np.abs(shift).max() > 0 and np.abs(shift).max() < 80  # noised, by about its scale


def test_condensation_synthesizes_dates(tiny_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_job(LocalEngine(), parse_config(job(tiny_csv, out, {"name": "condensation"})))
    schema, frame = _published(out)
    assert str(schema.field("visit").type) == "date32[day]"
    assert str(schema.field("seen").type) == "timestamp[us, tz=UTC]"
    assert len(frame) == 48
    assert result.metrics["verification"]["mean_failures"] == 0


def test_anatomy_publishes_typed_dates_and_measures_are(tmp_path: Path) -> None:
    """RT publishes the exact dates and instants typed, whatever the input's text format."""
    table = tiny_table()
    rng = np.random.default_rng(7)
    table["items"] = ["|".join(sorted(set(rng.choice(list("abcdefgh"), 3)))) for _ in table.index]
    data = tmp_path / "rt.csv"
    table.to_csv(data, index=False)
    out = tmp_path / "out"
    cfg = job(data, out, {"name": "paa"}, metrics={"are": {"queries": 40}})
    cfg["sensitive"] = {"name": "items", "kind": "itemset", "separator": "|", "fanout": 3}
    cfg["model"] = {"name": "kl_diversity", "k": 3, "l": 2}
    cfg["output"] |= {"publish": "anatomy"}
    metrics = run_job(LocalEngine(), parse_config(cfg)).metrics
    rt = pq.read_table(out / "rt")
    assert str(rt.schema.field("visit").type) == "date32[day]"
    assert str(rt.schema.field("seen").type) == "timestamp[us, tz=UTC]"
    got = rt.to_pandas()  # no row id: each published (visit, seen) is some input row's
    expected = Counter(
        zip(
            pd.to_datetime(table["visit"], format="%d/%m/%Y").dt.date,
            pd.to_datetime(table["seen"], utc=True),
            strict=True,
        )
    )
    published = Counter(zip(got["visit"], pd.to_datetime(got["seen"], utc=True), strict=True))
    assert published <= expected and published.total() == metrics["rows_out"] > 0
    assert metrics["verified"] is True
    assert np.isfinite(metrics["are"]["percent"]) and metrics["are"]["queries"] == 40


def test_an_unparsed_date_exits_2_naming_column_value_and_format(
    tmp_path: Path, tiny_csv: Path
) -> None:
    frame = tiny_table()
    frame.loc[7, "visit"] = "2020-13-45"
    frame.to_csv(tiny_csv, index=False)
    cfg = job(tiny_csv, tmp_path / "out", {"name": "mdav"})
    with pytest.raises(InputError, match=r"'2020-13-45'.*'visit'.*attributes\.0\.format"):
        run_job(LocalEngine(), parse_config(cfg))
    assert not (tmp_path / "out").exists()
    cfg["input"]["on_invalid"] = "drop"
    result = run_job(LocalEngine(), parse_config(cfg))
    assert result.metrics["suppressed_invalid_values"] == 1
    assert result.metrics["rows_out"] == 47


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "%Q-%m"}, r"attributes\.0\.format.*unknown strptime directive %Q"),
        ({"format": "2020"}, r"attributes\.0\.format.*no strptime directive"),
        ({"levels": ["day", "fortnight"]}, r"attributes\.0\.levels.*unknown unit 'fortnight'"),
        ({"levels": ["week", "month"]}, r"attributes\.0\.levels.*week and month do not nest"),
        ({"levels": ["year", "month"]}, r"attributes\.0\.levels.*finest first"),
        ({"levels": ["hour", "day"]}, r"attributes\.0\.levels.*unknown unit 'hour'"),
    ],
)
def test_bad_date_settings_name_their_key(
    tiny_csv: Path, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    cfg = job(tiny_csv, tmp_path / "out", {"name": "mdav"})
    cfg["attributes"][0] |= change
    with pytest.raises(ConfigError, match=message):
        parse_config(cfg)


def test_an_unknown_time_zone_names_its_key(tiny_csv: Path, tmp_path: Path) -> None:
    cfg = job(tiny_csv, tmp_path / "out", {"name": "mdav"})
    cfg["attributes"][1]["timezone"] = "Mars/Olympus"
    with pytest.raises(ConfigError, match=r"attributes\.1\.timezone.*'Mars/Olympus'"):
        parse_config(cfg)


# ------------------------------------------------------------------ Spark


def _typed_parquet(path: Path) -> Path:
    """:func:`tiny_table` with a DATE and a UTC-adjusted TIMESTAMP column, as Parquet."""
    frame = tiny_table()
    typed = pa.table(
        {
            "visit": pa.array(pd.to_datetime(frame["visit"], format="%d/%m/%Y").dt.date),
            "seen": pa.array(pd.to_datetime(frame["seen"], utc=True), pa.timestamp("us", "UTC")),
            "age": pa.array(frame["age"]),
            "disease": pa.array(frame["disease"]),
        }
    )
    path.mkdir()
    pq.write_table(typed, path / "part-0.parquet")
    return path


@pytest.mark.spark
def test_spark_publishes_the_local_rows_from_typed_parquet(spark: Any, tmp_path: Path) -> None:
    from sparkanon.engine.spark import SparkEngine

    data = _typed_parquet(tmp_path / "in")
    from sparkanon.engine.session import SESSION_CONF, SESSION_TIME_ZONE

    before = {key: spark.conf.get(key) for key in SESSION_CONF}
    for key, value in SESSION_CONF.items():
        spark.conf.set(key, value)
    # a user's own session zone: instants are still read as the instants they are
    spark.conf.set(SESSION_TIME_ZONE, "America/New_York")
    try:
        frames = []
        for name, engine in (("local", LocalEngine()), ("spark", SparkEngine(spark))):
            out = tmp_path / name
            run_job(engine, parse_config(job(data, out, {"name": "mdav"}, fmt="parquet")))
            schema, frame = _published(out)
            assert str(schema.field("visit").type) == "date32[day]", name
            assert str(schema.field("seen").type) == "timestamp[us, tz=UTC]", name
            frame["seen"] = pd.to_datetime(frame["seen"], utc=True)
            frames.append(frame.sort_values(list(frame.columns)).reset_index(drop=True))
    finally:
        for key, value in before.items():
            spark.conf.set(key, value)
    pd.testing.assert_frame_equal(frames[0], frames[1])
