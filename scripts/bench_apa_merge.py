"""Time APA's group merging stage on one block of RT records, against the old quadratic scan.

The block is the first ``--rows`` records of a file made by ``scripts/generate_rt.py``
(no relational cut: a reconcile chunk looks like this). Anatomize and Partition run
as in :func:`sparkanon.algorithms.transaction.apa.apa`; then ``merge_groups`` and, with
``--reference``, the old scan kept in ``tests/_apa_reference.py`` run on the same input
and must agree.

Example:
    python scripts/generate_rt.py --rows 100000 --out /tmp/rt_100k.parquet --seed 0
    for n in 5000 20000 80000; do
      python scripts/bench_apa_merge.py /tmp/rt_100k.parquet --rows $n --l 5 --reference
    done
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sparkanon.algorithms.transaction._result import partition_rows, set_codes  # noqa: E402
from sparkanon.algorithms.transaction.anatomize import anatomize  # noqa: E402
from sparkanon.algorithms.transaction.apa import merge_groups  # noqa: E402
from sparkanon.attributes.hierarchy import load_arx_hierarchy  # noqa: E402
from sparkanon.attributes.itemsets import ItemSets, ItemTree  # noqa: E402

HIERARCHY = ROOT / "data" / "completejourney" / "items_hierarchy.csv"


def merge_input(path: Path, rows: int, k: int, l: int) -> tuple[np.ndarray, np.ndarray]:  # noqa: E741
    """The groups and published-set codes APA hands to its merging stage for one block."""
    tree = ItemTree.of(load_arx_hierarchy(HIERARCHY, "items"))
    leaf = tree.leaf_codes()
    items = pq.read_table(path, columns=["items"]).slice(0, rows).column("items").to_pylist()
    sets = ItemSets.from_lists([leaf[i] for i in row] for row in items)
    anatomy = anatomize(set_codes(sets)[0], l)
    reason = anatomy.reason.copy()
    stay, published = partition_rows(sets, np.flatnonzero(anatomy.group >= 0), tree, k, reason)
    group = np.full(len(sets), -1, dtype=np.int64)
    group[stay] = anatomy.group[stay]
    code = np.full(len(sets), -1, dtype=np.int64)
    code[stay] = set_codes(published)[0]
    return group, code


def main() -> None:
    """Parse the arguments, time the merge (and the reference), print one line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("input", type=Path, help="Parquet file of generate_rt.py")
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--l", type=int, default=5)
    parser.add_argument("--reference", action="store_true", help="also time the old scan")
    args = parser.parse_args()
    group, code = merge_input(args.input, args.rows, args.k, args.l)
    start = time.perf_counter()
    merged, out = merge_groups(group, code, args.l)
    line = (
        f"rows={args.rows} l={args.l} groups_in={np.unique(group[group >= 0]).size} "
        f"groups_out={np.unique(merged[merged >= 0]).size} suppressed={int(out.sum())} "
        f"merge_s={time.perf_counter() - start:.3f}"
    )
    if args.reference:
        from tests._apa_reference import reference_merge_groups

        start = time.perf_counter()
        old = reference_merge_groups(group, code, args.l)
        same = np.array_equal(old[0], merged) and np.array_equal(old[1], out)
        line += f" reference_s={time.perf_counter() - start:.3f} same={same}"
    print(line, flush=True)


if __name__ == "__main__":
    main()
