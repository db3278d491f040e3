"""Learned relative positions in posenc: T5's buckets and bias, Shaw et al.'s clipped relative positions.

T5 is compared with Hugging Face transformers (a test dependency, pinned 5.24.0): its
``T5Attention._relative_position_bucket`` on every offset of a wide range, and ``T5Attention.compute_bias``
on a tiny config built locally (no download). transformers takes ``s - p`` (the key's position minus the
query's) where posenc takes the book's ``k = p - s``, so every comparison passes ``-k`` to transformers.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import posenc

# transformers, imported by the first test that needs it (``_library``): importing it takes seconds, which every
# pytest-xdist worker would otherwise pay to collect this file.
T5Attention = T5Config = None


@pytest.fixture(scope="module")
def _library():
    global T5Attention, T5Config
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    transformers = pytest.importorskip("transformers")
    from transformers import T5Config
    from transformers.models.t5.modeling_t5 import T5Attention

    transformers.logging.set_verbosity_error()  # a decoder attention made without a cache warns about layer_idx


OFFSETS = np.arange(-5000, 5001)


def library_buckets(k, **rule):
    return T5Attention._relative_position_bucket(torch.from_numpy(-np.asarray(k)), **rule).numpy()


# --- T5's buckets -------------------------------------------------------------


# every setting transformers can compute: max_distance must exceed the exact buckets (it divides by
# log(max_distance / exact)), which rules out 16 for 32 or more buckets a direction
SETTINGS = [
    (bidirectional, num_buckets, max_distance)
    for bidirectional in (True, False)
    for num_buckets in (8, 9, 32, 33, 64)
    for max_distance in (16, 128, 1000)
    if max_distance > (num_buckets // 2 if bidirectional else num_buckets) // 2
]


@pytest.mark.parametrize("bidirectional, num_buckets, max_distance", SETTINGS)
def test_t5_buckets_equal_transformers_on_every_offset(_library, bidirectional, num_buckets, max_distance):
    rule = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    ours = posenc.t5_relative_position_bucket(OFFSETS, **rule)
    assert ours.dtype == np.int64 and ours.shape == OFFSETS.shape
    np.testing.assert_array_equal(ours, library_buckets(OFFSETS, **rule))


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets", [8, 32, 64])
def test_t5_buckets_equal_transformers_for_every_max_distance_up_to_400(_library, bidirectional, num_buckets):
    """The docstring's claim: the exact boundaries and transformers' float32 logarithms agree for these settings."""
    exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    k = np.arange(-450, 451)
    for max_distance in range(exact + 1, 401):
        rule = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
        ours = posenc.t5_relative_position_bucket(k, **rule)
        np.testing.assert_array_equal(ours, library_buckets(k, **rule), err_msg=str(rule))


def test_t5_boundaries_are_exact_where_float32_is_not(_library):
    """Causal, 17 buckets up to 27: (18/8)**9 == (27/8)**6, so distance 18 opens bucket 8 + 6 = 14."""
    rule = dict(bidirectional=False, num_buckets=17, max_distance=27)
    assert 18**9 * 8**6 == 27**6 * 8**9
    assert posenc.t5_relative_position_bucket([17, 18], **rule).tolist() == [13, 14]
    assert library_buckets([18], **rule).tolist() == [13]  # float32 logarithms land just below 6


def test_t5_buckets_in_the_book_sign_and_their_shape():
    k = np.arange(-200, 201)
    encoder = posenc.t5_relative_position_bucket(k)
    # keys at or behind the query (k >= 0) use the first half, keys ahead the second; distance 0 is bucket 0
    assert np.all(encoder[k >= 0] < 16) and np.all(encoder[k < 0] >= 16) and encoder[k == 0].item() == 0
    assert 16 not in encoder  # "distance 0, ahead" cannot happen
    np.testing.assert_array_equal(encoder[k > 0], encoder[k < 0][::-1] - 16)  # the same ladder either way
    # exact for distances 0 ... 7, then logarithmic; the last bucket starts at 91 (the docstring's number)
    np.testing.assert_array_equal(posenc.t5_relative_position_bucket(np.arange(8)), np.arange(8))
    starts = [int(np.argmax(encoder[200:] == b)) for b in range(8, 16)]
    assert starts == [8, 12, 16, 23, 32, 46, 64, 91]
    assert starts == [8] + [math.ceil(8 * 16 ** (j / 8) - 1e-9) for j in range(1, 8)]
    decoder = posenc.t5_relative_position_bucket(k, bidirectional=False)
    assert np.all(decoder[k <= 0] == 0) and np.all(np.diff(decoder[k >= 0]) >= 0) and decoder.max() == 31
    # any shape, scalars, lists, torch tensors and offsets far beyond max_distance
    assert posenc.t5_relative_position_bucket(3).shape == ()
    grid = np.arange(12).reshape(3, 4) - 6
    np.testing.assert_array_equal(posenc.t5_relative_position_bucket(torch.from_numpy(grid)), encoder[grid + 200])
    far = np.array([np.iinfo(np.int64).min, -(10**12), 10**12, np.iinfo(np.int64).max])
    assert posenc.t5_relative_position_bucket(far).tolist() == [31, 31, 15, 15]


def test_t5_buckets_at_the_largest_settings():
    k = np.array([-(2**40), -5, 0, 5, 2**40 - 1, 2**40])
    got = posenc.t5_relative_position_bucket(k, num_buckets=4096, max_distance=2**40)
    assert got.tolist() == [4095, 2048 + 5, 0, 5, 2047, 2047]
    causal = posenc.t5_relative_position_bucket(k, bidirectional=False, num_buckets=4096, max_distance=2**40)
    assert causal.tolist() == [0, 0, 0, 5, 4095, 4095]


@settings(max_examples=60, deadline=None)
@given(
    bidirectional=st.booleans(),
    num_buckets=st.integers(4, 80),
    extra=st.integers(1, 3000),
    offsets=st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=50),
)
def test_t5_buckets_follow_the_logarithmic_rule(bidirectional, num_buckets, extra, offsets):
    """Against the docstring's rule, evaluated with Python integers one offset at a time."""
    n = num_buckets // 2 if bidirectional else num_buckets
    e = n // 2
    big = e + extra
    got = posenc.t5_relative_position_bucket(
        offsets, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=big
    )
    for k, bucket in zip(offsets, got.tolist()):
        r = abs(k) if bidirectional else max(k, 0)
        if r < e:
            expected = r
        else:
            j = max(j for j in range(n - e) if r ** (n - e) * e**j >= big**j * e ** (n - e))
            expected = e + j
        assert bucket == expected + (n if bidirectional and k < 0 else 0)


# --- T5's bias ----------------------------------------------------------------


@pytest.mark.parametrize("decoder", [False, True])
@pytest.mark.parametrize("q_len, k_len", [(1, 1), (7, 7), (40, 300), (300, 40)])
def test_t5_bias_equals_compute_bias(_library, decoder, q_len, k_len):
    config = T5Config(
        d_model=8,
        d_kv=4,
        num_heads=3,
        relative_attention_num_buckets=32,
        relative_attention_max_distance=128,
        is_decoder=decoder,
    )
    attention = T5Attention(config, has_relative_attention_bias=True, layer_idx=0)
    table = np.random.default_rng(q_len + k_len).normal(size=(32, 3)).astype(np.float32)
    with torch.no_grad():
        attention.relative_attention_bias.weight.copy_(torch.from_numpy(table))
        expected = attention.compute_bias(q_len, k_len)[0].numpy()
    ours = posenc.t5_bias(table, q_len, k_len, bidirectional=not decoder)
    assert ours.shape == (3, q_len, k_len) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-7)
    as_tensor = posenc.t5_bias(attention.relative_attention_bias.weight, q_len, k_len, bidirectional=not decoder)
    assert isinstance(as_tensor, torch.Tensor) and as_tensor.requires_grad  # a tensor keeps the gradient
    torch.testing.assert_close(as_tensor.detach(), torch.from_numpy(expected), rtol=0, atol=1e-7)


def test_t5_bias_depends_on_the_offset_only():
    table = np.random.default_rng(5).normal(size=(8, 2))
    bias = posenc.t5_bias(table, 6, 9, num_buckets=8, max_distance=20)
    buckets = posenc.t5_relative_position_bucket(
        np.arange(6)[:, None] - np.arange(9)[None, :], num_buckets=8, max_distance=20
    )
    for h in range(2):
        np.testing.assert_array_equal(bias[h], table[buckets, h])
    np.testing.assert_array_equal(bias[:, 1:, 1:], bias[:, :-1, :-1])  # Toeplitz: constant along diagonals
    assert posenc.t5_bias(table.astype(int), 2, num_buckets=8, max_distance=20).dtype == np.float64


# --- Shaw et al.'s clipped relative positions ---------------------------------


@settings(max_examples=60, deadline=None)
@given(q_len=st.integers(1, 25), k_len=st.integers(1, 25), max_distance=st.integers(1, 30))
def test_shaw_relative_positions(q_len, k_len, max_distance):
    index = posenc.shaw_relative_positions(q_len, k_len, max_distance=max_distance)
    assert index.shape == (q_len, k_len) and index.dtype == np.int64
    assert index.min() >= 0 and index.max() <= 2 * max_distance
    brute = np.empty((q_len, k_len), dtype=np.int64)
    for i in range(q_len):
        for j in range(k_len):
            brute[i, j] = max(-max_distance, min(max_distance, j - i)) + max_distance
    np.testing.assert_array_equal(index, brute)
    diagonal = np.arange(min(q_len, k_len))
    assert np.all(index[diagonal, diagonal] == max_distance)
    np.testing.assert_array_equal(index[1:, 1:], index[:-1, :-1])  # Toeplitz: constant along diagonals


def test_shaw_clips_and_takes_key_minus_query():
    index = posenc.shaw_relative_positions(1, 12, max_distance=3)[0]  # a query at 0, keys 0 ... 11 ahead of it
    assert index.tolist() == [3, 4, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6]
    behind = posenc.shaw_relative_positions(12, 1, max_distance=3)[:, 0]  # queries 0 ... 11, the key at 0
    assert behind.tolist() == [3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]  # book's k = p - s > 0: index M - min(k, M)
    np.testing.assert_array_equal(
        posenc.shaw_relative_positions(5, max_distance=2), posenc.shaw_relative_positions(5, 5, max_distance=2)
    )


# --- bad input ----------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc, pattern",
    [
        (lambda: posenc.t5_relative_position_bucket(1.5), TypeError, "offset must be an integer"),
        (lambda: posenc.t5_relative_position_bucket([True]), TypeError, "offset must be an integer"),
        (lambda: posenc.t5_relative_position_bucket([[1], [1, 2]]), TypeError, "offset must be"),
        (lambda: posenc.t5_relative_position_bucket(np.array([2**63], dtype=np.uint64)), ValueError, "offset"),
        (
            lambda: posenc.t5_relative_position_bucket(1, bidirectional=1),
            ValueError,
            "bidirectional must be True or False",
        ),
        (
            lambda: posenc.t5_relative_position_bucket(1, num_buckets=3),
            ValueError,
            "num_buckets must be an integer from 4 to 4096 when bidirectional=True",
        ),
        (
            lambda: posenc.t5_relative_position_bucket(1, bidirectional=False, num_buckets=1),
            ValueError,
            "num_buckets must be an integer from 4 to 4096 \\(from 2 when bidirectional=False\\), not 1",
        ),
        (lambda: posenc.t5_relative_position_bucket(1, num_buckets=32.0), ValueError, "num_buckets"),
        (
            lambda: posenc.t5_relative_position_bucket(1, max_distance=8),
            ValueError,
            "max_distance must be an integer from 9 to 2\\*\\*40",
        ),
        (
            lambda: posenc.t5_relative_position_bucket(1, bidirectional=False, max_distance=16),
            ValueError,
            "max_distance must be an integer from 17",
        ),
        (lambda: posenc.t5_relative_position_bucket(1, max_distance=200.0), ValueError, "max_distance"),
        (lambda: posenc.t5_relative_position_bucket(1, num_buckets=4098), ValueError, "num_buckets.*4 to 4096"),
        (lambda: posenc.t5_relative_position_bucket(1, max_distance=2**40 + 1), ValueError, "max_distance.*2\\*\\*40"),
        (lambda: posenc.t5_bias(np.zeros((32, 2)), 0), ValueError, "q_len must be an integer >= 1"),
        (lambda: posenc.t5_bias(np.zeros((32, 2)), 3, 0), ValueError, "k_len must be an integer >= 1"),
        (
            lambda: posenc.t5_bias(np.zeros((31, 2)), 3),
            ValueError,
            "table must have shape .num_buckets, n_heads. = .32,",
        ),
        (lambda: posenc.t5_bias(np.zeros(32), 3), ValueError, "table must have shape"),
        (lambda: posenc.t5_bias(np.zeros((32, 0)), 3), ValueError, "table must have shape"),
        (
            lambda: posenc.t5_bias(np.array([["a"] * 2] * 32), 3),
            TypeError,
            "table must be an array of real numbers of shape .32, n_heads., not a <U1 array",
        ),
        (
            lambda: posenc.t5_bias(torch.zeros(32, 2, dtype=torch.long), 3),
            TypeError,
            "table must be a tensor that holds floating",
        ),
        (lambda: posenc.t5_bias(np.zeros((8, 2)), 3, num_buckets=8, max_distance=2), ValueError, "max_distance"),
        (lambda: posenc.shaw_relative_positions(3, max_distance=0), ValueError, "max_distance must be an integer >= 1"),
        (lambda: posenc.shaw_relative_positions(3, max_distance=2.0), ValueError, "max_distance"),
        (lambda: posenc.shaw_relative_positions(0, max_distance=2), ValueError, "q_len must be an integer >= 1"),
        (lambda: posenc.shaw_relative_positions(3, -1, max_distance=2), ValueError, "k_len must be an integer >= 1"),
        (lambda: posenc.shaw_relative_positions(3), TypeError, "max_distance"),
    ],
)
def test_bad_input_is_named(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()
