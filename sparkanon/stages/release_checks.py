"""Stage ``release_checks``: cheap checks that a staged release does not lead back to its input.

The runner runs them on every family's release, after verification and before the commit
(:mod:`sparkanon.pipeline`); a failure raises :class:`PrivacyViolationError` (exit 3) and
nothing is written. Each check's outcome goes to ``metrics.json`` (``release_checks``: a
list of ``{"attack", "outcome", "passed"}``, ``passed`` ``None`` for a check that could not
run) and from there to ``evaluation.json`` (``attacks_run``) and the report.

**Input order** (:func:`order_checks`). The driver never sees the rows: per published
table the engine numbers the rows in their published order (:meth:`Engine.with_row_id` on
the table read back from the staged files, so the order a reader sees) and draws a
Bernoulli sample of about :data:`SAMPLE_ROWS` rows, which alone is collected. On it:

* *rank correlation*: each integer-valued column (every non-null sampled value a whole
  number, whatever the file format) against the published row position, Spearman's rho,
  over the sample's *distinct* rows (each at its first position): a keyed order puts
  equal rows side by side (their sort value is a function of the row), so a release of
  few distinct rows is a random order of a few runs, and a column constant on each run
  would show a large rho by chance if every row counted. The check fails when
  ``|rho| >= MAX_RANK_CORRELATION`` and ``|rho| * sqrt(n - 1) >= RANK_Z`` (``n`` distinct
  rows, at least :data:`MIN_ROWS`; under a random order ``rho * sqrt(n - 1)`` is about
  standard normal). While a release keeps its input's order the published position
  stands for the input position, so a column that is the input position, or monotone
  in it, fails;
* *linkage*: the published row position and each integer-valued column are used as an
  input row number (as it is, and as a 1-based number minus one) and joined, by the
  engine, to at most :data:`LINK_ROWS` input rows; a column the published table shares
  with the input (same name) is compared value for value. The check fails when the
  agreement exceeds the agreement two unrelated rows would have (the sum over values of
  the product of both sides' shares, from the same sampled pairs) by
  :data:`LINK_MARGIN` or more and by :data:`LINK_Z` standard errors of the chance
  agreement, on at least :data:`MIN_LINK_ROWS` distinct input rows. This
  catches a published order that is the input's (row ``i`` published from input row
  ``i``) and an id column that is the input position in any order, a kept input column
  that numbers the input's rows included: such a column is a row link whatever the
  config calls it, and the failure says to declare it an identifier (dropped).

The published rows carry no input position at this point (the families drop their row id
before staging), so the rank correlation of the published position with the input
position itself is reported as not checked; the linkage check above stands in for it.

**Run key** (:func:`key_scan`). Every file under the staging folder is read on the driver
in chunks of :data:`CHUNK_BYTES` (the tail of a chunk is kept so a key across two chunks
is found), and the texts about to be written at the commit (``metrics.json``, the
config) are scanned too: any spelling of the run key (:meth:`RunKey.appears_in`) fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.attributes.schema import RID
from sparkanon.engine.base import Engine, Table
from sparkanon.errors import PrivacyViolationError
from sparkanon.randomness import RunKey

SAMPLE_ROWS = 4000
"""About how many published rows per table the order checks sample and collect."""
LINK_ROWS = 1000
"""How many sampled rows per locator the linkage check joins to the input."""
MIN_ROWS = 100
"""Fewest rows the rank correlation needs to give a verdict."""
MIN_LINK_ROWS = 30
"""Fewest distinct input rows a locator must reach for the linkage check to give a verdict."""
LINK_Z = 5.0
"""How many standard errors above chance a link must also be (the margin alone would be
noise on a few dozen rows). Each release tests several locators and columns, on as few as
:data:`MIN_LINK_ROWS` rows, where the binomial tail is heavier than the normal one: four
standard errors failed about one small random release in a few thousand (65% against 36%
on 43 rows); five keeps a false alarm under one in a million per comparison, as
:data:`RANK_Z` does, while a release in its input's order still agrees far beyond it."""
MAX_RANK_CORRELATION = 0.2
"""The largest ``|rho|`` an integer column may have with the published order."""
RANK_Z = 5.0
"""How many standard errors (``1 / sqrt(n - 1)``) from zero a failing ``rho`` must also be
(the limit alone would be noise on a hundred rows; five keeps a false alarm under one in a
million per column)."""
LINK_MARGIN = 0.2
"""How far above chance the agreement of linked rows may not reach."""
CHUNK_BYTES = 4 << 20
"""The largest piece of a staged file the key scan reads at once."""
POSITION = "_release_position"
"""The published row position the engine adds to a sampled table."""
_LOCATOR = "_release_locator"
_SAMPLE_SEED = 20260
_ARRAY_PREFIX = "array"


def outcome(attack: str, text: str, passed: bool | None) -> dict[str, Any]:
    """One entry of ``metrics["release_checks"]``."""
    return {"attack": attack, "outcome": text, "passed": passed}


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation (average ranks for ties); 0 when a side is constant."""
    rx = pd.Series(x).rank(method="average").to_numpy(dtype=float)
    ry = pd.Series(y).rank(method="average").to_numpy(dtype=float)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    scale = float(np.sqrt((rx * rx).sum() * (ry * ry).sum()))
    return float((rx * ry).sum() / scale) if scale > 0 else 0.0


def integer_values(values: pd.Series) -> pd.Series | None:
    """The column as int64 when every non-null value is a whole number (text included)."""
    present = values.dropna()
    if present.empty or present.map(lambda v: isinstance(v, bool)).any():
        return None
    numbers = pd.to_numeric(present, errors="coerce")
    if numbers.isna().any() or not np.all(np.isfinite(numbers.to_numpy(dtype=float))):
        return None
    as_float = numbers.to_numpy(dtype=float)
    if not np.all(as_float == np.round(as_float)) or np.abs(as_float).max() >= 2.0**62:
        return None
    return pd.Series(as_float.astype(np.int64), index=present.index)


def comparable(values: pd.Series) -> np.ndarray:
    """Values as texts that compare equal across file formats (``39``, ``"39"``, ``39.0``)."""
    numbers = pd.to_numeric(values, errors="coerce")
    texts = values.astype(str).to_numpy(dtype=object)
    numeric = numbers.notna().to_numpy()
    texts[numeric] = [repr(float(v)) for v in numbers[numeric]]
    texts[values.isna().to_numpy()] = None
    return texts


def agreement_over_chance(published: np.ndarray, original: np.ndarray) -> tuple[float, float]:
    """The share of pairs whose two values are equal, and the share expected by chance.

    Chance is ``sum_v p(v) q(v)``, ``p`` and ``q`` the two sides' value shares over the
    same pairs: what pairing the rows at random would give.
    """
    keep = np.array(
        [a is not None and b is not None for a, b in zip(published, original, strict=True)]
    )
    if not keep.any():
        return 0.0, 0.0
    a, b = published[keep], original[keep]
    agree = float(np.mean(a == b))
    p = pd.Series(a).value_counts(normalize=True)
    q = pd.Series(b).value_counts(normalize=True)
    chance = float((p * q.reindex(p.index, fill_value=0.0)).sum())
    return agree, chance


def _sample(engine: Engine, table: Table, columns: Sequence[str]) -> pd.DataFrame:
    """At most about :data:`SAMPLE_ROWS` published rows with their published position."""
    rows = engine.count(table)
    numbered = engine.with_row_id(engine.select(table, list(columns)), POSITION)
    fraction = min(1.0, SAMPLE_ROWS / rows) if rows else 1.0
    picked = engine.sample(numbered, fraction, _SAMPLE_SEED) if fraction < 1.0 else numbered
    return engine.collect_small(picked, 2 * SAMPLE_ROWS + 1000)


def distinct_rows(frame: pd.DataFrame) -> pd.Index:
    """The index of each distinct row's first occurrence in published order (position aside)."""
    values = frame.drop(columns=[POSITION]).sort_index()
    if values.columns.empty:
        return values.index[:1]
    first = ~values.astype(str).duplicated(keep="first")
    return values.index[first.to_numpy()]


def rank_failed(rho: float, n: int) -> bool:
    """Whether ``rho`` over ``n`` rows is both large and far beyond a random order's."""
    return abs(rho) >= MAX_RANK_CORRELATION and abs(rho) * np.sqrt(max(n - 1, 0)) >= RANK_Z


def _rank_outcome(name: str, frame: pd.DataFrame, integers: Mapping[str, pd.Series]) -> dict:
    attack = f"rank correlation of integer columns with the published order ({name})"
    if not integers:
        return outcome(attack, "no integer-valued column to check", True)
    distinct = distinct_rows(frame)
    worst: tuple[bool, float, float, str, int] | None = None
    short = []
    for column, values in integers.items():
        values = values.reindex(distinct).dropna()
        if len(values) < MIN_ROWS or values.nunique() < 2:
            short.append(column)
            continue
        rho = spearman(values.to_numpy(), frame.loc[values.index, POSITION].to_numpy())
        candidate = (rank_failed(rho, len(values)), abs(rho), rho, column, len(values))
        if worst is None or candidate[:2] > worst[:2]:
            worst = candidate
    if worst is None:
        return outcome(
            attack, f"not checked: fewer than {MIN_ROWS} distinct rows or one value", None
        )
    failed, _, rho, column, rows = worst
    passed = not failed
    verdict = "within" if passed else "beyond"
    text = (
        f"largest is {column!r}: {rho:.2f} over {rows:,} distinct sampled rows, {verdict} "
        f"what a random order gives (limit {MAX_RANK_CORRELATION:.1f} and "
        f"{RANK_Z:.0f} standard errors)"
    )
    if short:
        text += f"; {len(short)} column(s) with too few rows or one value not checked"
    return outcome(attack, text, passed)


def _locators(frame: pd.DataFrame, integers: Mapping[str, pd.Series]) -> pd.DataFrame:
    """Candidate input row numbers: the position and each integer column (0- and 1-based)."""
    parts = []
    head = frame.head(LINK_ROWS)
    candidates = {"the published row position": head[POSITION].astype(np.int64)}
    candidates |= {repr(c): v.reindex(head.index).dropna() for c, v in integers.items()}
    for name, values in candidates.items():
        for shift, label in ((0, name), (1, f"{name} minus one")):
            part = pd.DataFrame(
                {
                    _LOCATOR: label,
                    RID: values.to_numpy(dtype=np.int64) - shift,
                    "_release_row": values.index.to_numpy(dtype=np.int64),
                }
            )
            parts.append(part)
    return pd.concat(parts, ignore_index=True)


def link_failed(agree: float, chance: float, rows: int) -> bool:
    """Whether an agreement over ``rows`` distinct input rows is a link, not chance.

    It must exceed chance by :data:`LINK_MARGIN` and by :data:`LINK_Z` standard errors
    of the chance agreement (``sqrt(chance (1 - chance) / rows)``).
    """
    error = np.sqrt(max(chance * (1.0 - chance), 1e-12) / max(rows, 1))
    return agree - chance >= LINK_MARGIN and agree - chance >= LINK_Z * error


def _link_outcome(
    engine: Engine,
    name: str,
    frame: pd.DataFrame,
    integers: Mapping[str, pd.Series],
    original: Table,
    shared: Sequence[str],
) -> dict:
    attack = f"published rows linked to input rows by position or id ({name})"
    if not shared:
        return outcome(attack, "not checked: no column shared with the input", None)
    locators = _locators(frame, integers)
    small = engine.from_pandas(
        locators, [(_LOCATOR, "string"), (RID, "long"), ("_release_row", "long")]
    )
    joined = engine.join(small, engine.select(original, [RID, *shared]), [RID])
    pairs = engine.collect_small(joined, len(locators) + 1)
    worst: tuple[float, float, float, str, str] | None = None
    failed = False
    for label, group in pairs.groupby(_LOCATOR, sort=True):
        reached = group[RID].nunique()
        if reached < MIN_LINK_ROWS:
            continue
        published = frame.loc[group["_release_row"].to_numpy()]
        for column in shared:
            agree, chance = agreement_over_chance(
                comparable(published[column].reset_index(drop=True)),
                comparable(group[column].reset_index(drop=True)),
            )
            linked = link_failed(agree, chance, reached)
            if worst is None or (linked, agree - chance) > (failed, worst[0]):
                worst = (agree - chance, agree, chance, str(label), column)
                failed = failed or linked
    if worst is None:
        return outcome(
            attack, f"not checked: no locator reaches {MIN_LINK_ROWS} distinct input rows", None
        )
    _, agree, chance, label, column = worst
    passed = not failed
    text = (
        f"closest: {label} picks input rows agreeing on {column!r} for {agree:.0%} of the "
        f"sampled rows against {chance:.0%} by chance"
    )
    if passed:
        text += "; no link beyond chance"
    elif label.startswith("the published row position"):
        text += "; the release is written in its input's order"
    else:
        column_name = label.removesuffix(" minus one")
        text += (
            f"; the column {column_name} numbers the input's rows: declare it under "
            "identifiers so it is dropped"
        )
    return outcome(attack, text, passed)


def order_checks(
    engine: Engine, tables: Mapping[str, Table], original: Table | None
) -> list[dict[str, Any]]:
    """The input-order checks of every published table (see the module docstring).

    Args:
        engine: the engine.
        tables: the staged published tables by name (read back from their files).
        original: the input rows with their input position (:data:`RID`), or ``None``
            (then the linkage check is reported as not checked).

    Returns:
        The outcomes, three per table.
    """
    results = []
    input_columns = {c for c, _ in engine.schema_of(original)} if original is not None else set()
    for name, table in tables.items():
        columns = [
            c for c, t in engine.schema_of(table) if not t.startswith(_ARRAY_PREFIX) and c != RID
        ]
        frame = _sample(engine, table, columns)
        integers = {}
        for column in columns:
            values = integer_values(frame[column])
            if values is not None:
                integers[column] = values
        results.append(_rank_outcome(name, frame, integers))
        results.append(
            outcome(
                f"rank correlation of the published order with the input order ({name})",
                "not checked: the published rows carry no input position at this point; "
                "the linkage check compares their values with the input rows instead",
                None,
            )
        )
        if original is None:
            results.append(
                outcome(
                    f"published rows linked to input rows by position or id ({name})",
                    "not checked: the input rows are not available",
                    None,
                )
            )
            continue
        shared = [c for c in columns if c in input_columns]
        results.append(_link_outcome(engine, name, frame, integers, original, shared))
    return results


def key_scan(
    engine: Engine,
    key: RunKey,
    directory: str | None,
    texts: Mapping[str, str] | None = None,
    skip: Iterable[str] = (),
) -> tuple[dict[str, Any], list[str]]:
    """Whether the run key appears in any staged file or text about to be written.

    Args:
        engine: the engine (it lists and reads the files).
        key: the run key.
        directory: the staging folder (``None``: nothing is written; only ``texts``).
        texts: texts the commit will write, by name (``metrics.json``...).
        skip: files already scanned (a second pass reads only the new ones).

    Returns:
        The outcome and the files scanned.
    """
    attack = "the run key searched for in every published file"
    if directory is None and not texts:
        return outcome(attack, "not checked: the run writes no file", None), []
    tail = max(len(f) for f in key.fingerprints()) - 1
    found = []
    done = set(skip)
    scanned = []
    for path in engine.list_files(directory) if directory is not None else []:
        if path in done:
            continue
        scanned.append(path)
        previous = b""
        for chunk in engine.read_chunks(path, CHUNK_BYTES):
            window = previous + chunk
            if key.appears_in(window):
                found.append(path.rsplit("/", 1)[-1])
                break
            previous = window[-tail:]
    for name, text in (texts or {}).items():
        if key.appears_in(text.encode("utf-8")):
            found.append(name)
    files = len(scanned) + len(done) + len(texts or {})
    if found:
        return outcome(attack, f"the key was found in {', '.join(found)}", False), scanned
    noun = "file" if files == 1 else "files"
    return outcome(attack, f"not found in {files:,} {noun}", True), scanned


def raise_failures(checks: Sequence[Mapping[str, Any]]) -> None:
    """Refuse the release when a check failed.

    Raises:
        PrivacyViolationError: a check's ``passed`` is ``False`` (exit 3).
    """
    failed = [c for c in checks if c.get("passed") is False]
    if failed:
        what = "; ".join(f"{c['attack']}: {c['outcome']}" for c in failed)
        raise PrivacyViolationError(f"release check failed: {what}; nothing was written")
