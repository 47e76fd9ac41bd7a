"""The synthesis family: condensation (Aggarwal 2015, section 20.3.1.4; Aggarwal and Yu 2004).

The family class is in :mod:`~sparkanon.families.synthesis.family`; the other modules of
this folder are its own stages.
"""

from sparkanon.families.synthesis.family import SynthesisFamily

__all__ = ["SynthesisFamily"]
