"""The run key and its keyed draws (sparkanon.randomness)."""

from __future__ import annotations

import pickle
import stat

import numpy as np
import pytest

from sparkanon.errors import ConfigError
from sparkanon.randomness import KEY_ENV, RunKey, counter_blocks, write_key_file

FIPS_KEY = bytes(range(32))


def test_aes256_known_answer_of_fips197():
    # FIPS-197 appendix C.3: key 00..1f, plaintext 00112233..eeff -> 8ea2b7ca516745bf...
    key = RunKey(FIPS_KEY, "user", "fips")
    counter = np.array([int.from_bytes(bytes.fromhex("8899aabbccddeeff"), "little")], np.uint64)
    word = key.words(0x33221100, counter, lane=0x77665544)
    assert int(word[0]).to_bytes(8, "little").hex() == "8ea2b7ca516745bf"


def test_counter_blocks_lay_out_stream_lane_counter():
    blocks = counter_blocks(1, 2, np.array([3, -1]))
    assert blocks.shape == (2, 16)
    assert bytes(blocks[0]).hex() == "01000000" + "02000000" + "0300000000000000"
    assert bytes(blocks[1][8:]) == b"\xff" * 8  # a signed counter by its two's complement
    with pytest.raises(ValueError, match="stream"):
        counter_blocks(2**32, 0, np.array([1]))
    with pytest.raises(ValueError, match="lane"):
        counter_blocks(0, -1, np.array([1]))
    with pytest.raises(ValueError, match="integer array"):
        counter_blocks(0, 0, np.array([1.5]))


def test_draws_depend_on_counter_only_not_on_batch_or_order():
    key = RunKey.draw()
    ids = np.arange(1000, dtype=np.int64)
    whole = key.uniforms(5, ids)
    halves = np.concatenate([key.uniforms(5, ids[:400]), key.uniforms(5, ids[400:])])
    np.testing.assert_array_equal(whole, halves)
    order = np.random.default_rng(0).permutation(1000)
    np.testing.assert_array_equal(key.uniforms(5, ids[order]), whole[order])
    assert key.uniforms(5, ids.reshape(10, 100)).shape == (10, 100)


def test_streams_lanes_and_keys_are_independent():
    key = RunKey.draw()
    ids = np.arange(2000)
    base = key.uniforms(1, ids)
    for other in (
        key.uniforms(2, ids),
        key.uniforms(1, ids, lane=1),
        RunKey.draw().uniforms(1, ids),
    ):
        assert not np.any(other == base)
        assert abs(np.corrcoef(other, base)[0, 1]) < 0.1


def test_extreme_words_give_uniforms_strictly_inside_0_1(monkeypatch):
    key = RunKey.draw()
    extremes = np.array([0, 2**64 - 1], dtype=np.uint64)
    monkeypatch.setattr(RunKey, "words", lambda self, stream, counters, lane=0: extremes)
    u = key.uniforms(0, np.arange(2))
    assert u[0] == 2.0**-53 and u[1] == 1.0 - 2.0**-53
    assert 0.0 < u.min() and u.max() < 1.0


def test_uniforms_are_in_the_open_interval_and_uniform():
    u = RunKey.draw().uniforms(0, np.arange(200_000))
    assert u.min() > 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 5 * np.sqrt(1 / 12 / u.size)
    counts = np.bincount((u * 20).astype(int), minlength=20)
    chi2 = float(((counts - u.size / 20) ** 2 / (u.size / 20)).sum())
    assert chi2 < 50.0  # 19 degrees of freedom: p < 1e-4 above 50


def test_same_key_same_draws_and_pickled_key_draws_the_same():
    key = RunKey(FIPS_KEY, "user", "audit")
    again = RunKey.from_text(FIPS_KEY.hex(), "audit", "test")
    ids = np.arange(50)
    np.testing.assert_array_equal(key.uniforms(3, ids), again.uniforms(3, ids))
    np.testing.assert_array_equal(key.words(3, ids), pickle.loads(pickle.dumps(key)).words(3, ids))


def test_the_key_is_never_shown():
    key = RunKey(FIPS_KEY, "user", "audit")
    for text in (repr(key), str(key), str(key.describe())):
        assert FIPS_KEY.hex() not in text.lower()
    assert key.describe() == {"key": "user", "label": "audit"}
    assert "drawn" in RunKey.draw().describe()["key"]
    assert key.appears_in(b"x" + FIPS_KEY.hex().upper().encode() + b"y")
    assert key.appears_in(b"prefix" + FIPS_KEY)
    assert not key.appears_in(FIPS_KEY.hex()[:-2].encode())


def test_key_file_is_owner_only_never_overwritten_and_read_back(tmp_path):
    path = write_key_file(tmp_path / "release.key")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(ConfigError, match="never overwritten"):
        write_key_file(path)
    key = RunKey.from_file(path)
    assert key.origin == "user" and key.label == "release.key"
    np.testing.assert_array_equal(
        key.words(0, np.arange(4)), RunKey.from_file(path, "again").words(0, np.arange(4))
    )


def test_a_bad_key_is_refused_without_echoing_it(tmp_path, monkeypatch):
    bad = tmp_path / "bad.key"
    bad.write_text("abc123 not a key", encoding="ascii")
    with pytest.raises(ConfigError) as err:
        RunKey.from_file(bad)
    assert "64 hexadecimal digits" in str(err.value) and "abc123" not in str(err.value)
    with pytest.raises(ConfigError, match="cannot be read"):
        RunKey.from_file(tmp_path / "missing.key")
    monkeypatch.delenv(KEY_ENV, raising=False)
    assert RunKey.from_env() is None
    monkeypatch.setenv(KEY_ENV, FIPS_KEY.hex())
    assert RunKey.from_env().describe() == {"key": "user", "label": KEY_ENV}
