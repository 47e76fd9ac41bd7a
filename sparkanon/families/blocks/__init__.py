"""The per-block family: clustering and partitioning algorithms, one block at a time.

The family class is in :mod:`~sparkanon.families.blocks.family`; the other modules of
this folder are its own stages.
"""

from sparkanon.families.blocks.family import BlockFamily

__all__ = ["BlockFamily"]
