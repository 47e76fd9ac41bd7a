"""Disclosure risk of a table, before or after anonymization: the measures and attacks.

Pure code over per-class and per-bin statistics (the engine passes that produce them are
in :mod:`sparkanon.evaluation.evaluate`):

* :mod:`~sparkanon.risk.view` - which columns of a table the evaluation reads as
  quasi-identifiers, sensitive attribute and weight (:class:`~sparkanon.risk.view.TableView`).
* :mod:`~sparkanon.risk.arx` - re-identification risk as ARX defines it: prosecutor,
  journalist and marketer attackers, sample uniques, and population uniqueness by the
  Pitman, Zayatz, SNB and Dankar estimators.
* :mod:`~sparkanon.risk.sdcmicro` - sdcMicro's individual and global risk;
  :mod:`~sparkanon.risk.suda` - SUDA2 special uniques.
* :mod:`~sparkanon.risk.attacks` - homogeneity, similarity, skewness and linkage attacks
  on the classes of a release; :mod:`~sparkanon.risk.anonymeter` - singling-out,
  linkability and inference attacks against a control set (for perturbed and synthetic
  releases).
"""
