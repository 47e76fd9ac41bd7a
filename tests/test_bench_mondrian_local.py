"""experiments/bench_mondrian_local.py: both tools get the same rows (issue 27).

Gong's reader (utils/read_adult_data.py) strips a line, skips it when it holds a ``?``,
removes spaces and splits on commas; the script must drop exactly the rows it would skip
and write the others so that they read back as the Parquet rows sparkanon gets.
"""

from __future__ import annotations

import importlib

import pandas as pd


def _script():  # noqa: ANN202 - a module
    return importlib.import_module("experiments.bench_mondrian_local")


def _frame(bench) -> pd.DataFrame:  # noqa: ANN001
    row = {
        "age": 39,
        "workclass": "State-gov",
        "fnlwgt": 77516,
        "education": "Bachelors",
        "education-num": 13,
        "marital-status": "Never-married",
        "occupation": "Adm-clerical",
        "relationship": "Not-in-family",
        "race": "White",
        "sex": "Male",
        "capital-gain": 2174,
        "capital-loss": 0,
        "hours-per-week": 40,
        "native-country": "United-States",
        "income": "<=50K",
    }
    rows = [dict(row), dict(row, workclass="?"), dict(row, occupation=None), dict(row, age=50)]
    rows.append(dict(row, **{"native-country": "?x"}))
    return pd.DataFrame(rows)[bench.UCI_COLUMNS]


def test_complete_rows_are_the_rows_gongs_reader_keeps() -> None:
    bench = _script()
    frame = _frame(bench)
    kept = bench.complete_rows(frame)
    assert kept["age"].tolist() == [39, 50]
    lines = bench.gong_lines(kept)
    parsed = [line.strip().replace(" ", "").split(",") for line in lines if "?" not in line]
    assert len(parsed) == len(kept)
    expected = kept.astype(str).to_numpy().tolist()
    assert parsed == expected
    # Gong's loader reads age (0) and education-num (4) as integers, the demo's QI indices.
    assert bench.DEMO_QI["QI_INDEX"] == [0, 1, 4, 5, 8, 9, 13]
    assert [bench.UCI_COLUMNS[i] for i in bench.DEMO_QI["QI_INDEX"]] == [
        "age",
        "workclass",
        "education-num",
        "marital-status",
        "race",
        "sex",
        "native-country",
    ]
