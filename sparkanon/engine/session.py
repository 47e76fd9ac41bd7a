"""Creating the SparkSession the job runs on."""

from __future__ import annotations

import os

from pyspark.sql import SparkSession


def get_or_create_session(master: str | None = None, app_name: str = "sparkanon") -> SparkSession:
    """The active session, or a new one (local mode unless spark-submit set a master).

    Args:
        master: master URL when no session exists and spark-submit set none.
        app_name: application name shown in the Spark UI.

    Returns:
        A session with Arrow-based pandas UDFs.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(app_name)
    # Under spark-submit the driver talks to an existing JVM (PYSPARK_GATEWAY_PORT is
    # set) whose conf already holds the master; otherwise default to local mode.
    if master or not os.environ.get("PYSPARK_GATEWAY_PORT"):
        builder = builder.master(master or "local[*]")
    return (
        builder.config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", os.environ.get("SPARKANON_SHUFFLE_PARTITIONS", "8"))
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
