"""The job's stages, as the runner (:func:`sparkanon.pipeline.run_job`) and the families run them.

Each stage is one module holding both its driver part (a function the pipeline
calls with the engine) and the pure pandas functions it hands the engine to run on
batches or groups of rows; no stage calls back into another's functions.

* :mod:`~sparkanon.stages.read` - the output location's safety, the input table and
  the columns the job needs.
* :mod:`~sparkanon.stages.profile` - one pass of mergeable per-batch statistics
  (:class:`~sparkanon.stages.profile.Profile`): counts, ranges, domains, missing,
  malformed and invalid values, the sensitive distribution; the schema and the
  model's feasibility come from it.
* :mod:`~sparkanon.stages.encode` - codes of every quasi-identifier and the
  sensitive value, cached once.
* :mod:`~sparkanon.stages.plan_blocks` - the top of the Mondrian-style tree, cut on
  the cluster from aggregated histograms (:mod:`sparkanon.algorithms.cuts`).
* :mod:`~sparkanon.stages.cluster` - per top block: the rest of the tree, then the
  algorithm on every leaf, in one ``applyInPandas`` group.
* :mod:`~sparkanon.stages.reconcile` - rows no block could place join the nearest
  feasible block's classes (a cogroup).
* :mod:`~sparkanon.stages.summarise` - per class: size, diversity, centroid,
  generalized values and the metrics' per-class terms.
* :mod:`~sparkanon.stages.publish` - the publication (written to a temporary location).
* :mod:`~sparkanon.stages.verify` - every published equivalence class against the model.
* :mod:`~sparkanon.stages.measure` - the metrics, by Spark aggregations.
* :mod:`~sparkanon.stages.commit` - ``metrics.json``, the resolved config, the move into place.
"""
