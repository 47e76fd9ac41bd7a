"""Privacy models: (H,p,k)-anonymity (seed 000 definition 7) and its special cases."""

from __future__ import annotations

import numpy as np
import pytest

from sparkanon.models.base import HPKAnonymity, model_from_config


def test_hpk_satisfied_vectorised() -> None:
    model = HPKAnonymity(k=3, p=2, h=2)
    size = np.array([3, 2, 3, 4, 3, 10])
    values = np.array([2, 2, 1, 3, 2, 5])
    levels = np.array([2, 2, 2, 1, 3, 2])
    got = model.satisfied(size, values, levels)
    # row 0: all at the bound -> ok; row 1: 2 < k; row 2: 1 < p; row 3: 1 < H; rows 4, 5 ok
    assert got.dtype == bool
    assert got.tolist() == [True, False, False, False, True, True]


def test_hpk_table3_classes() -> None:
    # Table 3 is (2,2,2)-anonymous: every class has 2 rows, 2 values and 2 levels.
    model = HPKAnonymity(k=2, p=2, h=2)
    assert model.satisfied(np.full(4, 2), np.full(4, 2), np.full(4, 2)).all()
    # Table 2 (2-sensitive 2-anonymous) class {HIV, Cancer} has a single (high) level.
    assert model.satisfied(np.array([2]), np.array([2]), np.array([1])).tolist() == [False]
    assert HPKAnonymity(k=2, p=2, h=1).satisfied(np.array([2]), np.array([2]), np.array([1])).all()


def test_hpk_accepts_lists_and_empty() -> None:
    model = HPKAnonymity(k=2)
    assert model.satisfied([1, 2], [1, 1], [1, 1]).tolist() == [False, True]
    assert (
        model.satisfied(
            np.array([], dtype=int), np.array([], dtype=int), np.array([], dtype=int)
        ).size
        == 0
    )


def test_hpk_defaults_are_k_anonymity() -> None:
    model = HPKAnonymity(k=4)
    assert (model.p, model.h) == (1, 1)
    assert model.satisfied(np.array([4, 3]), np.array([1, 9]), np.array([1, 9])).tolist() == [
        True,
        False,
    ]
    assert HPKAnonymity.monotonic is True


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("hpk", {"name": "hpk", "k": 5, "p": 3, "h": 2}),
        ("p_sensitive", {"name": "p_sensitive", "k": 5, "p": 3, "h": 1}),
        ("k", {"name": "k", "k": 5, "p": 1, "h": 1}),
    ],
)
def test_model_from_config(name: str, expected: dict[str, object]) -> None:
    model = model_from_config(name, 5, 3, 2)
    assert isinstance(model, HPKAnonymity)
    assert model.describe() == expected
    assert (model.k, model.p, model.h, model.name) == (
        expected["k"],
        expected["p"],
        expected["h"],
        expected["name"],
    )


def test_model_from_config_semantics() -> None:
    # A class of 5 rows, 3 values, 1 level: fails hpk (H = 2), passes p_sensitive and k.
    args = (np.array([5]), np.array([3]), np.array([1]))
    assert not model_from_config("hpk", 5, 3, 2).satisfied(*args).any()
    assert model_from_config("p_sensitive", 5, 3, 2).satisfied(*args).all()
    # 5 rows, 1 value: only k-anonymity holds.
    args = (np.array([5]), np.array([1]), np.array([1]))
    assert not model_from_config("p_sensitive", 5, 3, 2).satisfied(*args).any()
    assert model_from_config("k", 5, 3, 2).satisfied(*args).all()


def test_models_are_frozen() -> None:
    model = HPKAnonymity(k=2)
    with pytest.raises(AttributeError):
        model.k = 3  # type: ignore[misc]
