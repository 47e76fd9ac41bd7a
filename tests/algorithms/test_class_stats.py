"""The per-class accumulator (sparkanon.algorithms._classes.ClassStats).

Every score it gives for many classes at once must equal the per-class definition
(``kind.loss``, ``kind.ncp``, the entropies), with and without added rows, and the
accumulator must merge: merging two classes, or adding rows one by one, gives the
statistics of the union built at once; removing a row undoes adding it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms import BlockContext
from sparkanon.algorithms._block import Block
from sparkanon.algorithms._classes import ClassStats
from sparkanon.attributes.kinds import ContinuousKind, nominal_kind, ordinal_kind
from sparkanon.attributes.schema import Schema, SensitiveLevels
from sparkanon.metrics.entropy import class_level_entropy, sensitive_entropy
from sparkanon.metrics.ncp import class_ncp
from sparkanon.models import HPKAnonymity
from tests._helpers import make_frame

LEVELS = SensitiveLevels(
    "s",
    tuple(f"s{i}" for i in range(6)),
    np.array([0, 0, 1, 1, 2, 2]),
    ("a", "b", "c"),
    np.array([0.1, 0.4, 0.8]),
)
SCHEMA = Schema(
    kinds=(
        ContinuousKind("x", 1.0, 0.0, 1.0),
        ordinal_kind("g", 2.0, tuple("abcdef")),
        nominal_kind("n", 0.5, ("p", "q", "r"), "vector"),
    ),
    sensitive=LEVELS,
)


@st.composite
def blocks(draw: st.DrawFn) -> tuple[Block, np.ndarray, int]:
    n = draw(st.integers(6, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    frame = make_frame(
        np.arange(n),
        [rng.random(n).round(3), rng.integers(0, 6, n), rng.integers(0, 3, n)],
        rng.integers(0, 6, n),
        LEVELS,
    )
    m = draw(st.integers(1, min(5, n)))
    labels = np.concatenate([np.arange(m), rng.integers(-1, m, n - m)])
    ctx = BlockContext(schema=SCHEMA, model=HPKAnonymity(k=1))
    return Block(frame, ctx), labels, m


def by_definition(block: Block, rows: np.ndarray) -> tuple[float, float, float, float]:
    """InfoLoss, NCP, Ent and HEC of one class, one class at a time."""
    codes = [c[rows] for c in block.codes]
    loss = sum(k.weight * k.loss(c) for k, c in zip(block.kinds, codes, strict=True))
    ent = float(sensitive_entropy(np.bincount(block.sens[rows], minlength=6)))
    hec = float(class_level_entropy(np.bincount(block.level[rows], minlength=3), LEVELS.weights))
    return loss, class_ncp(block.kinds, codes), ent, hec


@settings(max_examples=60, deadline=None)
@given(blocks())
def test_scores_equal_the_per_class_definitions(case) -> None:
    block, labels, m = case
    stats = ClassStats.from_labels(block, labels, m)
    ids = np.arange(m)
    for c in ids:
        loss, ncp, _, _ = by_definition(block, np.flatnonzero(labels == c))
        assert stats.loss[c] == pytest.approx(loss, abs=1e-9)
        assert stats.ncp(np.array([c]))[0] == pytest.approx(ncp, abs=1e-12)
    # With row 0 added to every class.
    row = [codes[0:1] for codes in block.codes]
    grown = stats.losses(ids, row)
    split = stats.hist_losses(ids, row) + stats.member_losses(ids, row)
    np.testing.assert_allclose(grown, split, atol=1e-9)
    for c in ids:
        rows = np.append(np.flatnonzero(labels == c), 0)
        loss, ncp, ent, hec = by_definition(block, rows)
        assert grown[c] == pytest.approx(loss, abs=1e-9)
        assert stats.ncp(np.array([c]), [codes[0] for codes in block.codes])[0] == pytest.approx(
            ncp
        )
        assert stats.entropies(np.array([c]), block.sens[0:1])[0] == pytest.approx(ent)
        assert stats.hec_with_level(np.array([c]), int(block.level[0]))[0] == pytest.approx(hec)
    summaries = stats.summaries(ids)
    assert summaries.size.tolist() == [int((labels == c).sum()) for c in ids]


@settings(max_examples=60, deadline=None)
@given(blocks())
def test_merging_and_adding_rows_equal_building_the_union(case) -> None:
    block, labels, m = case
    union = labels.copy()
    union[union == m - 1] = 0  # the last class merged into the first
    stats = ClassStats.from_labels(block, labels, m)
    if m > 1:
        stats.merge(0, m - 1)
    built = ClassStats.from_labels(block, np.where(union == m - 1, 0, union), max(m - 1, 1))
    ids = np.array([0])
    assert stats.losses(ids)[0] == pytest.approx(built.losses(ids)[0], abs=1e-9)
    assert stats.ncp(ids)[0] == pytest.approx(built.ncp(ids)[0])
    np.testing.assert_array_equal(stats.sens_counts[0], built.sens_counts[0])
    assert list(stats.ids()) == [c for c in range(m) if c != m - 1 or m == 1]
    # Adding the unplaced rows one by one, then removing them, restores the class.
    before = (stats.losses(ids)[0], stats.size[0], stats.sens_counts[0].copy())
    extra = np.flatnonzero(labels < 0)
    for i in extra:
        stats.add_rows(
            0, [c[i : i + 1] for c in block.codes], block.sens[i : i + 1], block.level[i : i + 1]
        )
    assert stats.size[0] == before[1] + len(extra)
    for i in extra[::-1]:
        stats.remove_row(0, [c[i] for c in block.codes], int(block.sens[i]), int(block.level[i]))
    assert stats.size[0] == before[1]
    assert stats.losses(ids)[0] == pytest.approx(before[0], abs=1e-9)
    np.testing.assert_array_equal(stats.sens_counts[0], before[2])


OPS = st.sampled_from(["add", "remove", "merge", "retire", "new"])


@settings(max_examples=60, deadline=None)
@given(blocks(), st.lists(st.tuples(OPS, st.integers(0, 2**16)), max_size=40))
def test_kept_ranges_equal_the_members_ranges(case, steps) -> None:
    """After any sequence of changes, each class's kept range is its members' min and max."""
    block, labels, m = case
    stats = ClassStats.from_labels(block, labels, m)
    rows = {c: list(np.flatnonzero(labels == c)) for c in range(m)}  # block rows per class

    def one(i: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        return [c[i : i + 1] for c in block.codes], block.sens[i : i + 1], block.level[i : i + 1]

    for op, pick in steps:
        live = stats.ids()
        c = int(live[pick % len(live)])
        other = int(live[(pick + 1) % len(live)])
        if op == "add":
            stats.add_rows(c, *one(pick % block.n))
            rows[c].append(pick % block.n)
        elif op == "new":
            rows[stats.add_class(*one(pick % block.n))] = [pick % block.n]
        elif op == "remove" and len(rows[c]) > 1:
            i = rows[c].pop(pick % len(rows[c]))
            stats.remove_row(c, [codes[i] for codes in block.codes], block.sens[i], block.level[i])
        elif op == "merge" and other != c:
            stats.merge(c, other)
            rows[c] += rows.pop(other)
        elif op == "retire" and len(live) > 1:
            stats.retire(c)
            rows.pop(c)
    assert sorted(rows) == list(stats.ids())
    for c in range(stats.m):  # every slot, retired ones too: the range of what it holds
        for a, own in enumerate(stats.members):
            if own[c].size:
                assert (stats.lo[a][c], stats.hi[a][c]) == (own[c].min(), own[c].max())
            else:
                assert stats.lo[a][c] > stats.hi[a][c]  # empty: no range
    for c, members in rows.items():
        codes = [codes[members] for codes in block.codes]
        for a, own in enumerate(codes):
            assert stats.lo[a][c] == own.min() == stats.members[a][c].min()
            assert stats.hi[a][c] == own.max() == stats.members[a][c].max()
        assert stats.ncp(np.array([c]))[0] == class_ncp(block.kinds, codes)
        if len(members) > 1:
            rest = [np.delete(own, 0) for own in codes]
            first = [own[0] for own in codes]
            assert stats.ncp_without(c, first) == class_ncp(block.kinds, rest)
