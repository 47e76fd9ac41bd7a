"""The run key and AES-256 over counter blocks (see the package docstring)."""

from __future__ import annotations

import base64
import os
import secrets
import stat
from pathlib import Path

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from sparkanon.errors import ConfigError

KEY_BYTES = 32
"""A run key's length: 256 bits (AES-256)."""
KEY_ENV = "SPARKANON_KEY"
"""The environment variable a user key may come from (64 hexadecimal digits)."""
_WORD = 1 << 32
FEISTEL_ROUNDS = 4
"""Rounds of :meth:`RunKey.permute`'s Feistel network (four: a strong pseudorandom
permutation)."""
_TWO_M52 = 2.0**-52


def counter_blocks(stream: int, lane: int | np.ndarray, counters: np.ndarray) -> np.ndarray:
    """One 16-byte AES input block per counter: ``stream``, ``lane``, ``counter``.

    Bytes 0-3 hold ``stream`` and 4-7 ``lane`` (unsigned 32-bit, little-endian), 8-15 the
    counter (its 64-bit pattern: a signed counter by its two's complement). Distinct
    ``(stream, lane, counter)`` give distinct blocks, hence independent draws.

    Args:
        stream: the purpose of the draws (one per attribute, table or step), in
            ``[0, 2**32)``.
        lane: a sub-stream of ``stream``, in ``[0, 2**32)``: one for every counter, or
            an integer array of the counters' shape (a lane per counter).
        counters: integer counters (any shape; flattened).

    Returns:
        A ``(n, 16)`` uint8 array, ``n`` the number of counters.

    Raises:
        ValueError: a stream or lane out of range, counters not of an integer dtype, or
            lanes of another shape than the counters'.
    """
    if isinstance(stream, (bool, np.bool_)) or not 0 <= int(stream) < _WORD:
        raise ValueError(f"stream must be an integer in [0, 2**32), got {stream!r}")
    ids = np.asarray(counters)
    if ids.dtype.kind not in "iu":
        raise ValueError(f"counters must be an integer array, got dtype {ids.dtype}")
    lanes = np.asarray(lane)
    if lanes.ndim == 0:
        if isinstance(lane, (bool, np.bool_)) or not 0 <= int(lane) < _WORD:
            raise ValueError(f"lane must be an integer in [0, 2**32), got {lane!r}")
        high = np.uint64(int(lane) << 32)
    else:
        if lanes.dtype.kind not in "iu" or lanes.shape != ids.shape:
            raise ValueError("an array of lanes must be integers of the counters' shape")
        if lanes.size and (int(lanes.min()) < 0 or int(lanes.max()) >= _WORD):
            raise ValueError("lanes must be integers in [0, 2**32)")
        high = lanes.reshape(-1).astype(np.uint64) << np.uint64(32)
    words = np.empty((ids.size, 2), dtype="<u8")
    words[:, 0] = np.uint64(int(stream)) | high
    words[:, 1] = ids.reshape(-1).astype(np.int64, copy=False).view(np.uint64)
    return words.view(np.uint8).reshape(ids.size, 16)


class RunKey:
    """A 256-bit secret that keys every protective random draw of one run.

    Its bytes are never shown: ``repr`` and ``str`` name only where it came from. It
    pickles (a Spark task carries it to the executors), and it is compared by identity.

    Attributes:
        origin: ``run`` (drawn for this run) or ``user`` (a key file or ``SPARKANON_KEY``).
        label: the label a user gave their key (``None`` for a drawn key).
    """

    __slots__ = ("_secret", "origin", "label")

    def __init__(self, secret: bytes, origin: str, label: str | None = None) -> None:
        if not isinstance(secret, bytes) or len(secret) != KEY_BYTES:
            raise ValueError(f"a run key is {KEY_BYTES} bytes")
        self._secret = secret
        self.origin = origin
        self.label = label

    @classmethod
    def draw(cls) -> RunKey:
        """A fresh key from the operating system's CSPRNG (``secrets.token_bytes``)."""
        return cls(secrets.token_bytes(KEY_BYTES), "run")

    @classmethod
    def from_text(cls, text: str, label: str, where: str) -> RunKey:
        """A user key from its text: 64 hexadecimal digits (whitespace ignored).

        Raises:
            ConfigError: the text is not 64 hexadecimal digits (the message names
                ``where``, never the text).
        """
        digits = "".join(text.split())
        try:
            secret = bytes.fromhex(digits)
        except ValueError:
            secret = b""
        if len(secret) != KEY_BYTES:
            raise ConfigError(
                f"{where}: a key is {2 * KEY_BYTES} hexadecimal digits; "
                "write a new one with: sparkanon key FILE"
            )
        return cls(secret, "user", label)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], label: str | None = None) -> RunKey:
        """A user key read from a key file (:func:`write_key_file`); label: the file's name.

        Raises:
            ConfigError: the file cannot be read or does not hold a key.
        """
        where = f"key file {os.fspath(path)}"
        try:
            text = Path(path).read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{where}: cannot be read ({type(exc).__name__})") from None
        return cls.from_text(text, label or Path(path).name, where)

    @classmethod
    def from_env(cls, label: str | None = None) -> RunKey | None:
        """The user key of ``SPARKANON_KEY``, or ``None`` when it is not set."""
        text = os.environ.get(KEY_ENV)
        if text is None or not text.strip():
            return None
        return cls.from_text(text, label or KEY_ENV, f"environment variable {KEY_ENV}")

    @classmethod
    def for_run(cls, key_file: str | None = None, label: str | None = None) -> RunKey:
        """The key of a run: the user's key file, else ``SPARKANON_KEY``, else a fresh draw.

        Raises:
            ConfigError: a key file or variable that does not hold a key.
        """
        if key_file is not None:
            return cls.from_file(key_file, label)
        return cls.from_env(label) or cls.draw()

    def _encrypt(self, blocks: np.ndarray) -> np.ndarray:
        """AES-256 of each 16-byte block (ECB over distinct counter blocks: CTR's stream)."""
        encryptor = Cipher(algorithms.AES(self._secret), modes.ECB()).encryptor()
        out = encryptor.update(np.ascontiguousarray(blocks).tobytes()) + encryptor.finalize()
        return np.frombuffer(out, dtype="<u8").reshape(-1, 2)

    def words(self, stream: int, counters: np.ndarray, lane: int | np.ndarray = 0) -> np.ndarray:
        """64 pseudorandom bits per counter: the first half of AES(key, block).

        Args:
            stream: the purpose, in ``[0, 2**32)``.
            counters: integer counters (any shape).
            lane: a sub-stream, in ``[0, 2**32)``, or an array of them (one per counter).

        Returns:
            A uint64 array of the shape of ``counters``.
        """
        shape = np.shape(counters)
        blocks = counter_blocks(stream, lane, counters)
        return self._encrypt(blocks)[:, 0].astype(np.uint64).reshape(shape)

    def uniforms(self, stream: int, counters: np.ndarray, lane: int | np.ndarray = 0) -> np.ndarray:
        """Uniforms on the open interval (0, 1), one per counter.

        ``u = (m + 0.5) / 2**52`` with ``m`` the top 52 bits of :meth:`words`: the
        smallest is ``2**-53``, the largest ``1 - 2**-53`` (both exact in float64; with
        53 bits the largest, ``1 - 2**-54``, would round to 1), so ``log(u)`` and
        ``log(1 - u)`` are finite. The arguments are those of :meth:`words`.

        Returns:
            A float64 array of the shape of ``counters``.
        """
        top = self.words(stream, counters, lane) >> np.uint64(12)
        return (top.astype(np.float64) + 0.5) * _TWO_M52

    def permute(self, stream: int, values: np.ndarray) -> np.ndarray:
        """A keyed permutation of the 64-bit integers, applied to each value.

        A balanced Feistel network of :data:`FEISTEL_ROUNDS` rounds over the two 32-bit
        halves of each value's 64-bit pattern; round ``r``'s function is the low 32 bits
        of :meth:`words` of the right half on ``stream``, lane ``r``. A Feistel network
        is a bijection whatever its round functions, so distinct values give distinct
        results (no collision to check); with pseudorandom round functions four rounds
        make it a strong pseudorandom permutation (Luby and Rackoff 1988): without the
        key, the results tell nothing of the values' order or size.

        Args:
            stream: the purpose, in ``[0, 2**32)``.
            values: integers (any shape; their 64-bit two's complement pattern).

        Returns:
            An int64 array of the shape of ``values``.
        """
        shape = np.shape(values)
        bits = np.asarray(values).reshape(-1).astype(np.int64, copy=False).view(np.uint64)
        low32 = np.uint64(_WORD - 1)
        left, right = bits >> np.uint64(32), bits & low32
        for lane in range(FEISTEL_ROUNDS):
            mixed = self.words(stream, right.view(np.int64), lane) & low32
            left, right = right, left ^ mixed
        return ((left << np.uint64(32)) | right).view(np.int64).reshape(shape)

    def describe(self) -> dict[str, str]:
        """What a release may say of its key: where it came from, a user's label."""
        if self.origin == "user":
            return {"key": "user", "label": str(self.label)}
        return {"key": "drawn for this run and not kept"}

    def fingerprints(self) -> tuple[bytes, ...]:
        """The spellings of the key to look for in written files (raw, hex, base64)."""
        raw = self._secret
        return (
            raw,
            raw.hex().encode("ascii"),
            raw.hex().upper().encode("ascii"),
            base64.b64encode(raw),
            base64.urlsafe_b64encode(raw),
        )

    def appears_in(self, data: bytes) -> bool:
        """Whether ``data`` holds the key in one of its :meth:`fingerprints`."""
        return any(f in data for f in self.fingerprints())

    def __repr__(self) -> str:
        return f"RunKey({self.origin}{', ' + repr(self.label) if self.label else ''})"

    __str__ = __repr__

    def __getstate__(self) -> tuple[bytes, str, str | None]:
        return (self._secret, self.origin, self.label)

    def __setstate__(self, state: tuple[bytes, str, str | None]) -> None:
        self._secret, self.origin, self.label = state


def write_key_file(path: str | os.PathLike[str]) -> Path:
    """Write a new user key (64 hexadecimal digits) to ``path``, readable by its owner only.

    Raises:
        ConfigError: ``path`` exists (a key is never overwritten).
    """
    target = Path(path)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
    except FileExistsError:
        raise ConfigError(f"key file {target}: exists; a key is never overwritten") from None
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(secrets.token_bytes(KEY_BYTES).hex() + "\n")
    return target
