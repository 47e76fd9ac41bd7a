"""Full-domain generalization over the lattice of level vectors (Aggarwal 2015, section 20.3.1).

Pure code, no Spark and no rows: :mod:`~sparkanon.algorithms.lattice.search` holds the
lattice, Samarati's binary search, Incognito and an exhaustive search, all driven by an
``evaluate`` callback that returns per-node counts
(:class:`~sparkanon.algorithms.lattice.search.NodeVerdict`); the job's stage
:mod:`sparkanon.families.full_domain.lattice` computes them from the frequency set on the engine.
:mod:`~sparkanon.algorithms.lattice._params` holds the ``algorithm`` parameters.
"""
