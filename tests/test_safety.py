"""Output safety (issue 39, findings 1, 2 and 7): ``sparkanon/safety.py`` and its users.

1. An overwrite deletes only what sparkanon wrote (the output marker), and nothing a job
   writes (``output.path``, ``--metrics-out``, ``init --out``...) may be, contain or lie
   inside anything it reads (input, config, hierarchy files...).
2. File names made from column names stay inside their folder (a header
   ``../../../../t`` once made a run overwrite its own input ``t.csv``).
7. Outputs and their staging are owner-only (0700/0600), or group-readable under
   ``output.permissions: group``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sparkanon.cli import main, run_command
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import EXIT_OK, EXIT_USER, ConfigError, OutputExistsError
from sparkanon.families import parse_config
from sparkanon.io import (
    canonical_location,
    file_in,
    normalize_uri,
    path_relation,
    safe_file_name,
)
from sparkanon.safety import (
    MARKER,
    Location,
    check_overwritable,
    check_reads_and_writes,
    modes,
)
from tests._inputs import (
    HIERARCHIES,
    csv_input,
    file_modes,
    make_config,
    write_adult_csv,
    write_config,
)

# ---------------------------------------------------------------- pure: locations


PATH_RELATIONS: dict[str | None, list[tuple[str, str]]] = {
    "is": [("/d/in.csv", "/d/in.csv"), ("/d/in", "/d/in/")],
    "contains": [
        ("/d/in/x.csv", "/d"),
        ("/d/in", "/"),
        ("hdfs://nn:8020/data/in", "hdfs://nn:8020/data"),
    ],
    "lies inside": [
        ("/d/in", "/d/in/out"),
        ("hdfs://nn:8020/data/in", "hdfs://nn:8020/data/in/out"),
    ],
    None: [
        ("/d/in", "/d/in2"),  # a shared prefix is not containment
        ("/d/in2", "/d/in"),
        ("hdfs://nn:8020/data/in", "hdfs://other:8020/data/in"),  # another cluster
        ("s3a://bucket/in", "hdfs://bucket/in"),  # another filesystem
        ("s3a://bucket/in", "/bucket/in"),
    ],
}
"""Pairs of locations by how the first relates to the second (``None``: unrelated)."""


@pytest.mark.parametrize(
    ("first", "second", "relation"),
    [
        (first, second, relation)
        for relation, pairs in PATH_RELATIONS.items()
        for first, second in pairs
    ],
)
def test_path_relation(first: str, second: str, relation: str | None) -> None:
    assert path_relation(first, second) == relation


NORMAL_URIS = {
    "S3A://Bucket/x/../y/": "s3a://bucket/y",
    "hdfs://nn:8020//a/./b/": "hdfs://nn:8020/a/b",
    "hdfs://nn:8020/": "hdfs://nn:8020",
    "hdfs://nn/a/../../..": "hdfs://nn",
}
"""URIs and their normal form (:func:`normalize_uri`)."""


@pytest.mark.parametrize(("uri", "normal"), NORMAL_URIS.items())
def test_normalize_uri(uri: str, normal: str) -> None:
    assert normalize_uri(uri) == normal


def test_canonical_location_resolves_links_dots_and_file_uris(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    want = str(real.resolve() / "in.csv")
    assert canonical_location(str(tmp_path / "link" / "in.csv")) == want
    assert canonical_location(str(tmp_path / "real" / ".." / "link" / "in.csv")) == want
    assert canonical_location(f"file://{tmp_path}/link/in.csv") == want
    assert canonical_location("hdfs://NN/a/../b") == "hdfs://nn/b"


def test_reads_and_writes_name_both_keys_and_paths(tmp_path: Path) -> None:
    reads = [Location("input.path", str(tmp_path / "in" / "x.csv"), "the input")]
    check_reads_and_writes(reads, [Location("output.path", str(tmp_path / "out"))])
    with pytest.raises(ConfigError) as err:
        check_reads_and_writes(reads, [Location("--metrics-out", str(tmp_path / "in"))])
    text = str(err.value)
    for fragment in ("--metrics-out", "input.path", "contains the input", "x.csv"):
        assert fragment in text, text
    # URIs compare by scheme, authority and normalized path, without a filesystem
    with pytest.raises(ConfigError, match="lies inside"):
        check_reads_and_writes(
            [Location("report.holdout", "hdfs://nn/data/holdout")],
            [Location("output.path", "hdfs://NN/data/x/../holdout/out")],
        )


# ---------------------------------------------------------------- pure: file names


@pytest.mark.parametrize("name", ["../../../../t", "..", ".", "", "a/b", "/etc/passwd", ".bashrc"])
def test_hostile_names_stay_inside_their_folder(name: str) -> None:
    safe = safe_file_name(name)
    assert safe and safe not in (".", "..") and not safe.startswith(".")
    assert set(safe) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
    path = file_in("/o/hierarchies", name, ".csv")
    assert os.path.dirname(os.path.normpath(path)) == "/o/hierarchies"


def test_safe_names_keep_safe_names_and_never_collide() -> None:
    assert safe_file_name("native-country") == "native-country"
    assert safe_file_name("age_2.x") == "age_2.x"
    changed = [safe_file_name(n) for n in ("a b", "a/b", "a:b", "a_b")]
    assert len(set(changed)) == 4
    assert changed[-1] == "a_b"
    assert safe_file_name("a b") == safe_file_name("a b")  # stable
    assert len(safe_file_name("x" * 1000)) < 120


# ---------------------------------------------------------------- pure: marker and modes


def test_only_a_marked_or_empty_directory_may_be_replaced() -> None:
    check_overwritable([], True, "/o", "output.path")
    check_overwritable(["data", MARKER], True, "/o", "output.path")
    for names, is_dir in ((["data", "metrics.json"], True), ([], False)):
        with pytest.raises(OutputExistsError) as err:
            check_overwritable(names, is_dir, "/o", "output.path")
        assert "'/o'" in str(err.value) and "Remove it yourself" in str(err.value)


def test_modes() -> None:
    assert modes("owner") == (0o700, 0o600)
    assert modes("group") == (0o750, 0o640)


def test_permissions_key_is_validated(tmp_path: Path) -> None:
    raw = make_config(tmp_path, tmp_path / "in.csv", sections={"output": {"permissions": "all"}})
    with pytest.raises(ConfigError) as err:
        parse_config(raw)
    assert "output.permissions" in str(err.value) and "'group'" in str(err.value)
    raw["output"]["permissions"] = "group"
    assert parse_config(raw).output.permissions == "group"


# ---------------------------------------------------------------- jobs on the local engine


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def _run(tmp_path: Path, cfg: dict[str, Any], *flags: str) -> int:
    args = ["run", str(write_config(tmp_path, cfg)), "--engine", "local", *flags]
    return main(args)


def test_overwrite_of_an_unrelated_directory_is_refused(tmp_path: Path, capsys) -> None:
    unrelated = tmp_path / "photos"
    (unrelated / "2026").mkdir(parents=True)
    (unrelated / "2026" / "a.jpg").write_bytes(b"\xff\xd8 not yours")
    (unrelated / "notes.txt").write_text("keep me", encoding="utf-8")
    before = _tree(unrelated)
    cfg = make_config(
        tmp_path,
        write_adult_csv(tmp_path, 60),
        sections={"output": {"path": str(unrelated), "mode": "overwrite"}},
    )
    assert _run(tmp_path, cfg) == EXIT_USER
    err = capsys.readouterr().err
    assert "output.path" in err and repr(str(unrelated)) in err and MARKER in err, err
    assert "Remove it yourself" in err and "choose another output.path" in err, err
    assert _tree(unrelated) == before
    assert not list(tmp_path.glob("photos.__sparkanon_*"))


def test_overwrite_of_the_hierarchy_folder_is_refused(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "hierarchies"
    shutil.copytree(HIERARCHIES, folder)
    before = _tree(folder)
    cfg = make_config(
        tmp_path,
        write_adult_csv(tmp_path, 60),
        sections={"output": {"path": str(folder), "mode": "overwrite"}},
    )
    for attr in cfg["attributes"]:
        if "hierarchy" in attr:
            attr["hierarchy"] = str(folder / Path(attr["hierarchy"]).name)
    assert _run(tmp_path, cfg) == EXIT_USER
    err = capsys.readouterr().err
    assert "output.path" in err and "a hierarchy file (attributes." in err, err
    assert _tree(folder) == before


def test_overwrite_of_sparkanons_own_output_works(tmp_path: Path, capsys) -> None:
    cfg = make_config(
        tmp_path, write_adult_csv(tmp_path, 60), sections={"output": {"mode": "overwrite"}}
    )
    out = Path(cfg["output"]["path"])
    out.mkdir()  # an empty directory may be taken
    assert _run(tmp_path, cfg) == EXIT_OK, capsys.readouterr().err
    marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    assert marker == {"written_by": "sparkanon", "format": 1, "kind": "output"}
    (out / "metrics.json").write_text("{}", encoding="utf-8")
    assert _run(tmp_path, cfg, "--set", "seed=3") == EXIT_OK, capsys.readouterr().err
    assert json.loads((out / "metrics.json").read_text(encoding="utf-8"))["seed"] == 3
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out")) == ["out"]


def test_init_out_onto_the_input_is_refused(tmp_path: Path, capsys) -> None:
    data = write_adult_csv(tmp_path, 60)
    before = data.read_bytes()
    for out in (data, tmp_path / ".." / tmp_path.name / data.name):
        assert main(["init", str(data), "--out", str(out), "--engine", "local"]) == EXIT_USER
        err = capsys.readouterr().err
        assert "--out" in err and "TABLE_OR_PATH" in err and "is the table" in err, err
    assert data.read_bytes() == before


def test_metrics_out_onto_the_input_is_refused(tmp_path: Path, capsys) -> None:
    data = write_adult_csv(tmp_path, 60)
    before = data.read_bytes()
    cfg = make_config(tmp_path, data)
    assert _run(tmp_path, cfg, "--metrics-out", str(data)) == EXIT_USER
    err = capsys.readouterr().err
    assert "--metrics-out" in err and "is the input (input.path" in err, err
    assert data.read_bytes() == before
    assert not Path(cfg["output"]["path"]).exists()  # refused before any work
    # ...and onto the config file or a hierarchy file
    job = tmp_path / "job.yaml"
    assert _run(tmp_path, cfg, "--metrics-out", str(job)) == EXIT_USER
    assert "the config file (CONFIG" in capsys.readouterr().err
    hierarchy = next(a["hierarchy"] for a in cfg["attributes"] if "hierarchy" in a)
    assert _run(tmp_path, cfg, "--metrics-out", hierarchy) == EXIT_USER
    assert "a hierarchy file" in capsys.readouterr().err


def _hostile_job(tmp_path: Path, column: str) -> tuple[dict[str, Any], Path, Path]:
    """An input ``t.csv`` with a column named ``column`` (a masked 5-digit code), whose
    generated hierarchy the old code wrote to ``<staging>/hierarchies/{column}.csv``: with
    ``../../../../t`` that is ``t.csv`` itself, the output lying four folders down."""
    n = 60
    frame = pd.DataFrame(
        {
            "age": [(17 + 7 * i) % 97 for i in range(n)],
            column: [f"{12300 + (i * 37) % 400:05d}" for i in range(n)],
            "disease": [("flu", "cold", "hiv")[i % 3] for i in range(n)],
        }
    )
    data = tmp_path / "t.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "w" / "x" / "out"
    raw = {
        "input": csv_input(data),
        "attributes": [
            {"name": "age", "kind": "continuous"},
            {
                "name": column,
                "kind": "categorical",
                "builder": {"type": "mask", "length": 5, "masked": [1, 2, 5]},
            },
        ],
        "sensitive": {"name": "disease"},
        "model": {"name": "k", "k": 3},
        "algorithm": {"name": "mondrian"},
        "output": {"path": str(out), "format": "csv", "publish": "generalized"},
        "report": {"enabled": False},
    }
    return raw, data, out


def test_a_hostile_column_name_stays_inside_the_output(tmp_path: Path, capsys) -> None:
    from sparkanon.attributes.builders import hierarchy_file
    from sparkanon.engine.local import LocalEngine
    from sparkanon.evaluation.evaluate import built_hierarchies

    column = "../../../../t"
    raw, data, out = _hostile_job(tmp_path, column)
    before = data.read_bytes()
    assert run_command(str(write_config(tmp_path, raw)), [], engine_name="local") == EXIT_OK, (
        capsys.readouterr().err
    )
    assert data.read_bytes() == before
    written = list((out / "hierarchies").iterdir())
    assert [p.name for p in written] == [safe_file_name(column) + ".csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.yaml", "t.csv", "w"]
    # the one function that names it names it so, and the evaluation builds it again
    assert Path(hierarchy_file(str(out), column)) == written[0]
    built = built_hierarchies(LocalEngine(), parse_config(raw))
    assert list(built) == [column] and built[column]


@pytest.mark.report
@pytest.mark.parametrize(
    ("permissions", "dir_mode", "file_mode"),
    [(None, 0o700, 0o600), ("owner", 0o700, 0o600), ("group", 0o750, 0o640)],
)
def test_outputs_are_owner_only_unless_group(
    tmp_path: Path, capsys, permissions: str | None, dir_mode: int, file_mode: int
) -> None:
    old = os.umask(0o022)  # the usual umask: files 0644, folders 0755 unless sparkanon sets them
    try:
        sections: dict[str, Any] = {"report": {"enabled": True}}
        if permissions is not None:
            sections["output"] = {"permissions": permissions}
        cfg = make_config(tmp_path, write_adult_csv(tmp_path, 60), sections=sections)
        metrics = tmp_path / "metrics.json"
        assert _run(tmp_path, cfg, "--metrics-out", str(metrics)) == EXIT_OK, (
            capsys.readouterr().err
        )
    finally:
        os.umask(old)
    out = Path(cfg["output"]["path"])
    assert (out / "report.html").is_file()
    assert file_modes(out) == {("dir", dir_mode), ("file", file_mode)}
    assert stat.S_IMODE(metrics.stat().st_mode) == file_mode


def test_the_staging_directory_is_owner_only_from_the_start(tmp_path: Path) -> None:
    from sparkanon.stages.commit import PathTarget

    cfg = parse_config(make_config(tmp_path, tmp_path / "in.csv"))
    target = PathTarget(LocalEngine(), cfg, reads_path=True)
    staging = Path(target.staging())
    assert stat.S_IMODE(staging.stat().st_mode) == 0o700
    assert [p.name for p in staging.iterdir()] == [MARKER]
    target.discard()
    assert not staging.exists()


def test_evaluate_out_onto_the_input_is_refused(tmp_path: Path, capsys) -> None:
    data = write_adult_csv(tmp_path, 60)
    before = data.read_bytes()
    job = write_config(tmp_path, make_config(tmp_path, data))
    assert main(["evaluate", str(job), "--out", str(data), "--engine", "local"]) == EXIT_USER
    err = capsys.readouterr().err
    assert "--out" in err and "lies inside the input (input.path" in err, err
    assert data.read_bytes() == before


def _perturbed_release(tmp_path: Path, hours: str) -> Path:
    """A committed perturbation release whose uniform-noise column is named ``hours``."""
    n = 2000
    frame = pd.DataFrame(
        {
            "age": [20 + (i * 7) % 50 for i in range(n)],
            hours: [20 + (i * 13) % 40 for i in range(n)],
            "income": [("<=50K", ">50K")[(i * 5) % 3 == 0] for i in range(n)],
        }
    )
    data = tmp_path / "people.csv"
    frame.to_csv(data, index=False)
    raw = {
        "input": csv_input(data),
        "attributes": [
            {"name": "age", "kind": "continuous"},
            {"name": hours, "kind": "continuous"},
        ],
        "sensitive": {"name": "income"},
        "algorithm": {
            "name": "perturb",
            "columns": [
                {"name": "age", "noise": "gaussian", "privacy": 0.5},
                {"name": hours, "noise": "uniform", "scale": 4.0},
            ],
        },
        "output": {"path": str(tmp_path / "out"), "format": "csv"},
        "report": {"enabled": False},
        "seed": 13,
    }
    assert run_command(str(write_config(tmp_path, raw)), [], engine_name="local") == EXIT_OK
    return tmp_path / "out"


def test_reconstruct_names_plots_safely_and_keeps_off_the_release(tmp_path: Path, capsys) -> None:
    hours = "../../hours"
    out = _perturbed_release(tmp_path, hours)
    data_before = _tree(out / "data")
    args = ["reconstruct", str(out), "--bins", "5", "--engine", "local"]
    assert main([*args, "--out", str(out / "data")]) == EXIT_USER
    err = capsys.readouterr().err
    assert "--out" in err and "is the release (OUTPUT_DIR" in err, err
    assert _tree(out / "data") == data_before
    assert main(args) == EXIT_OK, capsys.readouterr().err
    folder = out / "reconstruction"
    names = {p.name for p in folder.iterdir()}
    assert {MARKER, "reconstruction.json", "distributions.csv", "age.png"} <= names
    assert safe_file_name(hours) + ".png" in names
    assert not list(tmp_path.rglob("hours*"))
    assert file_modes(folder) == {("dir", 0o700), ("file", 0o600)}


# ---------------------------------------------------------------- the same on Spark


@pytest.mark.spark
def test_spark_output_is_owner_only_and_overwrites_only_its_own(
    spark, tmp_path: Path, capsys
) -> None:
    """Spark's part files and their ``.crc`` files included; the marker lets the next
    overwrite through, an unrelated folder is refused and left as it was."""
    cfg = make_config(
        tmp_path, write_adult_csv(tmp_path, 100), sections={"output": {"mode": "overwrite"}}
    )
    job = str(write_config(tmp_path, cfg))
    out = Path(cfg["output"]["path"])
    old = os.umask(0o022)
    try:
        assert run_command(job, [], "spark") == EXIT_OK, capsys.readouterr().err
        assert any(p.name.endswith(".crc") for p in out.rglob("*"))
        assert file_modes(out) == {("dir", 0o700), ("file", 0o600)}
        assert run_command(job, ["output.permissions=group"], "spark") == EXIT_OK
        assert file_modes(out) == {("dir", 0o750), ("file", 0o640)}
    finally:
        os.umask(old)
    unrelated = tmp_path / "unrelated"
    unrelated.mkdir()
    (unrelated / "keep.txt").write_text("mine", encoding="utf-8")
    code = run_command(job, [f"output.path={unrelated}"], "spark")
    assert code == EXIT_USER
    assert MARKER in capsys.readouterr().err
    assert [p.name for p in unrelated.iterdir()] == ["keep.txt"]


@pytest.mark.spark
def test_spark_sets_modes_through_hadoop_off_the_local_disk(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The HDFS branch (Hadoop's ``mkdirs`` and ``setPermission``), run on Hadoop's local
    filesystem by treating the path as not local."""
    from sparkanon.engine.spark import SparkEngine

    engine = SparkEngine(spark)
    monkeypatch.setattr(engine, "_local_of", lambda path: None)
    root = tmp_path / "out"
    engine.make_dir(str(root), 0o700)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700 and engine.is_directory(str(root))
    (root / "data").mkdir()
    (root / "data" / "part-0.csv").write_text("a\n1\n", encoding="utf-8")
    (root / "metrics.json").write_text("{}", encoding="utf-8")
    engine.set_permissions(f"file://{root}", 0o750, 0o640)
    assert file_modes(root) == {("dir", 0o750), ("file", 0o640)}
    assert not engine.is_directory(str(root / "metrics.json"))
