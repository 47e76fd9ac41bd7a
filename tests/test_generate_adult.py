"""``scripts/generate_adult.py``: determinism, schema and realism of the two methods (issue 27).

The ``model`` method must keep the file's contract (same arguments give the same bytes, a
smaller ``--rows`` is a prefix, Adult's columns and types) and make rows that are mostly
new quasi-identifier combinations while keeping Adult's marginals and known links.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from scripts import generate_adult as gen
from tests._inputs import ADULT_CSV

QI = list(gen.QI_COLUMNS)
ROWS_REALISM = 50_000


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(ADULT_CSV)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """50,000 rows of each method, seed 0, written once for the module."""
    folder = tmp_path_factory.mktemp("generated")
    paths = {}
    for method in gen.METHODS:
        paths[method] = folder / f"{method}.parquet"
        gen.generate(ADULT_CSV, paths[method], ROWS_REALISM, method=method)
    yield paths


def _unique_share(frame: pd.DataFrame) -> float:
    sizes = frame.groupby(QI, observed=True).size()
    return float((sizes == 1).sum() / len(frame))


@pytest.mark.parametrize("method", gen.METHODS)
def test_same_arguments_same_bytes_and_smaller_rows_is_a_prefix(
    tmp_path: Path, method: str
) -> None:
    first, again, shorter, other_seed = (tmp_path / f"{n}.parquet" for n in "abcd")
    gen.generate(ADULT_CSV, first, 1000, seed=3, chunk_rows=300, method=method)
    gen.generate(ADULT_CSV, again, 1000, seed=3, chunk_rows=300, method=method)
    gen.generate(ADULT_CSV, shorter, 700, seed=3, chunk_rows=300, method=method)
    gen.generate(ADULT_CSV, other_seed, 1000, seed=4, chunk_rows=300, method=method)
    assert first.read_bytes() == again.read_bytes()
    full = pq.read_table(first)
    assert pq.read_table(shorter).equals(full.slice(0, 700))
    assert pq.ParquetFile(first).metadata.num_row_groups == 4
    assert not pq.read_table(other_seed).equals(full)


def test_methods_differ_and_unknown_method_is_refused(tmp_path: Path) -> None:
    model, copy = tmp_path / "m.parquet", tmp_path / "c.parquet"
    gen.generate(ADULT_CSV, model, 200, method="model")
    gen.generate(ADULT_CSV, copy, 200, method="copy")
    assert not pq.read_table(model).equals(pq.read_table(copy))
    with pytest.raises(ValueError, match="method"):
        gen.generate(ADULT_CSV, tmp_path / "x.parquet", 10, method="bootstrap")
    assert not (tmp_path / "x.parquet").exists()


def test_model_columns_types_and_ranges(made: dict[str, Path], adult: pd.DataFrame) -> None:
    table = pq.read_table(made["model"])
    assert table.schema.equals(gen.SCHEMA)
    assert table.num_rows == ROWS_REALISM
    assert all(column.null_count == 0 for column in table.columns)
    rows = table.to_pandas()
    for name in gen.COLUMNS:
        if name in gen.INT_COLUMNS:
            assert rows[name].min() >= adult[name].min(), name
            assert rows[name].max() <= adult[name].max(), name
        else:
            assert set(rows[name]) <= set(adult[name]), name


def test_model_education_num_matches_education(made: dict[str, Path], adult: pd.DataFrame) -> None:
    pairs = pq.read_table(made["model"], columns=["education", "education-num"]).to_pandas()
    source_map = dict(zip(adult["education"], adult["education-num"], strict=True))
    assert (pairs["education-num"] == pairs["education"].map(source_map)).all()


def test_model_rows_are_mostly_new_combinations(made: dict[str, Path], adult: pd.DataFrame) -> None:
    model = pd.read_parquet(made["model"], columns=QI)
    copy = pd.read_parquet(made["copy"], columns=QI)
    model_share, copy_share = _unique_share(model), _unique_share(copy)
    # Adult: 21.9% of its 45,222 rows have a combination no other row has. Copies of its
    # rows lose that fast as rows grow; the model's rows stay near Adult's level.
    assert model_share > copy_share + 0.04
    assert model_share > 0.8 * _unique_share(adult)
    combos = model.drop_duplicates()
    seen = combos.merge(adult[QI].drop_duplicates(), on=QI, how="inner")
    # Many combinations Adult does not have.
    assert len(seen) < 0.8 * len(combos)


def test_model_keeps_marginals_and_known_links(made: dict[str, Path], adult: pd.DataFrame) -> None:
    rows = pd.read_parquet(made["model"])
    for name in ("age", "workclass", "education", "marital-status", "occupation", "race"):
        share, source_share = (
            rows[name].value_counts(normalize=True),
            adult[name].value_counts(normalize=True),
        )
        tvd = 0.5 * share.sub(source_share, fill_value=0).abs().sum()
        assert tvd < 0.03, (name, tvd)
    for name in ("sex", "relationship", "native-country", "income"):
        share = rows[name].value_counts(normalize=True)
        source_share = adult[name].value_counts(normalize=True)
        assert 0.5 * share.sub(source_share, fill_value=0).abs().sum() < 0.02, name
    # Mostly-zero capital columns, never a gain and a loss on one row (as in Adult).
    assert 0.88 < (rows["capital-gain"] == 0).mean() < 0.94
    assert 0.93 < (rows["capital-loss"] == 0).mean() < 0.97
    assert not ((rows["capital-gain"] > 0) & (rows["capital-loss"] > 0)).any()
    # Heaping of hours-per-week at 40 kept (47% in Adult).
    assert (
        abs((rows["hours-per-week"] == 40).mean() - (adult["hours-per-week"] == 40).mean()) < 0.02
    )
    # Known links: as strong as in Adult.
    for a, b in gen.REPORT_PAIRS:
        ours = _mi_bits(rows[a], rows[b])
        theirs = _mi_bits(adult[a], adult[b])
        assert abs(ours - theirs) < 0.1 * theirs + 0.01, (a, b, ours, theirs)
    husband = rows["relationship"] == "Husband"
    assert (rows.loc[husband, "sex"] == "Male").mean() > 0.99


def _mi_bits(a: pd.Series, b: pd.Series) -> float:
    """Mutual information of two columns, in bits, by pandas (independent of the script's)."""
    joint = pd.crosstab(a, b, normalize=True).to_numpy()
    expected = np.outer(joint.sum(axis=1), joint.sum(axis=0))
    seen = joint > 0
    return float((joint[seen] * np.log2(joint[seen] / expected[seen])).sum())


def test_draw_respects_rows_and_zero_probabilities() -> None:
    sampler = gen.make_sampler(
        [np.array([1.0, 0.0, 3.0]), np.array([0.0, 2.0])],
        [np.array([10, 11, 12]), np.array([20, 21])],
    )
    rows = np.array([0] * 4000 + [1] * 10, dtype=np.int64)
    uniforms = np.random.default_rng(0).random(len(rows))
    uniforms[:2] = [0.0, np.nextafter(1.0, 0.0)]
    drawn = gen.draw(sampler, rows, uniforms)
    assert set(drawn[rows == 1]) == {21}
    assert set(drawn[rows == 0]) == {10, 12}
    assert abs((drawn[rows == 0] == 12).mean() - 0.75) < 0.03


def test_bin_edges_give_heaps_their_own_bin_and_no_empty_bin() -> None:
    values = np.array([1, 2, 3, 40, 40, 40, 40, 40, 40, 41, 50, 99], dtype=np.int64)
    edges = gen.bin_edges(values, gen.NumericSpec("h", 4, zero_bin=False, integer_pmf=True))
    assert edges[0] == 1 and edges[-1] == 100
    assert list(edges).index(40) + 1 == list(edges).index(41)
    counts = np.bincount(gen.assign_bins(values, edges), minlength=len(edges) - 1)
    assert (counts > 0).all()
    capital = np.array([0] * 20 + [5, 7, 9, 300], dtype=np.int64)
    edges = gen.bin_edges(capital, gen.NumericSpec("c", 2, zero_bin=True, integer_pmf=False))
    assert list(edges[:2]) == [0, 5]


def test_report_counts_unique_combinations(tmp_path: Path, adult: pd.DataFrame) -> None:
    rows = adult.iloc[:6].copy()
    rows.iloc[1] = rows.iloc[0]  # rows 0 and 1 share their combination, 2..5 differ
    path = tmp_path / "six.parquet"
    pq.write_table(pa.Table.from_pandas(rows, schema=gen.SCHEMA, preserve_index=False), path)
    edges = gen.report_edges(ADULT_CSV)
    six = gen.profile(path, edges)
    assert (six.rows, six.distinct_qi, six.unique_qi) == (6, 5, 4)
    source = gen.profile(ADULT_CSV, edges)
    sizes = adult.groupby(QI).size()
    assert (source.rows, source.distinct_qi, source.unique_qi) == (
        len(adult),
        len(sizes),
        int((sizes == 1).sum()),
    )
    assert gen.total_variation(source.marginals["sex"], source.marginals["sex"]) == 0.0
    assert gen.total_variation({"a": 1}, {"b": 3}) == 1.0


def test_cli_report_and_argument_errors(
    made: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert gen.main(["--report", str(made["model"])]) == 0
    text = capsys.readouterr().out
    assert "50,000" in text and "education / education-num" in text
    with pytest.raises(SystemExit) as exit_info:
        gen.main(["--report", str(made["model"]), "--rows", "5"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        gen.main(["--out", "x.parquet"])
    assert exit_info.value.code == 2
    assert "--rows and --out are required" in capsys.readouterr().err
