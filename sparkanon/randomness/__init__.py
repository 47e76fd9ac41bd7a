"""Secret randomness: the per-run key and the keyed pseudorandom function over counters.

Every random draw that protects privacy (additive noise, randomized response, synthetic
records, the order and the ids of a release) is a function of a :class:`RunKey` and of
counters the code chooses (a stream per purpose, a lane within it, a row or group number):
:meth:`RunKey.uniforms` and :meth:`RunKey.words`. The function is AES-256 applied to one
16-byte counter block per draw (:func:`counter_blocks`), that is AES in counter mode with
random access, through the ``cryptography`` library's OpenSSL binding: without the key its
output cannot be told from random bits (AES as a pseudorandom permutation, Bellare and
Rogaway's CTR analysis), and with the key anyone can recompute it. So:

* a run draws its key from the operating system's CSPRNG (:meth:`RunKey.draw`) and never
  writes it: not to the release, the logs, the metrics or the table properties; a task
  retried within the run computes the same draws (the key travels with the task);
* a rerun of the same config draws another key and publishes other draws, unless the user
  passes a key of their own (:meth:`RunKey.from_file`, :meth:`RunKey.from_env`) to
  reproduce a release (a backfill, an audit); the release then records only that a user
  key was used and the label the user gave it (:meth:`RunKey.describe`).

Draws are counter-based: a row's draw does not depend on how the rows are split into
batches or partitions, nor on their order.
"""

from sparkanon.randomness.key import (
    KEY_BYTES,
    KEY_ENV,
    RunKey,
    counter_blocks,
    write_key_file,
)

__all__ = ["KEY_BYTES", "KEY_ENV", "RunKey", "counter_blocks", "write_key_file"]
