"""Disclosure risk of a table, before or after anonymization: the measures and attacks.

The package is engine-aware: four of its modules run their own passes over a table's rows
through the engine interface (:class:`~sparkanon.engine.base.Engine` and the expressions of
:mod:`sparkanon.engine.expr`; never pyspark), because those passes are the methods
themselves: a nearest-neighbour search, a search for minimal sample uniques, each class's
distribution of the sensitive values. Each of them has a pure part (numpy and pandas over
statistics or over one batch of rows) and an ``*_on_engine`` entry point that computes
those statistics on the engine, so that a table larger than the driver's memory never
leaves the engine. :mod:`sparkanon.evaluation`
calls the entry points.

* :mod:`~sparkanon.risk.view` (pure) - which columns of a table the evaluation reads as
  quasi-identifiers, sensitive attribute and weight (:class:`~sparkanon.risk.view.TableView`).
* :mod:`~sparkanon.risk.arx` (pure) - re-identification risk as ARX defines it, over a
  class-size frequency table: prosecutor, journalist and marketer attackers, sample
  uniques, and population uniqueness by the Pitman, Zayatz, SNB and Dankar estimators.
* :mod:`~sparkanon.risk.sdcmicro` - sdcMicro's individual and global risk: pure over the
  ``(fk, Fk)`` pairs (:func:`~sparkanon.risk.sdcmicro.sdcmicro_risk`); the engine
  computes the pairs of a weighted table
  (:func:`~sparkanon.risk.sdcmicro.sdcmicro_on_engine`).
* :mod:`~sparkanon.risk.suda` - SUDA2 special uniques: pure on one frame
  (:func:`~sparkanon.risk.suda.suda2`); the engine searches the minimal sample uniques of
  a whole table (:func:`~sparkanon.risk.suda.suda2_on_engine`).
* :mod:`~sparkanon.risk.attacks` - homogeneity, similarity, skewness and linkage attacks
  on the classes of a release: pure over class summaries (the module's "pure functions"
  section); the engine builds the per-class summaries
  (:func:`~sparkanon.risk.attacks.attacks_on_engine`).
* :mod:`~sparkanon.risk.anonymeter` - singling-out, linkability and inference attacks
  against a control set (for perturbed and synthetic releases): pure statistics and
  distances (its sections "statistics (pure)" and "distance (pure)"); the engine samples
  the targets, finds their neighbours and counts the predicates
  (:func:`~sparkanon.risk.anonymeter.anonymeter_on_engine`).
"""
