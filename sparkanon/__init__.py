"""sparkanon: distributed anonymization of microdata on PySpark.

Map of the package:

* :mod:`sparkanon.config` - the typed, frozen job config (YAML), validated at load.
* :mod:`sparkanon.errors` - user errors (exit 2), privacy violations (exit 3), bugs.
* :mod:`sparkanon.attributes` - quasi-identifier kinds, their distances,
  centroids, generalized values and NCP (:mod:`~sparkanon.attributes.kinds`;
  seed 003's code hierarchy trees in :mod:`~sparkanon.attributes.semantic`),
  taxonomy trees from ARX hierarchy files
  (:mod:`~sparkanon.attributes.hierarchy`), and the encoded schema with the
  sensitive levels (:mod:`~sparkanon.attributes.schema`).
* :mod:`sparkanon.models` - privacy models that check class summaries
  ((H,p,k)-anonymity, p-sensitive k-anonymity, k-anonymity).
* :mod:`sparkanon.algorithms` - per-block algorithms in pure numpy/pandas, each
  a :class:`~sparkanon.algorithms.BlockAlgorithm`: MAA-SLIE and GPKC (seed 000),
  MAA-SAE and MAA-MINIL (seed 003), MDAV, (K,L) clustering (seed 001).
* :mod:`sparkanon.metrics` - entropies, PSI, EPP, R_IL, AVG-IL, AVG-Ent, CAVG,
  EA/ILA/APF (:mod:`~sparkanon.metrics.entropy`), NCP and GCP
  (:mod:`~sparkanon.metrics.ncp`).
* :mod:`sparkanon.engine` - the engine interface, the local (pandas) engine and
  the Spark engine (the only pyspark code).
* :mod:`sparkanon.pipeline` - the job's stages, written once against the
  engine interface: profile, encode, block, cluster, reconcile, summarise,
  publish, verify, commit.
* :mod:`sparkanon.cli` - ``sparkanon run CONFIG [--set key=value ...]``.

Internals (``_blocking``, ``_steps``, ``algorithms._block``...) are ``_``-prefixed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sparkanon.config import JobConfig

__version__ = "0.1.0"
__all__ = ["anonymize"]


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
