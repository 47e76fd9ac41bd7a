"""Creating the SparkSession the job runs on."""

from __future__ import annotations

import io
import os
import sys

from pyspark.sql import SparkSession

SESSION_TIME_ZONE = "spark.sql.session.timeZone"
"""Set to ``UTC`` on the sessions sparkanon creates (unless the user's conf sets it): date
and timestamp quasi-identifiers are computed in UTC on both engines, and Spark hands
``TimestampType`` values to Python as wall-clock times in this zone."""
SESSION_CONF = {SESSION_TIME_ZONE: "UTC"}
"""What the sessions sparkanon creates set unless the user's conf sets it."""


def _use_driver_python(master: str) -> None:
    """Start local Python workers with the driver's interpreter unless the user chose one.

    Spark starts its Python workers with ``PYSPARK_PYTHON`` (default ``python3`` from
    ``PATH``). Run from a virtual environment that is not activated (cron, an IDE, a
    scheduler), that ``python3`` lacks numpy and pandas and every UDF fails. On a local
    master the workers run on this machine, so the driver's own interpreter is the
    right one; on a cluster the driver's path may not exist on the workers, so it is
    left alone.
    """
    if "PYSPARK_PYTHON" in os.environ or not master.startswith("local"):
        return
    os.environ["PYSPARK_PYTHON"] = sys.executable


def get_or_create_session(
    master: str | None = None, app_name: str = "sparkanon", hive: bool = False
) -> SparkSession:
    """The active session, or a new one (local mode unless spark-submit set a master).

    Args:
        master: master URL when no session exists and spark-submit set none.
        app_name: application name shown in the Spark UI.
        hive: the job reads or writes catalog tables: Spark's Hive support, with the
            user's metastore when one is configured (a cluster's ``hive-site.xml`` or
            ``--conf``), else an embedded Derby metastore and a warehouse folder in the
            working directory, or in ``$SPARKANON_WAREHOUSE`` (:func:`local_warehouse_conf`).

    Returns:
        A session with Arrow-based pandas UDFs and the session time zone ``UTC``
        (:data:`SESSION_TIME_ZONE`; a zone set by spark-submit's conf wins: timestamps are
        still read as the instants they are, :meth:`SparkEngine.instant_zones`).
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(app_name)
    # Under spark-submit the driver talks to an existing JVM (PYSPARK_GATEWAY_PORT is
    # set) whose conf already holds the master; otherwise default to local mode.
    if master or not os.environ.get("PYSPARK_GATEWAY_PORT"):
        builder = builder.master(master or "local[*]")
        # (Under spark-submit the driver already runs the interpreter the workers use.)
        _use_driver_python(master or "local[*]")
    if hive:
        builder = builder.enableHiveSupport()
        folder = os.environ.get("SPARKANON_WAREHOUSE") or os.getcwd()
        for key, value in local_warehouse_conf(folder).items():
            if not _user_set(key):
                builder = builder.config(key, value)
    if not _user_set("spark.sql.adaptive.enabled"):
        # Adaptive execution runs every shuffle of a query as a job of its own (the
        # Adult job launched 31 jobs with it, 17 without) to re-plan between them;
        # sparkanon's queries are group-by-block UDFs and small aggregations whose
        # partitioning it sets itself, so it gains nothing here. A spark-submit
        # --conf spark.sql.adaptive.enabled=... wins.
        builder = builder.config("spark.sql.adaptive.enabled", "false")
    for key, value in SESSION_CONF.items():
        if not _user_set(key):
            builder = builder.config(key, value)
    return (
        builder.config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", os.environ.get("SPARKANON_SHUFFLE_PARTITIONS", "8"))
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )


def connect_session(remote: str) -> SparkSession:
    """A session on a Spark Connect server (``sc://host:port``), set up as sparkanon runs.

    The server owns the executors and the catalog; sparkanon's runtime settings (Arrow,
    shuffle partitions, adaptive execution off unless the server's conf says otherwise)
    are set on the session.

    Raises:
        ConfigError: the Spark Connect client's packages are missing, or the URL is not
            ``sc://``.
    """
    from sparkanon.errors import ConfigError

    if not remote.startswith("sc://"):
        raise ConfigError(f"--remote {remote!r}: a Spark Connect URL starts with sc://")
    try:
        import pyspark.sql.connect.session  # noqa: F401 - needs grpcio and friends
    except ImportError as exc:
        raise ConfigError(
            f"--remote: the Spark Connect client needs packages this environment lacks "
            f"({exc.name or exc}); install them with pip install 'sparkanon[connect]'"
        ) from None
    spark = SparkSession.builder.remote(remote).getOrCreate()
    if os.environ.get("SPARKANON_CONNECT_SHIP", "1") != "0":
        # The server's Python workers run sparkanon's functions: ship this package to
        # the session (PySpark's artifact upload) rather than require it installed there.
        spark.addArtifacts(package_zip(), pyfile=True)
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    for key, value in SESSION_CONF.items():
        spark.conf.set(key, value)
    spark.conf.set(
        "spark.sql.shuffle.partitions", os.environ.get("SPARKANON_SHUFFLE_PARTITIONS", "8")
    )
    return spark


def package_zip() -> str:
    """This sparkanon package as a zip (``sparkanon/`` at its root), for shipping to Spark.

    Made once per process in a temporary folder.
    """
    global _PACKAGE_ZIP
    if _PACKAGE_ZIP is None:
        import shutil
        import tempfile

        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        folder = tempfile.mkdtemp(prefix="sparkanon_pkg_")
        _PACKAGE_ZIP = shutil.make_archive(
            os.path.join(folder, "sparkanon"), "zip", os.path.dirname(package), "sparkanon"
        )
    return _PACKAGE_ZIP


_PACKAGE_ZIP: str | None = None


def local_warehouse_conf(folder: str) -> dict[str, str]:
    """Where an embedded metastore keeps its tables when the user configured none.

    ``<folder>/spark-warehouse`` for the tables' files and ``<folder>/metastore_db`` for
    the Derby metastore (``derby.log`` beside it), Spark's own defaults spelt out so
    that they do not depend on where the JVM happens to start. A key the user set
    (``--conf``, ``spark-defaults.conf``) wins, and a ``hive-site.xml`` naming another
    metastore is used unchanged. The embedded Derby metastore admits one process at a
    time: a second job started in the same folder while one runs fails at its start.
    """
    return {
        "spark.sql.warehouse.dir": os.path.join(folder, "spark-warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={os.path.join(folder, 'metastore_db')};create=true"
        ),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={folder}",
    }


def _user_set(key: str) -> bool:
    """Whether the Spark conf given to spark-submit (or spark-defaults) sets ``key``."""
    from pyspark import SparkConf, SparkContext

    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        SparkContext._ensure_initialized()  # noqa: SLF001 - spark-submit's gateway
    return bool(SparkConf().contains(key))


class _JvmStderr(io.TextIOBase):
    """A text stream that writes to the JVM's standard error through the py4j gateway."""

    def __init__(self, err: object) -> None:
        self._err = err

    def writable(self) -> bool:  # noqa: D102
        return True

    def write(self, text: str) -> int:  # noqa: D102
        self._err.print(text)  # type: ignore[attr-defined]
        return len(text)

    def flush(self) -> None:  # noqa: D102
        self._err.flush()  # type: ignore[attr-defined]


def spark_submit_stderr() -> io.TextIOBase | None:
    """Under ``spark-submit``, a stream to the real standard error; else ``None``.

    spark-submit starts the Python driver with its standard error merged into its
    standard output (Spark's ``PythonRunner`` redirects the error stream), so
    anything Python writes to ``sys.stderr`` lands on spark-submit's stdout, mixed
    with the metrics. Writing through the JVM's ``System.err`` reaches spark-submit's
    stderr. The gateway already runs under spark-submit, so this starts nothing.
    """
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):
        return None
    from pyspark import SparkContext

    SparkContext._ensure_initialized()  # noqa: SLF001 - connects to spark-submit's gateway
    jvm = SparkContext._jvm  # noqa: SLF001
    return _JvmStderr(jvm.java.lang.System.err) if jvm is not None else None
