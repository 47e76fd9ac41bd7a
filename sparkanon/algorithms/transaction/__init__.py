"""Anonymization of relational-transaction data (Gong et al. 2016): set-valued attributes per block.

Gong et al. 2016 (Gong, Yang and Luo 2016, "Data anonymization approach for microdata with
relational and transaction attributes") publishes records whose sensitive part is a set
of items under (k, l)-diversity: every published generalized set is shared by at least
``k`` records, and every group of the lossy decomposition holds at least ``l`` distinct
sets. Its algorithms combine two sub-algorithms, each a module here, all pure numpy per
block (no Spark):

* :mod:`~sparkanon.algorithms.transaction.set_partition` - Partition (He and Naughton
  2009, "Anonymization of set-valued data via top-down, local generalization"):
  top-down local generalization of the sets over an item taxonomy to k-anonymity.
* :mod:`~sparkanon.algorithms.transaction.anatomize` - Anatomize (Xiao and Tao 2006,
  "Anatomy") over TBuckets, the records sharing one set (Gong et al. 2016, definition 2).
* :mod:`~sparkanon.algorithms.transaction.apa` - APA, Gong et al. 2016, Algorithm 1: anatomize,
  partition, merge groups, decompose.
* :mod:`~sparkanon.algorithms.transaction.paa` - PAA, Gong et al. 2016, Algorithm 2: partition,
  then anatomize over the generalized sets, decompose.
* :mod:`~sparkanon.algorithms.transaction.rmr` - RMR (Poulis et al. 2013, "Anonymizing
  data with relational and transaction attributes"), the baseline Gong et al. 2016 compares
  against.
"""
