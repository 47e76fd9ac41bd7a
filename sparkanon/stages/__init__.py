"""The runner's shared stages: what every family's job reads, writes and checks the same way.

The runner (:func:`sparkanon.pipeline.run_job`) calls them in order; the families call
``encode``, ``publish`` and ``verify`` from their own steps. A family's own
stages live in its folder (:mod:`sparkanon.families`), and the per-block spine three
families share in :mod:`sparkanon.per_block`. Stages import each other only downwards in
this list (``_common`` first); none imports a family.

* :mod:`~sparkanon.stages._common` - stage timing and the collection of small statistics.
* :mod:`~sparkanon.stages.read` - the output location's safety, the input table and the
  columns the job needs.
* :mod:`~sparkanon.stages.items` - the set-valued sensitive attribute: parsing,
  profiling and encoding.
* :mod:`~sparkanon.stages.profile` - one pass of mergeable per-batch statistics
  (:class:`~sparkanon.stages.profile.Profile`); the schema and the models' feasibility.
* :mod:`~sparkanon.stages.encode` - one code per quasi-identifier and the sensitive
  value, cached once.
* :mod:`~sparkanon.stages.publish` - the publication, in a keyed order, written to the
  staging location.
* :mod:`~sparkanon.stages.verify` - every published equivalence class against the models.
* :mod:`~sparkanon.stages.release` - a release that publishes nothing, or too little,
  fails.
* :mod:`~sparkanon.stages.release_checks` - the staged release does not lead back to
  its input (key scan, order checks).
* :mod:`~sparkanon.stages.table_lock` - the lock a table run holds on its output.
* :mod:`~sparkanon.stages.commit` - where the verified release goes, and the move that
  publishes it.
"""
