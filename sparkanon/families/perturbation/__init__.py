"""The perturbation family (Aggarwal 2015, section 20.2): every row published, with noise.

The family class is in :mod:`~sparkanon.families.perturbation.family`; the other modules of
this folder are its own stages.
"""

from sparkanon.families.perturbation.family import PerturbationFamily

__all__ = ["PerturbationFamily"]
