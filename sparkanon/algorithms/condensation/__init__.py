"""Condensation's pure pieces (Aggarwal 2015, section 20.3.1.4; Aggarwal and Yu 2004): numpy only.

Records are condensed into groups of at least ``k``; only each group's first- and
second-order sums are kept, and synthetic records are drawn from them. No Spark, no engine
and no config imports here: a family and a streaming query wire these pieces.

* :mod:`~sparkanon.algorithms.condensation.group_stats` - :class:`GroupStats`, the mergeable
  accumulator (count, ``Sum(i)``, ``Sum(i, j)``; eqs 20.6/20.7), its flat layout for engine
  aggregation and its optional per-column origin (``shift``).
* :mod:`~sparkanon.algorithms.condensation.synthesize` - the eigen-axes of a group, the
  synthetic records (uniform along each eigenvector, variance its eigenvalue, mean exact)
  and the per-group check (mean equal, covariance within a Hoeffding bound).
* :mod:`~sparkanon.algorithms.condensation.split` - the dynamic split of a ``2k`` group
  along its principal eigenvector (eqs 20.8/20.9).
* :mod:`~sparkanon.algorithms.condensation.stream` - dynamic condensation: records join the
  nearest group, groups reaching ``2k`` split, the release trigger.
* :mod:`~sparkanon.algorithms.condensation.static` - Aggarwal and Yu's static grouping
  (exercise 5).
* :mod:`~sparkanon.algorithms.condensation.compatibility` - the covariance compatibility
  measure.
"""
