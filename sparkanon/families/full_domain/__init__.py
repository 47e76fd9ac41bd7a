"""The full-domain family (textbook section 20.3.1): Samarati and Incognito.

The family class is in :mod:`~sparkanon.families.full_domain.family`; the other modules of
this folder are its own stages.
"""

from sparkanon.families.full_domain.family import FullDomainFamily

__all__ = ["FullDomainFamily"]
