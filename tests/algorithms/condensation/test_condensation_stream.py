"""Dynamic condensation, pure (sparkanon.algorithms.condensation.stream)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms.condensation.group_stats import GroupStats
from sparkanon.algorithms.condensation.stream import (
    StreamGroups,
    assign_records,
    due_for_release,
    initial_groups,
    mark_released,
)

ONE = np.ones(1)


def _groups_1d(*members: list[float], born: int = 0) -> StreamGroups:
    """1-D groups from their members (ids 0, 1, ...)."""
    stats = [GroupStats.of(np.array(m, dtype=float)[:, None]) for m in members]
    n = len(stats)
    return StreamGroups(stats, [0] * n, [born] * n, list(range(n)))


def test_records_join_nearest_centroid_and_a_2k_group_splits_by_hand():
    # k = 2: groups {0, 2} (centroid 1) and {10, 12} (centroid 11). Records 3 -> group 0
    # (centroid 5/3), 9 -> group 1 (31/3), 1 -> group 0: 4 = 2k records {0, 2, 3, 1}, mean 1.5,
    # variance (2.25 + 0.25 + 2.25 + 0.25) / 4 = 1.25: split into means 1.5 -+ sqrt(3.75) / 2
    # (R / 4 = sqrt(12 * 1.25) / 4 = 0.968), ids 2 (plus side) and 3; then 0.2 -> id 3's
    # centroid 0.532 (id 2's is 2.468).
    groups = _groups_1d([0.0, 2.0], [10.0, 12.0])
    out, ids, next_id, splits = assign_records(
        groups, np.array([[3.0], [9.0], [1.0], [0.2]]), 2, ONE, 2, batch_index=5
    )
    assert ids.tolist() == [0, 1, 0, 3]
    assert (next_id, splits) == (4, 1)
    assert out.ids == [2, 1, 3]
    assert [s.count for s in out.stats] == [2, 3, 3]
    r4 = np.sqrt(12 * 1.25) / 4
    assert out.stats[0].mean()[0] == pytest.approx(1.5 + r4)
    # Child 3 got 2 records from the split and the record 0.2.
    minus = GroupStats.from_moments(2, [1.5 - r4], [[1.25 / 4]]).add(np.array([[0.2]]))
    np.testing.assert_allclose(out.stats[2].sums, minus.sums)
    np.testing.assert_allclose(out.stats[2].products, minus.products)
    assert out.born == [5, 0, 5]
    assert out.last_release == [0, 0, 0]
    # The input is not modified.
    assert [s.count for s in groups.stats] == [2, 2]


def test_scale_decides_the_nearest_group():
    a = GroupStats.of(np.array([[0.0, 0.0], [0.0, 0.0]]))
    b = GroupStats.of(np.array([[10.0, 10.0], [10.0, 10.0]]))
    groups = StreamGroups([a, b], [0, 0], [0, 0], [0, 1])
    record = np.array([[4.0, 9.0]])  # nearer b in raw units (|(6, 1)| < |(4, 9)|)
    _, ids, _, _ = assign_records(groups, record, 5, np.ones(2), 2)
    assert ids.tolist() == [1]
    _, ids, _, _ = assign_records(groups, record, 5, np.array([1.0, 100.0]), 2)
    assert ids.tolist() == [0]  # column 1 shrunk: the x distance (4 vs 6) decides


def test_release_trigger_and_age_inherited_by_split_children():
    groups = _groups_1d([0.0, 1.0, 2.0], [10.0, 11.0], [20.0, 21.0])
    groups = mark_released(groups, [1], batch_index=3)
    assert groups.released == [0, 2, 0] and groups.last_release == [0, 3, 0]
    assert groups.pending().tolist() == [3, 0, 2]
    assert due_for_release(groups, 4, min_pending=3, max_age=10) == [0]
    # Ages at batch 4: 4, 1, 4; pending 3, 0, 2.
    assert due_for_release(groups, 4, min_pending=5, max_age=4) == [0, 2]
    assert due_for_release(groups, 4, min_pending=5, max_age=5) == []
    # A record joins group 1 (released, last release 3): pending 1, age 1 at batch 4.
    grown, _, _, _ = assign_records(groups, np.array([[10.5]]), 5, ONE, 3, batch_index=4)
    assert due_for_release(grown, 4, min_pending=1, max_age=100) == [0, 1, 2]
    assert due_for_release(grown, 4, min_pending=2, max_age=1) == [0, 1, 2]
    assert due_for_release(grown, 4, min_pending=4, max_age=2) == [0, 2]
    # k = 2: group 0 (3 records, never released, clock at 0) reaches 4 and splits; the
    # children keep the clock 0 and split the released count (0 -> 0, 0).
    split, _, _, n = assign_records(groups, np.array([[1.5]]), 2, ONE, 3, batch_index=7)
    assert n == 1 and split.last_release == [0, 3, 0, 0] and split.born == [7, 0, 0, 7]
    with pytest.raises(ValueError, match="min_pending"):
        due_for_release(groups, 0, 0, 1)


def test_split_shares_the_released_count():
    groups = _groups_1d([0.0, 1.0, 2.0])
    groups = mark_released(groups, [0], batch_index=1)  # 3 released
    out, _, _, n = assign_records(groups, np.array([[1.0]]), 2, ONE, 1)
    assert n == 1
    assert [s.count for s in out.stats] == [2, 2] and out.released == [1, 2]
    assert out.born == [0, 0]  # no batch index: children keep the parent's


def test_initial_groups_and_bad_input():
    x = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2], [5.3]])
    groups, ids, next_id = initial_groups(x, 3, seed=1, scale=ONE, first_id=10)
    assert next_id == 12 and sorted(groups.ids) == [10, 11]
    assert sorted(s.count for s in groups.stats) == [3, 4]
    assert set(ids[:3].tolist()) != set(ids[3:].tolist())
    with pytest.raises(ValueError, match="no groups"):
        assign_records(StreamGroups([], [], [], []), x, 3, ONE, 0)
    with pytest.raises(ValueError, match="scale"):
        assign_records(groups, x, 3, np.zeros(1), 0)
    with pytest.raises(ValueError, match="released"):
        StreamGroups(groups.stats, [9, 0], [0, 0], [0, 1])
    with pytest.raises(ValueError, match="cannot form"):
        initial_groups(x[:2], 3, seed=1, scale=ONE)


def test_batches_do_not_change_the_result():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(60, 2))
    groups, _, nid = initial_groups(x[:12], 3, seed=4, scale=np.ones(2))
    whole, ids_whole, nid_whole, s_whole = assign_records(groups, x[12:], 3, np.ones(2), nid)
    part, ids_a, nid_a, s_a = assign_records(groups, x[12:30], 3, np.ones(2), nid)
    part, ids_b, nid_b, s_b = assign_records(part, x[30:], 3, np.ones(2), nid_a)
    assert whole.ids == part.ids and nid_whole == nid_b and s_whole == s_a + s_b > 0
    assert np.concatenate([ids_a, ids_b]).tolist() == ids_whole.tolist()
    for a, b in zip(whole.stats, part.stats, strict=True):
        np.testing.assert_allclose(a.sums, b.sums, rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 4),
    st.lists(st.integers(0, 25), min_size=1, max_size=6),
    st.integers(0, 10**6),
    st.integers(1, 5),
    st.integers(0, 3),
)
def test_accounting_invariant(k, batch_sizes, seed, min_pending, max_age):
    rng = np.random.default_rng(seed)
    d = 2
    first = rng.normal(size=(k + seed % 7, d)) * [1, 50]
    scale = np.array([1.0, 50.0])
    groups, _, next_id = initial_groups(first, k, seed, scale)
    assigned = first.shape[0]
    n_groups = len(groups.stats)
    for b, size in enumerate(batch_sizes, start=1):
        x = rng.normal(size=(size, d)) * [1, 50] + rng.integers(-3, 4)
        before = sum(s.count for s in groups.stats)
        groups, ids, new_next, splits = assign_records(groups, x, k, scale, next_id, batch_index=b)
        assigned += size
        n_groups += splits
        assert new_next == next_id + 2 * splits
        next_id = new_next
        assert sum(s.count for s in groups.stats) == before + size == assigned
        assert len(groups.stats) == n_groups and len(set(groups.ids)) == n_groups
        assert ids.shape == (size,)
        for s, r in zip(groups.stats, groups.released, strict=True):
            assert k <= s.count <= 2 * k - 1
            assert 0 <= r <= s.count
        due = due_for_release(groups, b, min_pending, max_age)
        pending = groups.pending()
        assert all(pending[p] > 0 for p in due)
        groups = mark_released(groups, due, b)
        assert all(groups.pending()[p] == 0 for p in due)
    total_released = sum(groups.released)
    assert total_released + int(groups.pending().sum()) == assigned


@pytest.mark.parametrize("k", [2, 5])
def test_compiled_search_assigns_as_the_numpy_path(k, monkeypatch):
    # Every group present twice and values on a coarse grid: records tie between
    # centroids and centroids share the sorted coordinate, so the ties (lowest position)
    # and the pruned walk of the compiled search (_assign_kernel) are exercised; both paths
    # must give the same group to every record, the same splits and the same sums.
    pytest.importorskip("numba")
    rng = np.random.default_rng(k)
    scale = np.array([1.0, 2.0, 0.5])
    x0 = np.round(rng.normal(size=(40, 3)), 1)
    x = np.round(rng.normal(size=(800, 3)) * [1, 3, 1], 0)
    seeded, _, nid = initial_groups(x0, k, seed=1, scale=scale, shift=x0.mean(axis=0))
    # every group twice (the copy later): a record's nearest centroid always ties
    n = len(seeded.stats)
    twice = [GroupStats(s.count, s.sums.copy(), s.products.copy(), s.shift) for s in seeded.stats]
    groups = StreamGroups(seeded.stats + twice, [0] * 2 * n, [0] * 2 * n, list(range(2 * n)))
    nid = 2 * n
    results = []
    for no_jit in ("1", "0"):
        monkeypatch.setenv("SPARKANON_NO_JIT", no_jit)
        results.append(assign_records(groups, x, k, scale, nid, batch_index=1))
    (a, ids_a, nid_a, s_a), (b, ids_b, nid_b, s_b) = results
    assert s_a == s_b > 10 and nid_a == nid_b
    assert ids_a.tolist() == ids_b.tolist()
    assert a.ids == b.ids and a.released == b.released and a.born == b.born
    for p, q in zip(a.stats, b.stats, strict=True):
        assert p.count == q.count
        assert np.array_equal(p.sums, q.sums) and np.array_equal(p.products, q.products)


def test_a_release_waits_for_least_pending_records():
    groups = _groups_1d([0.0, 1.0, 2.0], [10.0, 11.0], [20.0, 21.0])
    # pending 3, 2, 2; every age at batch 9 is 9 >= max_age 0: only least holds them back
    assert due_for_release(groups, 9, min_pending=1, max_age=0, least=1) == [0, 1, 2]
    assert due_for_release(groups, 9, min_pending=1, max_age=0, least=3) == [0]
    assert due_for_release(groups, 9, min_pending=1, max_age=0, least=4) == []
    with pytest.raises(ValueError, match="least"):
        due_for_release(groups, 9, 1, 0, least=0)


def _step_run(k: int, batches: list[np.ndarray], key: object, age: int = 0) -> list:
    """The stream step over batches of records: (state before, state after, output) each."""
    import pandas as pd

    from sparkanon.families.synthesis.condense_stream import StreamState, StreamStep, initial_state

    rng = np.random.default_rng(0)
    state = initial_state(rng.normal(size=(6 * k, 2)) * [1.0, 40.0] + [30, 500], k, seed=1)
    step = StreamStep(("a", "b"), k, key, release_pending=k, release_age=age, alpha=1e-9)
    data = state.to_bytes()
    runs = []
    for x in batches:
        before = StreamState.from_bytes(data)
        data, out = step(0, data, pd.DataFrame({"a": x[:, 0], "b": x[:, 1]}))
        runs.append((before, StreamState.from_bytes(data), out))
    return runs


def test_stream_releases_no_ids_and_no_difference_isolates_fewer_than_k():
    """The review's differencing attack: one record arriving after a known release.

    With the age trigger at 0 a group used to release every batch, so two successive
    releases of one group differed by the one record just arrived (``n2 m2 - n1 m1``).
    Now a release stands for at least ``k`` new records, carries no group or batch id,
    and every group's released count moves by 0 or at least ``k``.
    """
    from sparkanon.randomness import RunKey

    k = 4
    rng = np.random.default_rng(3)
    batches = [rng.normal(size=(1, 2)) * [1.0, 40.0] + [30, 500] for _ in range(60)]
    runs = _step_run(k, batches, RunKey(bytes(range(32)), "user", "test"))
    released_any = False
    for before, after, out in runs:
        assert list(out.columns) == ["a", "b"]
        assert len(out) == 0 or len(out) >= k
        old = dict(zip(before.groups.ids, before.groups.released, strict=True))
        for gid, count, done in zip(
            after.groups.ids,
            [s.count for s in after.groups.stats],
            after.groups.released,
            strict=True,
        ):
            if gid in old and done != old[gid]:
                assert done - old[gid] >= k, (gid, old[gid], done)
                released_any = True
            if gid not in old and done:
                # a split child: its released share was inherited, or it released >= k now
                assert done <= count
        # no single record is derivable from the difference of two successive outputs:
        # a release's total is never one new record's value
        for rec in batches:
            if len(out):
                assert not np.allclose(out.to_numpy().sum(axis=0), rec[0])
    assert released_any


def test_stream_draws_follow_the_key():
    from sparkanon.randomness import RunKey

    rng = np.random.default_rng(5)
    batches = [rng.normal(size=(5, 2)) * [1.0, 40.0] + [30, 500] for _ in range(6)]
    one = [r[2] for r in _step_run(3, batches, RunKey(bytes(32), "user", "a"))]
    same = [r[2] for r in _step_run(3, batches, RunKey(bytes(32), "user", "a"))]
    other = [r[2] for r in _step_run(3, batches, RunKey(bytes([1]) * 32, "user", "b"))]
    assert sum(len(o) for o in one) > 0
    for a, b, c in zip(one, same, other, strict=True):
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
        assert len(a) == len(c)
        if len(a):
            assert not np.allclose(a.to_numpy(), c.to_numpy())
