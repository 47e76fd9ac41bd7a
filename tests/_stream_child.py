"""The streaming query of the kill-and-restart test, run in a process of its own.

``python tests/_stream_child.py <folder> <trigger>``: streams ``<folder>/in`` through the
counting step (``tests._stream_step``) to ``<folder>/out`` with the checkpoint
``<folder>/ck``, key ``a`` starting from an initial count of 100, at most one file per
batch; prints ``batch <id> <rows in> <rows out>`` as each batch ends. ``<folder>/ctl``
is the step's control folder. With a processing-time trigger it runs until killed (two
minutes at most).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")

import pandas as pd  # noqa: E402

from sparkanon.engine.streaming import StreamSpec, run_stateful_stream  # noqa: E402
from tests._inputs import local_session_builder  # noqa: E402
from tests._stream_step import INPUT_COLUMNS, OUTPUT_SCHEMA, count_state, counting_step  # noqa: E402


def main(folder: Path, trigger: str) -> None:
    """Run the stream of ``folder`` with ``trigger``."""
    spark = local_session_builder("sparkanon-stream-child").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spec = StreamSpec(
        source=str(folder / "in"),
        source_format="csv",
        options={"header": "true"},
        columns=INPUT_COLUMNS,
        key="k",
        sink=str(folder / "out"),
        sink_format="parquet",
        checkpoint=str(folder / "ck"),
        trigger=trigger,
        max_files_per_trigger=1,
    )
    initial = pd.DataFrame({"key": ["a"], "state": [count_state(100)]})
    result = run_stateful_stream(
        spark,
        spec,
        counting_step(str(folder / "ctl")),
        OUTPUT_SCHEMA,
        initial_state=initial,
        batch_hook=lambda b: print(
            f"batch {b.batch_id} {b.input_rows} {b.output_rows}", flush=True
        ),
        stop_after_seconds=None if trigger == "available_now" else 120,
        poll_seconds=0.1,
    )
    print(f"done {len(result.batches)} {result.rows_in} {result.rows_out}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
