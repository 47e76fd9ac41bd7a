"""MAA-SAE and its baseline MAA-MINIL: p-sensitive k-anonymity (Yang et al. 2014, Algorithm 1).

MAA-SAE grows each class by the anonymous protection factor
``APF(G, G') = EA(G, G') / ILA(G, G')`` (eq. 16): the entropy increment of the
sensitive values (eq. 14-15, base 2, over sensitive *values*) over the
increment of information loss (eq. 12-13, ``IL(G)`` the class loss of the
spine, :meth:`Block.loss`). MAA-MINIL (section 5.2) is the same algorithm
choosing the smallest ``ILA`` wherever MAA-SAE chooses the largest ``APF``.
"Best" below means first under the ranking rule ``algorithm.apf_rule``
(:func:`apf_keys`, "Ranking" below); MAA-MINIL ignores that option.

Steps as implemented (numbers are the paper's):

* 2-3: a block without ``k`` rows or ``p`` distinct sensitive values forms no
  class (all ``-1``; its rows go to cross-block reconciliation).
* 4-5: while the free rows hold ``k`` rows and ``p`` distinct values, a free
  row drawn with the block's seeded generator starts a class ``G``.
* 6-21: while ``|G| < k``:

  - 7-13, while ``|G| < p`` (equivalently, fewer than ``p`` distinct values:
    until a merge every row of ``G`` has a value new to ``G``):
    ``t'`` is the best free row whose sensitive value is not in ``G``;
  - 14-20, while ``p <= |G| < k``: ``t'`` is the best free row;
  - in both, ``G'`` is the best formed class ``Gk`` of ``Q`` by
    ``APF(G, G ∪ Gk)``; if ``t'`` beats ``G'`` it joins ``G``, else ``G'``
    leaves ``Q`` and merges into ``G`` (which then has ``>= k`` rows and
    ``>= p`` values, ending the loop). "Beats" is strict, as the paper's ``>``
    on APF: ``t'`` must rank above ``G'``; equal APFs (for instance both
    ``+inf``) are decided by the larger ``EA``, and a full tie merges (the
    paper's ELSE branch). With ``Q`` empty ``t'`` is added.
  - No admissible ``t'`` but ``Q`` non-empty: ``G'`` is merged (the only move
    left that completes ``G``). No admissible ``t'`` and ``Q`` empty (the break
    rule, as in MAA-SLIE): ``G``'s rows return to the free rows and class
    formation stops. Neither can happen from a pool that passed step 4 (``G``
    holds fewer than ``k`` of its rows and fewer than ``p`` of its values), so
    both are safeguards.

* 22: ``Q = Q ∪ {G}``.
* 24-29: the remaining rows, in seeded random order, each join the class
  ``argmax_{Gk in Q} APF({t}, {t} ∪ Gk)``. Read literally, as implemented,
  ``EA = Ent(Gk + t) - Ent({t}) = Ent(Gk + t)`` and
  ``ILA = IL(Gk + t) - IL({t}) = IL(Gk + t)``: the class whose grown version
  has the best entropy-to-loss ratio. The other reading would be the increment
  against ``Gk`` (``Ent(Gk + t) - Ent(Gk)`` over ``IL(Gk + t) - IL(Gk)``), which
  is how steps 8-9 score a growth; we keep the literal text because step 26
  writes ``{t}`` where steps 9 and 16 write ``G``, and it changes the argument
  deliberately. The class keeps its place in ``Q`` (ties go to the class
  formed first).
* 30: centroids are computed by the pipeline from each class's final rows.

Ranking (``algorithm.apf_rule``, :func:`apf_keys`). The paper ranks every
candidate (``t'``, ``G'``, their comparison at steps 10 and 17, the class of step
26) by the ratio ``EA / ILA`` and gives its purpose (section 3.5): the larger
the entropy increment and the smaller the loss increment, the larger the APF.
The ratio does that only when ``EA > 0``; when ``EA < 0`` it is closer to 0, so
larger, the *larger* ``ILA`` is. Once ``G``'s entropy cannot rise (with a yes/no
attribute as soon as ``G = {yes, no}``) every row has ``EA < 0``, so step 15
takes the row *farthest* from ``G``, and steps 16-19 merge a formed class ``G'``
(its ``EA`` just below 0, its ``ILA`` large) in preference to every row: each
new class absorbs the earlier ones and the block ends as one class.

* ``literal``: the literal ratio everywhere (kept to reproduce that behaviour).
* ``gain_then_loss`` (default): candidates that raise the entropy
  (``EA > 0``) rank first, among themselves by the paper's APF; the others
  (``EA <= 0``) rank below them by the smallest ``ILA``, the paper's other aim
  when no candidate can add entropy. ``EA = 0`` counts as no gain: ranking it
  above ``EA < 0``, as the ratio does, would still let a class that stays
  balanced after a merge (``EA = 0``) beat every row. The rules rank two
  candidates differently only when neither raises the entropy, where the
  ratio contradicts the paper's stated aim; on the Adult runs of Table 5 (14
  sensitive values) they give the same classes.

Ties: ``t'`` and ``G'`` go to the larger APF (``gain_then_loss``: among
gains; among the others the smaller ILA), then the larger EA, then the lowest
row index (rows are sorted by row id) or the earliest formed class
(:func:`best_by_rule`). APF at ``ILA = 0`` is ``+inf`` / ``0`` / ``-inf`` by the
sign of ``EA`` (:func:`anonymous_protection_factor`); an ``ILA`` at or below
``ZERO_LOSS`` counts as 0 and ``|EA| <= ZERO_ENTROPY`` as ``EA = 0``.
Every class loss ``IL`` and entropy ``Ent`` is put on the grid of
:func:`~sparkanon.metrics.entropy.quantise` (``2**-30``) *before* the increments are
taken: ``EA = q(Ent(G')) - q(Ent(G))``, ``ILA = q(IL(G')) - q(IL(G))`` (steps 8-9,
15-16 and 26 alike), so both are exact multiples of the grid (``ILA <= ZERO_LOSS``
means ``ILA <= 0``) and the APF is one division of them. Two candidates whose
losses or entropies differ only by rounding (the same class reached in another
summation order, the same value counts in other positions) therefore tie, and the
rule above decides; the compiled kernel computes bit-identical keys and so takes
the same decisions. Without the grid the first decisions of a block would go to
whichever float happened to be a few units in the last place smaller.

Cross-block reconciliation (:meth:`MaaSae.place`) places the extra rows, in
seeded random order, by the leftover rule of steps 24-29.

Scoring: candidate rows are scored at once (:meth:`Block.losses_with_each`);
the classes of ``Q`` at once on histogram kinds (the per-class accumulator
:class:`~sparkanon.algorithms._classes.ClassStats`), and
on the other kinds (one ``kind.loss`` per class) only when a lower bound on
their loss increment lets them beat ``t'`` (:meth:`MaaSae._merge_scores`; the
choice is unchanged).

Two implementations give the same labels: the numpy methods below (the reference,
used for any kind the kernel does not support, and by subclasses that override the
choice rule) and the compiled kernel of :mod:`sparkanon.algorithms.blocks._sae_kernel`,
which :meth:`MaaSae.cluster` and :meth:`MaaSae.place_into` use when numba is
installed, the schema's kinds are supported and ``SPARKANON_NO_JIT`` is not ``1``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Literal

import numpy as np

from sparkanon.algorithms._base import BlockAlgorithm, Leftovers, compiled_kernel
from sparkanon.algorithms._block import ApfRule, Block
from sparkanon.algorithms._classes import ClassStats
from sparkanon.algorithms._params import AlgorithmParams
from sparkanon.metrics.entropy import (
    ZERO_ENTROPY,
    ZERO_LOSS,
    anonymous_protection_factor,
    entropy_increment,
    information_loss_increment,
    quantise,
    sensitive_entropy,
)


def _compiled() -> ModuleType | None:
    """The compiled kernel module (:mod:`~sparkanon.algorithms.blocks._sae_kernel`), or ``None``."""
    return compiled_kernel("blocks._sae_kernel")


def _row_codes(block: Block, rows: np.ndarray) -> list[np.ndarray]:
    return [c[rows] for c in block.codes]


def apf_keys(ea: np.ndarray, ila: np.ndarray, rule: ApfRule) -> list[np.ndarray]:
    """The ranking keys of candidates ``(EA, ILA)`` under ``rule``, most significant first.

    A larger key is better; a full tie goes to the lowest index (:func:`best_by_rule`).

    * ``literal``: the APF (:func:`anonymous_protection_factor`), then ``EA``.
    * ``gain_then_loss``: first whether the candidate raises the entropy
      (``EA > ZERO_ENTROPY``); among those the APF, among the others ``-ILA``
      (an ILA at or below ``ZERO_LOSS`` counts as 0); then ``EA``.

    Args:
        ea: entropy increment of each candidate (eq. 15).
        ila: information loss increment of each candidate (eq. 13).
        rule: ``algorithm.apf_rule``.

    Returns:
        The keys, each an array with one entry per candidate.
    """
    ea, ila = np.broadcast_arrays(np.asarray(ea, dtype=float), np.asarray(ila, dtype=float))
    apf = anonymous_protection_factor(ea, ila)
    if rule == "literal":
        return [apf, ea]
    gain = ea > ZERO_ENTROPY
    loss = np.where(ila > ZERO_LOSS, ila, 0.0)
    return [gain.astype(float), np.where(gain, apf, -loss), ea]


def best_by_rule(ea: np.ndarray, ila: np.ndarray, rule: ApfRule) -> int:
    """Index of the best candidate under ``rule`` (:func:`apf_keys`), ties to the lowest index.

    Under ``literal`` this is :func:`~sparkanon.metrics.entropy.best_by_apf`.
    """
    keys = apf_keys(ea, ila, rule)
    # lexsort: the last key is the primary one; a stable sort keeps the lowest index first.
    return int(np.lexsort(tuple(-key for key in reversed(keys)))[0])


class MaaSaeParams(AlgorithmParams):
    """MAA-SAE's parameters.

    Attributes:
        apf_rule: how candidates are ranked by the anonymous protection factor
            ``APF = EA / ILA`` (Yang et al. 2014, eq. 16). ``gain_then_loss`` (default):
            candidates that raise the sensitive entropy (``EA > 0``) by largest APF,
            ranked above the others, which go by least ``ILA``. ``literal``: every
            candidate by the literal ratio; once a class's entropy cannot rise (few
            sensitive values) a negative ratio favours the candidate of *largest*
            loss and classes merge into one per block (``docs/method.md``).
    """

    name: Literal["maa_sae"] = "maa_sae"
    apf_rule: ApfRule = "gain_then_loss"


class MaaMinilParams(AlgorithmParams):
    """MAA-MINIL's parameters (only the common ones)."""

    name: Literal["maa_minil"] = "maa_minil"


class MaaSae(BlockAlgorithm):
    """Micro-aggregation by largest anonymous protection factor (Yang et al. 2014, Algorithm 1)."""

    name = "maa_sae"
    guarantees = frozenset({"p_sensitive", "k", "distinct_l"})
    Params = MaaSaeParams

    # -- the choice rule (MAA-MINIL overrides these three) -------------------------------

    def pick(self, ea: np.ndarray, ila: np.ndarray, rule: ApfRule) -> int:
        """Index of the best candidate under ``rule`` (:func:`best_by_rule`)."""
        return best_by_rule(ea, ila, rule)

    def beats(self, ea_t: float, ila_t: float, ea_g: float, ila_g: float, rule: ApfRule) -> bool:
        """Step 10/17: whether adding ``t'`` beats merging ``G'``: strictly larger keys.

        Under ``literal``: the larger APF, equal APFs by the larger EA; a full tie
        merges (the paper's ELSE branch).
        """
        keys = apf_keys(np.array([ea_t, ea_g]), np.array([ila_t, ila_g]), rule)
        return tuple(float(key[0]) for key in keys) > tuple(float(key[1]) for key in keys)

    def _kernel(self) -> ModuleType | None:
        """The compiled kernel (:mod:`~sparkanon.algorithms.blocks._sae_kernel`) when it applies.

        It implements the choice rule of :class:`MaaSae` and :class:`MaaMinil`
        themselves; a subclass that overrides :meth:`pick`, :meth:`beats` or
        :meth:`may_beat` gets the numpy path.
        """
        if type(self) not in (MaaSae, MaaMinil):
            return None
        return _compiled()

    # -- Algorithm 1 ------------------------------------------------------------------------

    def cluster(self, block: Block, rng: np.random.Generator) -> np.ndarray:
        """Steps 1-29 on one block: the compiled kernel when it applies, else numpy.

        Args:
            block: the block's rows, sorted by row id.
            rng: seeded generator for the start rows (step 5) and the leftover order (25).

        Returns:
            A class label ``0..m-1`` per row (classes in the order they entered
            ``Q``); all ``-1`` when the block cannot host a class.
        """
        kernel = self._kernel()
        if kernel is not None:
            labels = kernel.cluster(block, rng, minil=isinstance(self, MaaMinil))
            if labels is not None:
                return labels
        return self._cluster_numpy(block, rng)

    def _cluster_numpy(self, block: Block, rng: np.random.Generator) -> np.ndarray:
        """Steps 1-29 on one block, in numpy (the reference; see :meth:`cluster`)."""
        labels = np.full(block.n, -1, dtype=np.int64)
        if not block.can_host_class(np.arange(block.n)):
            return labels
        model = block.ctx.model
        free = np.ones(block.n, dtype=bool)
        q = ClassStats(block, capacity=block.n // max(model.k, 1) + 1)
        members_of: dict[int, np.ndarray] = {}
        while block.can_host_class(np.flatnonzero(free)):
            rows = np.flatnonzero(free)
            start = int(rows[rng.integers(rows.size)])
            free[start] = False
            group = self._grow(block, np.array([start]), free, q, members_of)
            if group is None:
                break
            cid = q.add_class(_row_codes(block, group), block.sens[group], block.level[group])
            members_of[cid] = group
        leftovers = np.flatnonzero(free)
        if leftovers.size and members_of:
            order = rng.permutation(leftovers)
            placed = self._place(q, block, order, block.ctx.apf_rule)
            for i, cid in zip(order, placed, strict=True):
                members_of[int(cid)] = np.append(members_of[int(cid)], i)
        for label, cid in enumerate(sorted(members_of)):
            labels[members_of[cid]] = label
        return labels

    def _grow(
        self,
        block: Block,
        group: np.ndarray,
        free: np.ndarray,
        q: ClassStats,
        members_of: dict[int, np.ndarray],
    ) -> np.ndarray | None:
        """Steps 6-21: grow ``G`` to ``k`` rows, ``p`` values by rows of ``T`` or classes of ``Q``.

        Returns:
            The rows of ``G``, or ``None`` under the break rule (its rows are free again).
        """
        model = block.ctx.model
        rule = block.ctx.apf_rule
        n_values = len(block.ctx.schema.sensitive.values)
        while group.size < model.k:
            candidates = np.flatnonzero(free)
            g_sens = block.sens[group]
            if len(np.unique(g_sens)) < model.p:  # steps 7-13
                candidates = candidates[~np.isin(block.sens[candidates], g_sens)]
            ids = q.ids()
            if candidates.size == 0 and ids.size == 0:
                free[group] = True  # break rule (unreachable from step 4's pool)
                return None
            loss_g = float(quantise(block.loss(group)))
            counts_g = np.bincount(g_sens, minlength=n_values).astype(float)
            ent_g = float(quantise(sensitive_entropy(counts_g)))
            if candidates.size:  # steps 8 / 15: t'
                ila_t = information_loss_increment(
                    loss_g, quantise(block.losses_with_each(group, candidates))
                )
                values = block.sens[candidates]
                present = np.unique(values)
                ent_by_value = np.zeros(n_values)
                grown = counts_g[None, :] + np.eye(n_values)[present]
                ent_by_value[present] = quantise(sensitive_entropy(grown))
                ea_t = entropy_increment(ent_g, ent_by_value[values])
                i = self.pick(ea_t, ila_t, rule)
            if ids.size:  # steps 9 / 16: G'
                best_row = (ea_t[i], ila_t[i]) if candidates.size else None
                g_codes = _row_codes(block, group)
                ids, ea_q, ila_q = self._merge_scores(
                    q, ids, g_codes, g_sens, loss_g, ent_g, best_row, rule
                )
                j = self.pick(ea_q, ila_q, rule) if ids.size else -1
            if candidates.size and (
                ids.size == 0 or self.beats(ea_t[i], ila_t[i], ea_q[j], ila_q[j], rule)
            ):  # steps 11 / 18
                t = int(candidates[i])
                free[t] = False
                group = np.append(group, t)
            else:  # steps 12 / 19
                cid = int(ids[j])
                q.retire(cid)
                group = np.concatenate([group, members_of.pop(cid)])
        return group

    def _merge_scores(
        self,
        q: ClassStats,
        ids: np.ndarray,
        codes: list[np.ndarray],
        sens: np.ndarray,
        loss_g: float,
        ent_g: float,
        best_row: tuple[float, float] | None,
        rule: ApfRule,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``EA`` and ``ILA`` of merging ``G`` with each class of ``Q`` that could beat ``t'``.

        Exact pruning: every attribute's loss is a sum of distances, so
        ``IL(G ∪ Gk)`` is at least its histogram-kind part ``H``, which is computed
        for all classes at once, and ``q(IL(G ∪ Gk)) >= q(H)`` on the grid; only the
        classes whose bound ``q(H) - q(IL(G))`` (:meth:`may_beat`) lets them beat
        ``t'`` are scored on the other kinds (one ``kind.loss`` call each). The best
        of those is the paper's ``G'`` whenever ``G'`` beats ``t'``, so the choice is
        the same as scoring every class.

        Args:
            q: the formed classes.
            ids: the classes of ``Q``.
            codes: codes of ``G``'s rows, one array per attribute.
            sens: sensitive codes of ``G``'s rows.
            loss_g: ``IL(G)``, quantised.
            ent_g: ``Ent(G)``, quantised.
            best_row: ``(EA, ILA)`` of ``t'``, ``None`` if there is no ``t'``.
            rule: ``algorithm.apf_rule``.

        Returns:
            ``(ids, EA, ILA)`` of the classes kept (possibly none).
        """
        ea_q = entropy_increment(ent_g, quantise(q.entropies(ids, sens)))
        hist = q.hist_losses(ids, codes)
        if best_row is not None:
            low = information_loss_increment(loss_g, quantise(hist))
            keep = self.may_beat(best_row[0], best_row[1], ea_q, low, rule)
            ids, ea_q, hist = ids[keep], ea_q[keep], hist[keep]
        ila_q = information_loss_increment(loss_g, quantise(hist + q.member_losses(ids, codes)))
        return ids, ea_q, ila_q

    def may_beat(
        self, ea_t: float, ila_t: float, ea_q: np.ndarray, ila_low: np.ndarray, rule: ApfRule
    ) -> np.ndarray:
        """Which classes might beat ``t'`` given a lower bound ``ila_low`` on their ILA.

        With ``ILA >= ila_low > 0`` the APF is at most ``max(EA / ila_low, 0)``; a
        class can beat ``t'`` only if that bound reaches ``APF(t')``. Under
        ``gain_then_loss`` a class without entropy gain cannot beat a ``t'`` with
        gain, and beats a ``t'`` without gain only if its ILA can reach ``ILA(t')``.
        """
        ea_q = np.asarray(ea_q, dtype=float)
        apf_t = anonymous_protection_factor(ea_t, ila_t)
        low = np.asarray(ila_low, dtype=float)
        positive = low > ZERO_LOSS
        with np.errstate(divide="ignore", invalid="ignore"):
            bound = np.maximum(ea_q / np.where(positive, low, 1.0), 0.0)
        by_apf = ~positive | (bound >= apf_t)
        if rule == "literal":
            return by_apf
        gain_q = ea_q > ZERO_ENTROPY
        if ea_t > ZERO_ENTROPY:
            return gain_q & by_apf
        return gain_q | (low <= max(float(ila_t), ZERO_LOSS))

    def _place(self, q: ClassStats, rows: Block, order: np.ndarray, rule: ApfRule) -> np.ndarray:
        """Steps 24-29: each row of ``order`` joins the class of best ``APF({t}, {t} ∪ Gk)``.

        Args:
            q: the formed classes (updated as rows join).
            rows: the block holding the rows to place.
            order: indices into ``rows``, in placement order.
            rule: ``algorithm.apf_rule``.

        Returns:
            The class id each row joined, in ``order``'s order.
        """
        chosen = np.empty(len(order), dtype=np.int64)
        ids = q.ids()
        for n, i in enumerate(order):
            one = np.array([int(i)])
            codes, sens = _row_codes(rows, one), rows.sens[one]
            losses = quantise(q.hist_losses(ids, codes) + q.member_losses(ids, codes))
            ents = quantise(q.entropies(ids, sens))
            ila = information_loss_increment(quantise(rows.loss(one)), losses)
            ea = entropy_increment(quantise(sensitive_entropy(np.bincount(sens))), ents)
            cid = int(ids[self.pick(ea, ila, rule)])
            q.add_rows(cid, codes, sens, rows.level[one])
            chosen[n] = cid
        return chosen

    def place_into(self, job: Leftovers) -> np.ndarray:
        """Rows of another block, in seeded random order, join classes by the leftover rule.

        The compiled kernel when it applies (:meth:`cluster`), else numpy.
        """
        block, labels, n_classes, extra, rng = job.parts()
        kernel = self._kernel()
        if kernel is not None:
            placed = kernel.place(block, labels, extra, rng, minil=isinstance(self, MaaMinil))
            if placed is not None:
                return placed
        out = np.empty(extra.n, dtype=np.int64)
        present = np.unique(labels[labels >= 0])
        q = ClassStats(block, capacity=present.size)
        for label in present:
            members = np.flatnonzero(labels == label)
            q.add_class(_row_codes(block, members), block.sens[members], block.level[members])
        order = rng.permutation(extra.n)
        out[order] = present[self._place(q, extra, order, block.ctx.apf_rule)]
        return out


class MaaMinil(MaaSae):
    """MAA-MINIL (Yang et al. 2014, section 5.2): Algorithm 1 choosing the smallest ILA (eq. 13).

    Wherever MAA-SAE takes the largest APF (the row ``t'``, the class ``G'``,
    the comparison of the two, the leftover rule) MAA-MINIL takes the smallest
    ``ILA``; ties go to the larger ``EA``, then the lowest index, and a full tie
    between ``t'`` and ``G'`` merges (the paper's ELSE branch).
    """

    name = "maa_minil"
    Params = MaaMinilParams

    def pick(self, ea: np.ndarray, ila: np.ndarray, rule: ApfRule) -> int:
        """Index of the candidate of smallest ILA, ties to larger EA, then lowest index.

        ``rule`` (``algorithm.apf_rule``) is ignored: MAA-MINIL does not use the APF.
        """
        return int(np.lexsort((-np.asarray(ea, dtype=float), np.asarray(ila, dtype=float)))[0])

    def beats(self, ea_t: float, ila_t: float, ea_g: float, ila_g: float, rule: ApfRule) -> bool:
        """Whether adding ``t'`` beats merging ``G'``: smaller ILA (strict), ties by EA."""
        return bool(ila_t < ila_g or (ila_t == ila_g and ea_t > ea_g))

    def may_beat(
        self, ea_t: float, ila_t: float, ea_q: np.ndarray, ila_low: np.ndarray, rule: ApfRule
    ) -> np.ndarray:
        """A class can beat ``t'`` only if its ILA, at least ``ila_low``, can reach ``ILA(t')``."""
        return np.asarray(ila_low, dtype=float) <= ila_t
