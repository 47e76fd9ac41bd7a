"""The relational-transaction family (Gong et al. 2016): a set-valued sensitive attribute.

The family class is in :mod:`~sparkanon.families.transaction.family`; the other modules of
this folder are its own stages.
"""

from sparkanon.families.transaction.family import TransactionFamily

__all__ = ["TransactionFamily"]
