"""The per-block family's algorithms: each clusters one block's rows into classes.

MAA-SLIE (:mod:`.maa_slie`, Shi, Zhang and Dong 2024), GPKC (:mod:`.gpkc`,
:mod:`.gpkc_paper`; Yang, Wang and Zhang 2014), MAA-SAE and MAA-MINIL (:mod:`.maa_sae`,
Chai and Feng 2015), MDAV (:mod:`.mdav`), (K,L) clustering (:mod:`.kl_cluster`) and
Mondrian (:mod:`.mondrian`), each a
:class:`~sparkanon.algorithms._base.BlockAlgorithm`; the ``_*_kernel`` modules are their
compiled loops (numba). What every per-block algorithm shares (the block, its classes'
statistics, the repair step, the cut planner) is in :mod:`sparkanon.algorithms`.
"""
