"""Shared pieces of the per-block algorithm tests: encoded frames, the mixed schema, checks.

The property tests of several algorithms (MAA-SLIE, GPKC, MAA-SAE, MDAV, (K,L) clustering,
the kernels) run on random encoded tables with all four kinds of quasi-identifier; the
pieces they share live here, and the ``edu_taxonomy`` and ``mixed_schema`` fixtures of
``tests/conftest.py`` build on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from sparkanon.algorithms.blocks._slie_kernel import NO_JIT_ENV
from sparkanon.attributes.hierarchy import Taxonomy, load_arx_hierarchy
from sparkanon.attributes.kinds import (
    ContinuousKind,
    Kind,
    categorical_kind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.schema import LEVEL, RID, SENS, Schema, SensitiveLevels, code_column
from sparkanon.models import HPKAnonymity


def fast(examples: int = 40) -> settings:
    """Hypothesis settings of the property tests: ``examples`` cases, no deadline."""
    return settings(max_examples=examples, deadline=None)


FAST = fast()

# Taxonomy (depth-first codes): 0 Bachelors, 1 Some-college, 2 Masters, 3 Doctorate,
# 4 11th, 5 HS-grad, 6 5th ; Higher = {0..3} (Undergraduate {0, 1}, Graduate {2, 3}),
# Secondary = {4..6} (HighSchool {4, 5}, Primary {6}).
EDU_ARX = """\
Bachelors;Undergraduate;Higher;*
Masters;Graduate;Higher;*
11th;HighSchool;Secondary;*
Some-college;Undergraduate;Higher;*
Doctorate;Graduate;Higher;*
HS-grad;HighSchool;Secondary;*
5th;Primary;Secondary;*
"""

FIVE_LEVELS = SensitiveLevels(
    name="s",
    values=tuple(f"s{i}" for i in range(10)),
    level_of=np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4]),
    level_names=("l0", "l1", "l2", "l3", "l4"),
    weights=np.array([0.1, 0.2, 0.4, 0.6, 0.8]),
)
"""Ten sensitive values s0..s9, two per level, level weights 0.1 .. 0.8."""


def edu_taxonomy_in(folder: Path) -> Taxonomy:
    """The education taxonomy of :data:`EDU_ARX`, written to ``folder`` and loaded."""
    path = folder / "education.csv"
    path.write_text(EDU_ARX, encoding="utf-8")
    return load_arx_hierarchy(path, "education")


def mixed_schema_of(edu: Taxonomy, sensitive: SensitiveLevels = FIVE_LEVELS) -> Schema:
    """continuous + ordinal (15 ranks) + categorical (7 education leaves) + nominal (3)."""
    kinds: tuple[Kind, ...] = (
        ContinuousKind(name="age", weight=1.0, low=0.0, high=1.0),
        ordinal_kind("grade", 1.0, tuple(f"g{i}" for i in range(15))),
        categorical_kind("education", 1.0, edu),
        nominal_kind("sex", 1.0, ("F", "M", "X")),
    )
    return Schema(kinds=kinds, sensitive=sensitive)


def make_frame(
    rids: np.ndarray, codes: list[np.ndarray], sens: np.ndarray, levels: SensitiveLevels
) -> pd.DataFrame:
    """An encoded block: row ids, one code column per quasi-identifier, value and level."""
    data: dict[str, np.ndarray] = {RID: np.asarray(rids, dtype=np.int64)}
    for i, c in enumerate(codes):
        data[code_column(i)] = np.asarray(c)
    data[SENS] = np.asarray(sens, dtype=np.int64)
    data[LEVEL] = levels.level_of[np.asarray(sens, dtype=np.int64)]
    return pd.DataFrame(data)


def random_codes(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Codes of ``n`` rows for the mixed schema's four quasi-identifiers."""
    return [
        rng.integers(0, 20, n) / 19.0,  # continuous, coarse grid so that ties happen
        rng.integers(0, 15, n),  # ordinal
        rng.integers(0, 7, n),  # categorical
        rng.integers(0, 3, n),  # nominal
    ]


@st.composite
def random_tables(
    draw: st.DrawFn, rows: tuple[int, int] = (10, 120), max_k: int = 12, levels: bool = True
) -> tuple[pd.DataFrame, HPKAnonymity]:
    """A random encoded table of the mixed schema and a model it can host.

    Args:
        draw: hypothesis' draw.
        rows: the least and most rows.
        max_k: the largest k drawn.
        levels: draw H too ((H,p,k)-anonymity); else H = 1 (p-sensitive k-anonymity).
    """
    n = draw(st.integers(*rows))
    seed = draw(st.integers(0, 2**32 - 1))
    n_values = draw(st.integers(1, 10))
    rng = np.random.default_rng(seed)
    codes = random_codes(rng, n)
    domain = rng.choice(10, size=n_values, replace=False)
    sens = rng.choice(domain, size=n)
    rids = rng.choice(10**9, size=n, replace=False)
    frame = make_frame(rids, codes, sens, FIVE_LEVELS)
    k = draw(st.integers(1, min(n, max_k)))
    p = draw(st.integers(1, min(k, frame[SENS].nunique())))
    h = draw(st.integers(1, min(p, frame[LEVEL].nunique()))) if levels else 1
    return frame, HPKAnonymity(k=k, p=p, h=h)


def partition(frame: pd.DataFrame, labels: np.ndarray) -> set[frozenset[int]]:
    """Classes as sets of row ids (label names do not matter)."""
    out: dict[int, set[int]] = {}
    for rid, lab in zip(frame[RID].to_numpy(), labels, strict=True):
        out.setdefault(int(lab), set()).add(int(rid))
    return {frozenset(v) for v in out.values()}


def assert_model_holds(frame: pd.DataFrame, labels: np.ndarray, model: HPKAnonymity) -> None:
    """Independent check: every row labelled, every class with >= k rows, p values, H levels."""
    assert (labels >= 0).all()
    df = pd.DataFrame({"c": labels, "s": frame[SENS].to_numpy(), "l": frame[LEVEL].to_numpy()})
    g = df.groupby("c")
    summary = pd.DataFrame({"n": g.size(), "v": g["s"].nunique(), "lv": g["l"].nunique()})
    bad = summary[(summary.n < model.k) | (summary.v < model.p) | (summary.lv < model.h)]
    assert bad.empty, f"classes violating {model}:\n{bad}"


def both_paths(monkeypatch: pytest.MonkeyPatch, run: Callable[[], Any]) -> tuple[Any, Any]:
    """``run()`` with the compiled kernels, then with ``SPARKANON_NO_JIT=1`` (numpy)."""
    monkeypatch.delenv(NO_JIT_ENV, raising=False)
    compiled = run()
    monkeypatch.setenv(NO_JIT_ENV, "1")
    reference = run()
    monkeypatch.delenv(NO_JIT_ENV)
    return compiled, reference


@dataclass(frozen=True)
class ClassView:
    """One equivalence class's rows: the per-class oracle the batched metrics are held to.

    Computed the plain way, one class at a time, from the kinds' own methods.

    Attributes:
        kinds: the quasi-identifier kinds, in schema order.
        codes: the class's codes of each quasi-identifier.
        sens: the class's sensitive value codes.
        levels: the class's sensitivity level of each row.
        sensitive: the sensitive domain and levels.
        entropy_base: logarithm base of the level entropy (Shi et al. 2024, eq. 1).
    """

    kinds: Sequence[Kind]
    codes: Sequence[np.ndarray]
    sens: np.ndarray
    levels: np.ndarray
    sensitive: SensitiveLevels
    entropy_base: float = 10.0

    @property
    def size(self) -> int:
        """Rows in the class."""
        return len(self.sens)

    @cached_property
    def centroids(self) -> list[float]:
        """Each attribute's centroid code (``kind.centroid``)."""
        return [kind.centroid(c) for kind, c in zip(self.kinds, self.codes, strict=True)]

    @cached_property
    def info_loss(self) -> float:
        """InfoLoss of the class (Shi et al. 2024, eq. 20): weighted sum of attribute losses.

        A kind whose loss is the default (summed distance to the centroid,
        :meth:`Kind.loss`) reuses :attr:`centroids`.
        """
        total = 0.0
        for kind, codes, centre in zip(self.kinds, self.codes, self.centroids, strict=True):
            if type(kind).loss is Kind.loss:
                loss = float(kind.distance_to(codes, centre).sum()) if len(codes) else 0.0
            else:
                loss = kind.loss(codes)
            total += kind.weight * loss
        return float(total)

    @cached_property
    def ncp_by_attribute(self) -> list[float]:
        """Each attribute's NCP (``kind.ncp``), unweighted."""
        return [float(kind.ncp(c)) for kind, c in zip(self.kinds, self.codes, strict=True)]
