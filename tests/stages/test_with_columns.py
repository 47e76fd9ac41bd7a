"""``with_columns``: the one-step ``assign`` the per-block step adds its columns with (issue 27)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sparkanon.stages._common import with_columns


def test_with_columns_equals_assign_new_and_replaced_columns() -> None:
    frame = pd.DataFrame({"a": [1, 2, 3], "b": ["x", None, "z"], "c": [0.5, 1.0, 2.0]})
    frame.index = [4, 9, 2]  # a group's rows keep their index
    columns = {
        "b": np.array([7, 8, 9]),  # replaced where it stands
        "_g0": np.array(["[1-2]", None, "*"], dtype=object),
        "_t": np.array([np.nan, 1.5, 0.0]),
    }
    got = with_columns(frame, columns)
    pd.testing.assert_frame_equal(got, frame.assign(**columns))
    assert list(got.columns) == ["a", "b", "c", "_g0", "_t"]
    assert list(frame.columns) == ["a", "b", "c"]  # the input is left as it was
    assert frame["b"].tolist() == ["x", None, "z"]


def test_with_columns_of_an_empty_frame_keeps_the_types() -> None:
    frame = pd.DataFrame({"a": pd.Series([], dtype="int64")})
    got = with_columns(frame, {"n": np.zeros(0, dtype=np.int64)})
    pd.testing.assert_frame_equal(got, frame.assign(n=np.zeros(0, dtype=np.int64)))
