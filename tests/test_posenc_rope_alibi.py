"""RoPE and ALiBi in posenc: the properties the chapters rely on."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import posenc


def naive_rope(x, positions, base=10000.0):
    """One pair at a time, interleaved, straight from the RoFormer formula."""
    out = np.array(x, dtype=np.float64)
    d = out.shape[-1]
    for row, p in enumerate(positions):
        for i in range(d // 2):
            w = base ** (-2 * i / d)
            a, b = x[row, 2 * i], x[row, 2 * i + 1]
            out[row, 2 * i] = a * math.cos(p * w) - b * math.sin(p * w)
            out[row, 2 * i + 1] = a * math.sin(p * w) + b * math.cos(p * w)
    return out


@settings(max_examples=50, deadline=None)
@given(
    d=st.integers(1, 16).map(lambda h: 2 * h),
    positions=st.lists(st.integers(-3000, 3000), min_size=1, max_size=12),
    seed=st.integers(0, 2**16),
)
def test_rope_matches_the_formula(d, positions, seed):
    x = np.random.default_rng(seed).normal(size=(len(positions), d))
    np.testing.assert_allclose(posenc.apply_rope(x, positions), naive_rope(x, positions), atol=1e-9)


@settings(max_examples=50, deadline=None)
@given(
    d=st.integers(1, 32).map(lambda h: 2 * h),
    p=st.integers(-(10**5), 10**5),
    s=st.integers(-(10**5), 10**5),
    shift=st.integers(-(10**5), 10**5),
    layout=st.sampled_from(posenc.LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_rope_scores_depend_only_on_the_offset(d, p, s, shift, layout, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(1, d)), rng.normal(size=(1, d))
    score = (posenc.apply_rope(q, [p], layout=layout) @ posenc.apply_rope(k, [s], layout=layout).T).item()
    moved_q = posenc.apply_rope(q, [p + shift], layout=layout)
    moved_k = posenc.apply_rope(k, [s + shift], layout=layout)
    moved = (moved_q @ moved_k.T).item()
    assert moved == pytest.approx(score, abs=1e-8)


def test_rope_is_a_rotation_and_matches_chapter_04():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 16))
    y = posenc.apply_rope(x)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), np.linalg.norm(x, axis=1))
    # rotating PE(0) = (0, 1, 0, 1, ...) by p gives (-sin, cos) pairs, i.e. T(p)'s action up to sign
    pe0 = posenc.sinusoidal([0], 16)
    rotated = posenc.apply_rope(np.repeat(pe0, 5, axis=0), np.arange(5))
    table = posenc.sinusoidal(5, 16)
    np.testing.assert_allclose(rotated[:, 0::2], -table[:, 0::2], atol=1e-12)
    np.testing.assert_allclose(rotated[:, 1::2], table[:, 1::2], atol=1e-12)


def test_rope_layouts_are_a_channel_permutation():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 7, 12))
    perm = posenc.layout_permutation(12)  # concatenated = interleaved[..., perm]
    inter = posenc.apply_rope(x)
    conc = posenc.apply_rope(x[..., perm], layout="concatenated")
    np.testing.assert_allclose(conc, inter[..., perm], atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_rope_torch_keeps_type_and_matches_numpy(dtype):
    x = torch.randn(2, 3, 9, 8, generator=torch.Generator().manual_seed(0)).to(dtype)
    y = posenc.apply_rope(x)
    assert isinstance(y, torch.Tensor) and y.dtype == dtype and y.shape == x.shape
    ref = posenc.apply_rope(x.double().numpy())
    tol = {torch.float64: 1e-12, torch.float32: 1e-5, torch.bfloat16: 5e-2}[dtype]
    assert np.abs(y.double().numpy() - ref).max() < tol


@pytest.mark.parametrize("rope", [posenc.apply_rope, posenc.apply_rope_complex])
def test_rope_bad_input(rope):
    with pytest.raises(ValueError, match="even last dimension d, not 5"):
        rope(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="positions has 2 entries.*seq=3"):
        rope(np.zeros((3, 4)), [0, 1])
    with pytest.raises(ValueError, match="positions must be finite"):
        rope(np.zeros((2, 4)), [0.0, float("nan")])
    with pytest.raises(ValueError, match="x must have shape"):
        rope(np.zeros(4))
    with pytest.raises(ValueError, match="layout must be one of"):
        rope(np.zeros((3, 4)), layout="halves")
    with pytest.raises(ValueError, match="base must be a finite number > 1"):
        rope(np.zeros((3, 4)), base=1.0)


def test_alibi_slopes_are_the_standard_ones():
    np.testing.assert_allclose(posenc.alibi_slopes(8), [2.0 ** -(h + 1) for h in range(8)])
    np.testing.assert_allclose(posenc.alibi_slopes(4), [2.0 ** (-2 * (h + 1)) for h in range(4)])
    twelve = posenc.alibi_slopes(12)
    np.testing.assert_allclose(twelve[:8], posenc.alibi_slopes(8))
    np.testing.assert_allclose(twelve[8:], posenc.alibi_slopes(16)[0::2][:4])
    assert len(set(twelve)) == 12


@settings(max_examples=40, deadline=None)
@given(n_heads=st.integers(1, 24), q_len=st.integers(1, 30), extra=st.integers(0, 10))
def test_alibi_bias_is_linear_in_distance(n_heads, q_len, extra):
    k_len = q_len + extra
    bias = posenc.alibi_bias(n_heads, q_len, k_len)
    slopes = posenc.alibi_slopes(n_heads)
    assert bias.shape == (n_heads, q_len, k_len)
    for i in range(q_len):
        query = extra + i
        for j in range(k_len):
            if j > query:
                assert np.all(np.isneginf(bias[:, i, j]))
            else:
                np.testing.assert_allclose(bias[:, i, j], -slopes * (query - j))
    sym = posenc.alibi_bias(n_heads, q_len, k_len, causal=False)
    assert np.all(np.isfinite(sym)) and np.all(sym <= 0)
    # shifting every position leaves the bias unchanged: only distances matter
    np.testing.assert_array_equal(
        posenc.alibi_bias(n_heads, q_len)[:, -1, :], posenc.alibi_bias(n_heads, q_len, q_len + extra)[:, -1, extra:]
    )


def test_alibi_bad_input():
    with pytest.raises(ValueError, match="n_heads"):
        posenc.alibi_bias(0, 4)
    with pytest.raises(ValueError, match="q_len"):
        posenc.alibi_bias(2, 0)
    with pytest.raises(ValueError, match="cannot exceed"):
        posenc.alibi_bias(2, 5, 3)


# --- RoPE in complex numbers -------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    h=st.integers(1, 12),
    batch=st.lists(st.integers(1, 3), max_size=2),
    positions=st.lists(st.integers(-(10**6), 10**6) | st.floats(-1e4, 1e4), min_size=1, max_size=9),
    layout=st.sampled_from(posenc.LAYOUTS),
    dtype=st.sampled_from([np.float32, np.float64]),
    as_torch=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_rope_complex_equals_rope(h, batch, positions, layout, dtype, as_torch, seed):
    x = np.random.default_rng(seed).normal(size=(*batch, len(positions), 2 * h)).astype(dtype)
    if as_torch:
        x = torch.from_numpy(x)
    y = posenc.apply_rope_complex(x, positions, layout=layout)
    ref = posenc.apply_rope(x, positions, layout=layout)
    assert type(y) is type(x) and y.dtype == x.dtype and tuple(y.shape) == tuple(x.shape)
    tol = 1e-12 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(np.asarray(y), np.asarray(ref), atol=tol, rtol=tol)


@pytest.mark.parametrize("shape", [(5, 8), (2, 5, 8), (2, 3, 5, 8), (1, 1, 1, 2)])
@pytest.mark.parametrize("layout", posenc.LAYOUTS)
def test_rope_complex_default_positions_and_shapes(shape, layout):
    x = np.random.default_rng(2).normal(size=shape)
    np.testing.assert_allclose(
        posenc.apply_rope_complex(x, layout=layout), posenc.apply_rope(x, layout=layout), atol=1e-13
    )


def test_rope_complex_is_llamas_freqs_cis():
    """Meta's formulation: freqs_cis = polar(1, p w_i), pairs (2i, 2i+1) as complex numbers, one product."""
    x = torch.randn(2, 4, 6, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    angles = torch.outer(torch.arange(6, dtype=torch.float64), torch.from_numpy(posenc.frequencies(16)))
    freqs_cis = torch.polar(torch.ones_like(angles), angles)
    llama = torch.view_as_real(torch.view_as_complex(x.reshape(2, 4, 6, 8, 2)) * freqs_cis).flatten(-2)
    torch.testing.assert_close(posenc.apply_rope_complex(x), llama, atol=1e-14, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rope_complex_half_precision_computes_in_float32(dtype):
    x = torch.randn(2, 9, 8, generator=torch.Generator().manual_seed(0)).to(dtype)
    y = posenc.apply_rope_complex(x, layout="concatenated")
    assert y.dtype == dtype and y.shape == x.shape
    # rounded once from the float32 result: exactly the float32 computation, cast
    expected = posenc.apply_rope_complex(x.float(), layout="concatenated").to(dtype)
    assert torch.equal(y, expected)
    as_numpy = posenc.apply_rope_complex(x.float().numpy().astype(np.float16))
    assert as_numpy.dtype == np.float16
    np.testing.assert_array_equal(as_numpy, posenc.apply_rope_complex(x.float().numpy()).astype(np.float16))
