"""sparkanon: distributed anonymization of microdata on PySpark.

Map of the package:

* :mod:`sparkanon.config` - the typed, frozen job config (YAML), validated at load;
  attributes, models and algorithms are unions told apart by one key (a package: the
  classes, the rules across keys, ``--set`` overrides, loading, the error messages).
* :mod:`sparkanon.errors` - user errors (exit 2), privacy violations (exit 3), bugs.
* :mod:`sparkanon.io` - which input files are data, where the output may go, local
  CSV/Parquet reading.
* :mod:`sparkanon.attributes` - quasi-identifier kinds, their distances, centroids,
  generalized values and NCP (:mod:`~sparkanon.attributes.kinds`; Yang et al. 2014's code
  hierarchy trees in :mod:`~sparkanon.attributes.semantic`), taxonomy trees from ARX
  hierarchy files (:mod:`~sparkanon.attributes.hierarchy`), set-valued attributes over
  an item taxonomy (:mod:`~sparkanon.attributes.itemsets`, Gong et al. 2016), and the encoded
  schema with the sensitive domain (:mod:`~sparkanon.attributes.schema`).
* :mod:`sparkanon.models` - privacy models as criteria over per-class summaries:
  k-anonymity, p-sensitive, (H,p,k), distinct / entropy / recursive l-diversity,
  t-closeness, (k,l)-diversity of relational-transaction data; a
  :class:`~sparkanon.models.ModelSet` when several must hold.
* :mod:`sparkanon.algorithms` - the algorithms in pure numpy/pandas and their one
  registry, :data:`~sparkanon.algorithms.ALGORITHMS` (name -> family, parameters,
  implementation). Per block, each a :class:`~sparkanon.algorithms.BlockAlgorithm`:
  MAA-SLIE and GPKC (Shi et al. 2024), MAA-SAE and MAA-MINIL (Yang et al. 2014), MDAV,
  (K,L) clustering (Chai and Feng 2015), Mondrian; the cut rule and block tree they share
  (:mod:`~sparkanon.algorithms.cuts`), the per-class accumulator (``_classes``) and the
  repair step (:mod:`~sparkanon.algorithms.repair`). For a set-valued sensitive attribute,
  :mod:`~sparkanon.algorithms.transaction` (Partition, Anatomize, APA, PAA; Gong et al.
  2016). Full-domain generalization's lattice searches (Samarati, Incognito; Aggarwal
  2015) in :mod:`~sparkanon.algorithms.lattice`, pure code over per-node counts.
* :mod:`sparkanon.publications` - what a class publishes (centroids, generalized values)
  and the published tables with the key of their equivalence classes.
* :mod:`sparkanon.metrics` - every metric once: the formulas (entropies, PSI, EA/ILA/APF,
  NCP, GCP), the whole-release losses a search minimises and a family reports (DM,
  precision, NCP with suppression; :data:`~sparkanon.metrics.utility.OBJECTIVES`), the
  per-class metrics registry (:mod:`~sparkanon.metrics.registry`, each metric written
  once over a batch of classes) and ARE of count queries (:mod:`~sparkanon.metrics.are`).
* :mod:`sparkanon.engine` - the engine interface, the local (pandas) engine and the
  Spark engine (the only pyspark code).
* :mod:`sparkanon.stages` - one module per stage of the job (read, profile, encode,
  plan_blocks, cluster, reconcile, summarise, publish, verify, measure, commit), each with
  its driver part and the pandas functions it hands the engine.
* :mod:`sparkanon.families` - the families of methods, one registry line each
  (:data:`~sparkanon.families.FAMILIES`), each one module implementing the small protocol
  of :mod:`~sparkanon.families.base`: per-block clustering and partitioning
  (:mod:`~sparkanon.families.blocks`), full-domain generalization
  (:mod:`~sparkanon.families.full_domain`; stage module :mod:`~sparkanon.stages.lattice`)
  and relational-transaction data (:mod:`~sparkanon.families.transaction`; stages
  ``items``, ``rt_cluster``, ``rt_publish``).
* :mod:`sparkanon.pipeline` - the runner, :func:`~sparkanon.pipeline.run_job`: read,
  profile, the family's anonymization, verify, measure, report (row accounting by
  cause), the release checks and the commit, written once for every family.
* :mod:`sparkanon.risk` - disclosure risk as pure code over class-size frequencies and
  per-class statistics: ARX's attacker models and population uniqueness, sdcMicro's
  individual and global risk and SUDA2, the homogeneity, similarity, skewness and
  linkage attacks, and singling-out, linkability and inference against a control set.
* :mod:`sparkanon.report` - the self-contained HTML report of an evaluation.
* :mod:`sparkanon.stages.evaluate` - the evaluation of a release or an input by
  aggregations (risk before and after, attacks, utility via
  :mod:`sparkanon.stages.utility`); :func:`evaluate` is its Python entry point.
* :mod:`sparkanon.cli` - ``sparkanon run CONFIG [--set key=value ...]``, ``evaluate``,
  ``validate``, ``backfill``, ``reconstruct``, ``stream``.

Internals (``algorithms._block``, ``algorithms._classes``, ``stages._common``...) are
``_``-prefixed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sparkanon.config import JobConfig

__version__ = "0.1.0"
__all__ = ["anonymize", "evaluate"]


def anonymize(df: Any, config: JobConfig | str, write: bool = False) -> tuple[Any, dict[str, Any]]:
    """Anonymize a DataFrame and return the published DataFrame and the metrics.

    Args:
        df: a Spark DataFrame (runs on its session) or a pandas DataFrame (runs
            on the local engine).
        config: a :class:`~sparkanon.config.JobConfig` or the path of a YAML
            config; its ``input`` section is ignored (``df`` is the input).
        write: also commit the output to ``config.output.path`` with
            ``metrics.json``; otherwise the verified table is only returned.

    Returns:
        ``(published, metrics)``: the published table (same type as ``df``)
        and the metrics dictionary of ``metrics.json``.

    Raises:
        UserError: invalid config or input.
        PrivacyViolationError: the published table failed verification.
    """
    from sparkanon.config import load_config
    from sparkanon.pipeline import run_job

    cfg = load_config(config) if isinstance(config, str) else config
    import pandas as pd

    if isinstance(df, pd.DataFrame):
        from sparkanon.engine.local import LocalEngine

        engine: Any = LocalEngine()
    else:
        from sparkanon.engine.spark import SparkEngine

        engine = SparkEngine(df.sparkSession)
    result = run_job(engine, cfg, table=df, commit=write)
    return result.published, result.metrics


def evaluate(
    target: str,
    engine: str = "local",
    out: str | None = None,
    write: bool = True,
    overrides: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """Evaluate a committed release (its output directory) or a config's raw input.

    Args:
        target: a job's ``output.path`` (the release, with its input as "before"), or a
            YAML config (its input alone).
        engine: ``local`` (pandas) or ``spark`` (the active or a new local session).
        out: where ``evaluation.json`` and ``report.html`` go (default: the output
            directory; for a config, ``evaluation/<config name>``).
        write: write the two files; otherwise only return the evaluation.
        overrides: ``key=value`` changes to a config target (as ``--set``).
        **options: the ``report`` settings to use instead of the config's
            (``sampling_fraction``, ``threshold``, ``suda_max_size``, ``label``,
            ``holdout``, ``attacks``, ``bins``) and ``quasi_identifiers`` (a list).

    Returns:
        The evaluation (what ``evaluation.json`` holds).

    Raises:
        UserError: not an output directory or a config, a bad option, a
            quasi-identifier that is not a column.
    """
    from sparkanon.stages.evaluate import (
        default_out,
        evaluate_target,
        load_target,
        write_evaluation,
    )

    loaded = load_target(target, overrides, **options)  # bad options fail before Spark starts
    if engine == "local":
        from sparkanon.engine.local import LocalEngine

        runner: Any = LocalEngine()
    else:
        from sparkanon.engine.session import get_or_create_session
        from sparkanon.engine.spark import SparkEngine

        runner = SparkEngine(get_or_create_session())
    result = evaluate_target(runner, loaded)
    if write:
        write_evaluation(runner, result, out or default_out(target))
    return result
