"""Issue 39, finding 3: a release's ``config.yaml`` publishes no credential.

The config a job ran used to be written beside the data as given: reader options such
as ``fs.s3a.secret.key`` or a JDBC ``password`` (``--set input.options=...``) and the
user information of an ``s3a://KEY:SECRET@bucket/`` path appeared verbatim in the
release. It is now written from an allow-list (:mod:`sparkanon.config.published`); these
tests scan every byte of a committed release for the secrets and check that what a
reader needs (the parsing options, the paths without credentials) is still there.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from sparkanon.cli import main
from sparkanon.config import InputConfig, JobConfig, OutputConfig
from sparkanon.config.published import (
    ALL,
    HARMLESS_OPTIONS,
    PUBLISHED_KEYS,
    config_sha256,
    harmless_options,
    published_config,
    published_config_yaml,
    strip_uri_secrets,
)
from sparkanon.config.schema import StreamConfig
from sparkanon.errors import EXIT_OK
from sparkanon.families import load_config, parse_config
from tests._inputs import ROOT, make_config, rt_frame, rt_long_config, write_adult_csv

SECRETS = ("S3cretS3aValue", "hunter2Passw0rd", "AKIAEXAMPLEKEYID", "tok3nValue")
"""Values a user put in the config that no file of a release may hold."""

VERIFY = ["-m", "sparkanon.tools.verify_release"]


def release_bytes(out: Path) -> dict[str, bytes]:
    """Every file of a committed release, by its path under ``out``."""
    return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}


@pytest.mark.report
def test_secret_options_are_in_no_file_of_the_release(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 300))
    cfg["report"] = {"enabled": True}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    options = (
        '{"header": true, "sep": ",", "fs.s3a.secret.key": "S3cretS3aValue", '
        'password: hunter2Passw0rd, "fs.s3a.access.key": AKIAEXAMPLEKEYID, '
        '"spark.hadoop.fs.azure.sas.token": tok3nValue}'
    )
    args = ["run", str(path), "--set", f"input.options={options}", "--engine", "local", "--quiet"]
    code = main(args)
    assert code == EXIT_OK
    out = Path(cfg["output"]["path"])
    files = release_bytes(out)
    assert {"config.yaml", "metrics.json", "evaluation.json", "report.html"} <= set(files)
    for name, data in files.items():
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret} in {name}"
            assert secret.lower().encode() not in data.lower(), f"{secret} in {name}"
    written = yaml.safe_load(files["config.yaml"])
    assert written["input"]["options"] == {"header": True, "sep": ","}
    # The release still loads as a config and verifies against it.
    assert parse_config(written, "config.yaml").input.options == {"header": True, "sep": ","}
    check = subprocess.run(
        [sys.executable, *VERIFY, str(out)], capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr


def _with_paths(tmp_path: Path) -> JobConfig:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 20))
    secret_path = "s3a://AKIAEXAMPLEKEYID:S3cret/S3a+Value@bucket/adult/?X-Amz-Signature=tok3nValue"
    cfg["input"]["path"] = secret_path
    cfg["input"]["options"] = {
        "HEADER": True,
        "encoding": "utf-8",
        "nullValue": "hunter2Passw0rd-token",  # a harmless name with a secret-looking value
        "user": "alice",
        "url": "jdbc:postgresql://db/x?password=hunter2Passw0rd",
    }
    cfg["output"]["path"] = "s3a://AKIAEXAMPLEKEYID:S3cretS3aValue@bucket/out"
    cfg["report"] = {"enabled": True, "holdout": "gs://bucket/holdout.csv?token=tok3nValue"}
    return parse_config(cfg, "job.yaml")


def test_paths_lose_their_credentials_and_options_only_parsing(tmp_path: Path) -> None:
    config = _with_paths(tmp_path)
    text = published_config_yaml(config)
    for secret in (*SECRETS, "S3cret/S3a+Value", "alice", "postgresql"):
        assert secret not in text
    written = yaml.safe_load(text)
    assert written["input"]["path"] == "s3a://bucket/adult/"
    assert written["output"]["path"] == "s3a://bucket/out"
    assert written["report"]["holdout"] == "gs://bucket/holdout.csv"
    assert written["input"]["options"] == {"HEADER": True, "encoding": "utf-8"}
    # Hierarchy paths (local files) and the typed sections are published as they are.
    again = parse_config(written, "config.yaml")
    assert again.attributes == config.attributes and again.model == config.model
    assert again.algorithm == config.algorithm
    # The table properties' hash is of the published text: no password to test against it.
    assert config_sha256(config) == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(
    ("path", "published"),
    [
        ("s3a://AKIA:se/cr+et@bucket/x?sig=1", "s3a://bucket/x"),
        ("s3a://user@bucket/x#part", "s3a://bucket/x"),
        ("hdfs://namenode:8020/data/a@b.csv", "hdfs://namenode:8020/data/a@b.csv"),
        ("s3a://bucket/people/a@b.com/x.csv", "s3a://bucket/people/a@b.com/x.csv"),
        ("abfss://box@acct.dfs.core.windows.net/x", "abfss://box@acct.dfs.core.windows.net/x"),
        ("wasbs://box:KEY@acct.blob.core.windows.net/x", "wasbs://acct.blob.core.windows.net/x"),
        ("data/adult/adult.csv", "data/adult/adult.csv"),
        ("/tmp/what?.csv", "/tmp/what?.csv"),
    ],
)
def test_strip_uri_secrets(path: str, published: str) -> None:
    assert strip_uri_secrets(path) == published


def test_only_harmless_options_without_secret_values() -> None:
    given = {
        "header": "true",
        "Sep": "|",
        "dateFormat": "yyyy-MM-dd",
        "quote": '"',
        "fs.s3a.secret.key": "x",
        "password": "x",
        "spark.hadoop.fs.s3a.session.token": "x",
        "nullValue": "my-api-KEY",
        "escape": "\\",
    }
    assert harmless_options(given) == {
        "header": "true",
        "Sep": "|",
        "dateFormat": "yyyy-MM-dd",
        "quote": '"',
        "escape": "\\",
    }
    assert not any(word in name for name in HARMLESS_OPTIONS for word in ("key", "secret"))


def test_typed_keys_named_key_are_not_taken_for_secrets(tmp_path: Path) -> None:
    # The long item table's join column is ``sensitive.long.key``: a config key, not an
    # option; only its free-form options map is filtered.
    cfg = rt_long_config(tmp_path, rt_frame(40, 1))
    cfg["sensitive"]["long"]["options"] = {"header": True, "fs.s3a.secret.key": "S3cretS3aValue"}
    written = published_config(parse_config(cfg, "job.yaml"))
    long = written["sensitive"]["long"]
    assert long["key"] == "id" and long["options"] == {"header": True}


def test_every_config_key_is_published_or_withheld_on_purpose() -> None:
    # A key the schema gains is withheld until PUBLISHED_KEYS lists it: this test says
    # which sections take the decision key by key.
    assert set(PUBLISHED_KEYS) == set(JobConfig.model_fields)
    by_key = {"input": InputConfig, "output": OutputConfig, "stream": StreamConfig}
    for section, keys in PUBLISHED_KEYS.items():
        if keys is ALL:
            assert section not in by_key
            continue
        assert set(keys) <= set(by_key[section].model_fields), section


def test_every_bundled_config_publishes_its_harmless_options() -> None:
    for path in sorted((ROOT / "conf").glob("*.yaml")):
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        options = (raw.get("input") or {}).get("options") or {}
        written = published_config(load_config(path))
        assert written["input"].get("options", {}) == harmless_options(options), path
        assert pd.notna(written["input"].get("path") or written["input"].get("table"))


def test_table_properties_hold_no_option(tmp_path: Path) -> None:
    from sparkanon.stages.commit import TableTarget

    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 20))
    del cfg["input"]["path"]
    cfg["input"] |= {"format": "parquet", "table": "db.adult", "partition": {"ds": "2026-11-23"}}
    cfg["input"]["options"] = {"fs.s3a.secret.key": "S3cretS3aValue", "password": "x"}
    cfg["output"] = {"table": "db.adult_anon"}
    target = object.__new__(TableTarget)  # properties() reads the config alone, no catalog
    target.config, target.spec = parse_config(cfg, "job.yaml"), {"ds": "2026-11-23"}
    metrics = {"model": {"k": 4}, "algorithm": {"name": "maa_slie"}, "verified": True}
    props = target.properties(metrics)
    text = " ".join(f"{k}={v}" for k, v in props.items())
    assert "S3cretS3aValue" not in text and "password" not in text
    assert props["sparkanon.config_sha256"] == config_sha256(target.config)


def test_the_report_names_the_output_without_its_credentials(tmp_path: Path) -> None:
    from sparkanon.engine.local import LocalEngine
    from sparkanon.evaluation.evaluate import evaluate_run
    from sparkanon.stages._common import StageTimer
    from sparkanon.stages.read import read_input

    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 60))
    cfg["output"]["path"] = "s3a://AKIAEXAMPLEKEYID:S3cretS3aValue@bucket/out"
    config = parse_config(cfg, "job.yaml")
    engine = LocalEngine()
    rows = read_input(engine, config, StageTimer(engine)).original
    staging = tmp_path / "staging"
    evaluation = evaluate_run(engine, config, rows, {"data": rows}, {}, str(staging))
    assert evaluation["table"]["source"] == "s3a://bucket/out"
    for name in ("evaluation.json", "report.html"):
        text = (staging / name).read_text(encoding="utf-8")
        assert "S3cretS3aValue" not in text and "AKIAEXAMPLEKEYID" not in text
