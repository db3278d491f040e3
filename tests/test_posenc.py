"""Tests for posenc (src/posenc/): the formula, its accuracy, the modules, bad input.

The reference implementations below are deliberately naive (a double loop in
float64, or mpmath at 40 digits) and share no code with posenc.
"""

import math

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import posenc
from posenc_course import bug_zoo
from posenc_course.arguments import ArgumentError

mpmath.mp.dps = 40


def naive_table(positions, d_model, base=10000.0, layout="interleaved"):
    """The formula as written in the paper, one entry at a time (float64)."""
    out = np.zeros((len(positions), d_model))
    for row, p in enumerate(positions):
        for channel in range(d_model):
            i = channel // 2
            angle = p / base ** (2 * i / d_model)
            out[row, channel] = math.sin(angle) if channel % 2 == 0 else math.cos(angle)
    if layout == "concatenated":
        out = np.concatenate([out[:, 0::2], out[:, 1::2]], axis=1)
    return out


def exact_row(p, d_model, base=10000.0):
    """One interleaved row at 40 significant digits."""
    row = []
    for channel in range(d_model):
        w = mpmath.power(mpmath.mpf(base), -mpmath.mpf(2 * (channel // 2)) / d_model)
        f = mpmath.sin if channel % 2 == 0 else mpmath.cos
        row.append(float(f(mpmath.mpf(p) * w)))
    return np.array(row)


d_models = st.integers(min_value=1, max_value=40)
layouts = st.sampled_from(posenc.LAYOUTS)
bases = st.sampled_from([10000.0, 500000.0, 100.0, 2.0, 1.5])
small_positions = st.lists(st.integers(min_value=-5000, max_value=5000), min_size=1, max_size=80)


# --- the formula -----------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(positions=small_positions, d_model=d_models, base=bases, layout=layouts)
def test_matches_naive_formula(positions, d_model, base, layout):
    got = posenc.sinusoidal(positions, d_model, base, layout=layout)
    want = naive_table(positions, d_model, base, layout)
    assert got.shape == (len(positions), d_model)
    np.testing.assert_allclose(got, want, atol=1e-9, rtol=0)


@settings(max_examples=60, deadline=None)
@given(
    positions=st.lists(st.floats(min_value=-1e4, max_value=1e4, allow_nan=False), min_size=1, max_size=30),
    d_model=d_models,
    layout=layouts,
)
def test_fractional_positions(positions, d_model, layout):
    got = posenc.sinusoidal(np.array(positions), d_model, layout=layout)
    np.testing.assert_allclose(got, naive_table(positions, d_model, layout=layout), atol=1e-9, rtol=0)


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 1000, 4097])
@pytest.mark.parametrize("d_model", [1, 2, 7, 64])
def test_count_means_arange(n, d_model):
    by_count = posenc.sinusoidal(n, d_model)
    assert by_count.shape == (n, d_model)
    np.testing.assert_array_equal(by_count, posenc.sinusoidal(np.arange(n), d_model))
    if n:
        np.testing.assert_allclose(by_count, naive_table(range(n), d_model), atol=1e-9, rtol=0)


def test_contiguous_run_not_starting_at_zero():
    positions = np.arange(-300, 700)
    np.testing.assert_allclose(posenc.sinusoidal(positions, 12), naive_table(positions, 12), atol=1e-9, rtol=0)


def test_worked_example_from_the_documents():
    """d_model = 6, positions 0-4 as printed (3 decimals) in document 001.

    The document prints cos(4) as -0.653; its value is -0.65364, which rounds
    to -0.654. We check against the true value to 5e-4 to allow for the
    document's truncation.
    """
    printed = np.array(
        [
            [0, 1, 0, 1, 0, 1],
            [0.841, 0.540, 0.046, 0.999, 0.002, 1.000],
            [0.909, -0.416, 0.093, 0.996, 0.004, 1.000],
            [0.141, -0.990, 0.139, 0.990, 0.006, 1.000],
            [-0.757, -0.653, 0.185, 0.983, 0.009, 1.000],
        ]
    )
    table = posenc.sinusoidal(5, 6)
    np.testing.assert_allclose(table, printed, atol=1.5e-3)
    assert table[4, 1] == pytest.approx(math.cos(4))


def test_odd_d_model_last_pair_has_only_its_sine():
    table = posenc.sinusoidal(50, 7)
    w3 = 10000.0 ** (-6 / 7)
    np.testing.assert_allclose(table[:, 6], np.sin(np.arange(50) * w3), atol=1e-12)
    conc = posenc.sinusoidal(50, 7, layout="concatenated")
    np.testing.assert_allclose(conc[:, :4], table[:, 0::2], atol=0)
    np.testing.assert_allclose(conc[:, 4:], table[:, 1::2], atol=0)


@pytest.mark.parametrize("d_model", [1, 2, 5, 6, 512])
def test_layout_permutation(d_model):
    perm = posenc.layout_permutation(d_model)
    assert sorted(perm) == list(range(d_model))
    inter = posenc.sinusoidal(40, d_model)
    np.testing.assert_array_equal(inter[:, perm], posenc.sinusoidal(40, d_model, layout="concatenated"))


def test_frequencies_and_wavelengths():
    w = posenc.frequencies(512)
    assert w.shape == (256,)
    assert w[0] == 1.0
    assert w[128] == pytest.approx(0.01, rel=1e-14)
    assert w[255] == pytest.approx(10000 ** (-510 / 512), rel=1e-14)
    assert w[255] == pytest.approx(1.0366e-4, rel=1e-4)
    np.testing.assert_allclose(posenc.wavelengths(512), 2 * np.pi / w, rtol=1e-14)
    assert posenc.wavelengths(512)[-1] == pytest.approx(60611, rel=1e-4)
    ratios = w[1:] / w[:-1]
    np.testing.assert_allclose(ratios, 10000 ** (-2 / 512), rtol=1e-12)
    assert posenc.frequencies(7).shape == (4,)


@pytest.mark.parametrize("length", [128, 512, 2048])
def test_pair_regimes_match_the_table(length):
    """The formulas agree with what the table actually does."""
    kinds = posenc.pair_regimes(512, length)
    table = posenc.sinusoidal(length, 512)
    sin, cos = table[:, 0::2], table[:, 1::2]
    step = np.hypot(np.diff(sin, axis=0), np.diff(cos, axis=0)).min(axis=0)
    drift = np.hypot(sin - sin[0], cos - cos[0]).max(axis=0)
    assert np.all(step[kinds["fine"]] >= 0.1) and np.all(step[~kinds["fine"]] < 0.1)
    assert np.all(drift[kinds["constant"]] < 0.1)
    lam = posenc.wavelengths(512)
    np.testing.assert_array_equal(kinds["wraps"], lam <= length)


def test_pair_regimes_bad_input():
    with pytest.raises(ValueError, match="length"):
        posenc.pair_regimes(8, 0)
    with pytest.raises(ValueError, match="threshold"):
        posenc.pair_regimes(8, 10, threshold=3)


# --- accuracy --------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    p=st.integers(min_value=-(2**24) + 1, max_value=2**24 - 1),
    d_model=st.sampled_from([8, 33, 64]),
    base=st.sampled_from([10000.0, 500000.0]),
)
def test_accuracy_at_large_positions(p, d_model, base):
    exact = exact_row(p, d_model, base)
    # one position alone, and inside a contiguous run (the fast path)
    run = np.arange(p - 70, p + 70)
    for dtype, tol in ((np.float32, 2e-7), (np.float64, 1e-9)):
        alone = posenc.sinusoidal([p], d_model, base, dtype=dtype)[0]
        in_run = posenc.sinusoidal(run, d_model, base, dtype=dtype)[70]
        assert alone.dtype == dtype
        assert np.abs(alone.astype(np.float64) - exact).max() <= tol
        assert np.abs(in_run.astype(np.float64) - exact).max() <= tol


def test_float32_table_accuracy_over_a_long_run():
    """Every row of an 8,192-position float32 table, against float64 -> mpmath spot checks."""
    d_model = 256
    t32 = posenc.sinusoidal(8192, d_model, dtype=np.float32).astype(np.float64)
    t64 = posenc.sinusoidal(8192, d_model, dtype=np.float64)
    assert np.abs(t32 - t64).max() <= 2e-7
    for p in (1, 4095, 8191):
        assert np.abs(t64[p] - exact_row(p, d_model)).max() <= 1e-12


def test_the_common_float32_recipe_is_not_accurate():
    """The baseline we replace: angles formed in float32 drift at large p."""
    d_model = 64
    recipe = bug_zoo.tutorial_recipe([1_000_000], d_model)  # the recipe's own arithmetic, at one position
    err_recipe = np.abs(recipe.numpy()[0] - exact_row(1_000_000, d_model)).max()
    ours = posenc.sinusoidal([1_000_000], d_model, dtype=np.float32)[0]
    err_ours = np.abs(ours - exact_row(1_000_000, d_model)).max()
    assert err_recipe > 1e-2
    assert err_ours < 2e-7


@pytest.mark.parametrize("layout", ["interleaved", "concatenated"])
@pytest.mark.parametrize(
    "positions, d_model", [(200, 64), (8192, 8), ([3, 64, 70_000, -5], 10), ([0.5, 2.0, -3.25], 6), (130, 33)]
)
def test_float16_table_is_the_float64_table_rounded_once(positions, d_model, layout):
    """float16 is exact up to its own rounding, whole blocks of 64 rows in the interleaved layout included (the
    float64 path's complex view must never be taken of a float16 table: a bare reshape error)."""
    table = posenc.sinusoidal(positions, d_model, layout=layout, dtype=np.float16)
    assert table.dtype == np.float16
    np.testing.assert_array_equal(table, posenc.sinusoidal(positions, d_model, layout=layout).astype(np.float16))


@settings(max_examples=40, deadline=None)
@given(
    positions=st.lists(st.integers(min_value=-(2**24) + 1, max_value=2**24 - 1), min_size=1, max_size=8),
    d_model=st.sampled_from([2, 8, 64]),
    base=st.sampled_from([10000.0, 500000.0]),
)
def test_torch_path_accuracy_at_large_positions(positions, d_model, base):
    """The torch path (apply_rope on tensors, compiled and traced modules) is as accurate as sinusoidal.

    Rotating the pairs (1, 0) by p * omega_i gives (cos, sin). Documented:
    1e-9 in float64; in fact below 1e-15 (float64 constants split exactly, reduction in turns).
    """
    ones = torch.zeros(len(positions), d_model, dtype=torch.float64)
    ones[:, 0::2] = 1.0
    rotated = posenc.apply_rope(ones, torch.tensor(positions), base).numpy()
    for row, p in enumerate(positions):
        exact = exact_row(p, d_model, base)  # sin, cos interleaved
        assert np.abs(rotated[row, 1::2] - exact[0::2]).max() <= 1e-11
        assert np.abs(rotated[row, 0::2] - exact[1::2]).max() <= 1e-11


# --- the same row whatever else is asked ------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=3000),
    start=st.integers(min_value=-(2**24), max_value=2**24),
    d_model=st.sampled_from([1, 5, 10, 64, 129]),
    layout=layouts,
    dtype=st.sampled_from([np.float16, np.float32, np.float64]),
    data=st.data(),
)
def test_a_row_does_not_depend_on_the_other_positions(n, start, d_model, layout, dtype, data):
    run = np.arange(start, start + n)
    table = posenc.sinusoidal(run, d_model, layout=layout, dtype=dtype)
    picks = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=20))
    alone = posenc.sinusoidal(run[picks], d_model, layout=layout, dtype=dtype)
    np.testing.assert_array_equal(alone, table[picks])
    k = data.draw(st.integers(1, n))
    np.testing.assert_array_equal(posenc.sinusoidal(run[:k], d_model, layout=layout, dtype=dtype), table[:k])


@settings(max_examples=40, deadline=None)
@given(
    positions=st.lists(
        st.one_of(st.integers(-(2**24), 2**24), st.floats(-(2.0**24), 2.0**24)), min_size=1, max_size=30
    ),
    d_model=st.sampled_from([1, 5, 64]),
    layout=layouts,
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_a_row_does_not_depend_on_the_other_positions_mixed(positions, d_model, layout, dtype):
    """Integers, integer-valued floats and fractions in one request: each row as when asked alone."""
    table = posenc.sinusoidal(np.array(positions, dtype=np.float64), d_model, layout=layout, dtype=dtype)
    for row, p in enumerate(positions):
        np.testing.assert_array_equal(posenc.sinusoidal([float(p)], d_model, layout=layout, dtype=dtype)[0], table[row])


def test_a_table_does_not_depend_on_the_number_of_threads():
    """Big runs are shared out among torch.get_num_threads() threads: the bits stay the same."""
    threads = torch.get_num_threads()
    try:
        tables = []
        for n in (1, 3):
            torch.set_num_threads(n)
            tables.append(posenc.sinusoidal(np.arange(-1000, 4000), 511, dtype=np.float32))
    finally:
        torch.set_num_threads(threads)
    np.testing.assert_array_equal(tables[0], tables[1])


@settings(max_examples=40, deadline=None)
@given(
    history=st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=6),
    d_model=st.sampled_from([3, 10, 64]),
    layout=layouts,
    dtype=st.sampled_from([torch.float32, torch.float64, torch.bfloat16]),
)
def test_module_output_does_not_depend_on_earlier_calls(history, d_model, layout, dtype):
    """seq=10 after seq=3000 gives the same bits as seq=10 alone: a module's output never depends on earlier calls."""
    module = posenc.SinusoidalPositionalEncoding(d_model, layout=layout)
    for seq in history:
        out = module(torch.zeros(1, seq, d_model, dtype=dtype))
        fresh = posenc.SinusoidalPositionalEncoding(d_model, layout=layout)(torch.zeros(1, seq, d_model, dtype=dtype))
        assert torch.equal(out, fresh)


def test_the_reported_history():
    module = posenc.SinusoidalPositionalEncoding(64)
    module(torch.zeros(1, 3000, 64))
    after = module(torch.zeros(1, 10, 64))
    assert torch.equal(after, posenc.SinusoidalPositionalEncoding(64)(torch.zeros(1, 10, 64)))
    # float32 rows are the float64 rows rounded once
    assert torch.equal(module(torch.zeros(1, 3000, 64))[0], torch.from_numpy(posenc.sinusoidal(3000, 64)).float())


# --- rotation --------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(
    k=st.integers(min_value=-3000, max_value=3000),
    d_model=st.integers(min_value=1, max_value=32).map(lambda h: 2 * h),
    layout=layouts,
    base=bases,
)
def test_rotation_property(k, d_model, layout, base):
    positions = np.arange(-200, 200, 7)
    t = posenc.rotation(k, d_model, base, layout=layout)
    now = posenc.sinusoidal(positions, d_model, base, layout=layout)
    later = posenc.sinusoidal(positions + k, d_model, base, layout=layout)
    np.testing.assert_allclose(now @ t.T, later, atol=1e-9)


def test_rotation_is_orthogonal_and_composes():
    a, b = posenc.rotation(5, 16), posenc.rotation(-12, 16)
    np.testing.assert_allclose(a @ a.T, np.eye(16), atol=1e-12)
    np.testing.assert_allclose(a @ b, posenc.rotation(-7, 16), atol=1e-12)
    np.testing.assert_allclose(posenc.rotation(0, 16), np.eye(16), atol=0)
    np.testing.assert_allclose(
        posenc.rotation(2.5, 8) @ posenc.sinusoidal([1.0], 8)[0], posenc.sinusoidal([3.5], 8)[0], atol=1e-12
    )


def test_rotation_odd_d_model_explains():
    with pytest.raises(ValueError, match="even d_model.*cosine partner"):
        posenc.rotation(3, 7)


# --- torch modules ---------------------------------------------------------


def test_module_adds_the_table_beyond_any_length():
    module = posenc.SinusoidalPositionalEncoding(10)
    for seq in (3, 50, 9000, 20):
        x = torch.randn(2, seq, 10)
        out = module(x)
        expected = x + torch.from_numpy(posenc.sinusoidal(seq, 10, dtype=np.float32))
        torch.testing.assert_close(out, expected, atol=0, rtol=0)


def test_module_buffer_not_parameter_and_not_saved():
    module = posenc.SinusoidalPositionalEncoding(8)
    module(torch.zeros(1, 5, 8))
    assert list(module.parameters()) == []
    assert "pe" in dict(module.named_buffers())
    assert module.state_dict() == {}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_module_keeps_dtype(dtype):
    module = posenc.SinusoidalPositionalEncoding(6, layout="concatenated")
    x = torch.zeros(1, 4000, 6, dtype=dtype)
    out = module(x)
    assert out.dtype == dtype and out.device == x.device
    exact = torch.from_numpy(posenc.sinusoidal(4000, 6, layout="concatenated"))
    # no worse than rounding the exact table to this dtype (one ulp near 1)
    assert (out[0].double() - exact).abs().max() <= torch.finfo(dtype).eps


def test_module_float64_accuracy():
    module = posenc.SinusoidalPositionalEncoding(16)
    out = module(torch.zeros(1, 3000, 16, dtype=torch.float64))[0, 2999].numpy()
    assert np.abs(out - exact_row(2999, 16)).max() < 1e-12


def test_module_odd_d_model_and_dropout():
    module = posenc.SinusoidalPositionalEncoding(7, dropout=0.5)
    module.eval()
    out = module(torch.zeros(1, 5, 7))
    torch.testing.assert_close(out[0], torch.from_numpy(posenc.sinusoidal(5, 7, dtype=np.float32)))
    module.train()
    torch.manual_seed(0)
    assert (module(torch.ones(1, 50, 7)) == 0).any()


def test_learned_embedding():
    torch.manual_seed(0)
    module = posenc.LearnedPositionalEmbedding(16, 4)
    assert sum(p.numel() for p in module.parameters()) == 16 * 4
    x = torch.zeros(3, 16, 4)
    torch.testing.assert_close(module(x), module.embedding.weight[None].expand(3, -1, -1))
    with pytest.raises(ValueError, match=r"17.*max_len=16"):
        module(torch.zeros(1, 17, 4))


# --- attention -------------------------------------------------------------


def test_self_attention_is_permutation_equivariant():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 8))
    w = [rng.normal(size=(8, 4)) for _ in range(3)]
    perm = rng.permutation(6)
    out = posenc.self_attention(x, *w)
    np.testing.assert_allclose(posenc.self_attention(x[perm], *w), out[perm], atol=1e-12)
    assert out.shape == (6, 4)
    weights = posenc.attention_weights(x, w[0], w[1])
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    np.testing.assert_allclose(out, weights @ (x @ w[2]))
    # a bias that depends on position breaks the symmetry
    bias = -np.abs(np.arange(6)[:, None] - np.arange(6)[None, :]).astype(float)
    biased = posenc.self_attention(x[perm], *w, bias=bias)
    assert not np.allclose(biased, posenc.self_attention(x, *w, bias=bias)[perm])


def test_causal_attention_sees_only_the_past():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 8))
    w = [rng.normal(size=(8, 4)) for _ in range(3)]
    weights = posenc.attention_weights(x, w[0], w[1], causal=True)
    assert np.all(np.triu(weights, k=1) == 0)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    # row p is attention over the prefix 0 ... p alone
    for p in range(6):
        np.testing.assert_allclose(
            posenc.self_attention(x, *w, causal=True)[p], posenc.self_attention(x[: p + 1], *w)[p], atol=1e-12
        )
    # the same as the mask written as a bias, and combined with another bias
    mask = np.triu(np.full((6, 6), -np.inf), k=1)
    bias = rng.normal(size=(6, 6))
    np.testing.assert_allclose(
        posenc.attention_weights(x, w[0], w[1], bias=bias, causal=True),
        posenc.attention_weights(x, w[0], w[1], bias=bias + mask),
        atol=1e-12,
    )


# --- the 40-digit reference ------------------------------------------------


@pytest.mark.parametrize("d_model, base, layout", [(7, 10000.0, "interleaved"), (6, 500000.0, "concatenated")])
def test_exact_sinusoidal_is_the_formula_at_40_digits(d_model, base, layout):
    positions = [0, 1, -3, 1000, 123_457, 2**24 - 1]
    exact = posenc.exact_sinusoidal(positions, d_model, base, layout=layout)
    assert exact.dtype == object and exact.shape == (len(positions), d_model)
    want = np.array([exact_row(p, d_model, base) for p in positions])  # interleaved
    if layout == "concatenated":
        want = want[:, posenc.layout_permutation(d_model)]
    np.testing.assert_allclose(exact.astype(float), want, rtol=0, atol=1e-15)
    angles = posenc.exact_angles(positions, d_model, base)
    assert angles.shape == (len(positions), (d_model + 1) // 2)
    assert float(angles[3, 1]) == pytest.approx(1000 * posenc.frequencies(d_model, base)[1], rel=1e-15)
    with pytest.raises(ValueError, match="d_model"):
        posenc.exact_sinusoidal([0], 0)


# --- bad input -------------------------------------------------------------


@pytest.mark.parametrize(
    "call, function, pattern",
    [
        (lambda: posenc.sinusoidal(5, 0), "sinusoidal", "d_model must be an integer >= 1, not 0"),
        (lambda: posenc.sinusoidal(5, -3), "sinusoidal", "d_model.*not -3"),
        (lambda: posenc.sinusoidal(5, 4.0), "sinusoidal", "d_model must be an integer"),
        (lambda: posenc.sinusoidal(5, "8"), "sinusoidal", "d_model.*not '8'"),
        (lambda: posenc.sinusoidal(5, True), "sinusoidal", "d_model.*not True"),
        (lambda: posenc.sinusoidal(5, 8, base=1.0), "sinusoidal", "base must be a finite number > 1, not 1.0"),
        (lambda: posenc.sinusoidal(5, 8, base=0.5), "sinusoidal", "base.*> 1"),
        (lambda: posenc.sinusoidal(5, 8, base=float("inf")), "sinusoidal", "base.*> 1, not inf"),
        (lambda: posenc.sinusoidal(5, 8, base=float("nan")), "sinusoidal", "base.*not nan"),
        (lambda: posenc.sinusoidal(5, 8, base="10000"), "sinusoidal", "base"),
        (lambda: posenc.sinusoidal(-1, 8), "sinusoidal", "positions must be a count n >= 0.*not -1"),
        (lambda: posenc.sinusoidal([0.0, float("nan")], 8), "sinusoidal", "positions.*finite"),
        (lambda: posenc.sinusoidal([0.0, float("inf")], 8), "sinusoidal", "positions.*finite"),
        (lambda: posenc.sinusoidal(np.zeros((2, 3)), 8), "sinusoidal", "positions.*1-D.*\\(2, 3\\)"),
        (lambda: posenc.sinusoidal(["a", "b"], 8), "sinusoidal", "positions"),
        # uint64 above 2**63 wrapped around to negative positions as int64: a wrong table, silently
        (
            lambda: posenc.sinusoidal(np.array([3, 2**63 + 5], dtype=np.uint64), 8),
            "sinusoidal",
            "positions must be below 2\\*\\*63, not 9223372036854775813",
        ),
        (lambda: posenc.sinusoidal(5.0, 8), "sinusoidal", "positions.*1-D"),
        (lambda: posenc.sinusoidal(5, 8, layout="sincos"), "sinusoidal", "layout.*interleaved.*not 'sincos'"),
        (lambda: posenc.sinusoidal(5, 8, dtype=np.int32), "sinusoidal", "dtype must be one of float16"),
        (lambda: posenc.sinusoidal(5), "sinusoidal", "needs d_model"),
        (lambda: posenc.sinusoidal(5, 8, "x", "y"), "sinusoidal", "at most 3 positional arguments"),
        (lambda: posenc.frequencies(0), "frequencies", "d_model"),
        (lambda: posenc.wavelengths(8, base=-2), "wavelengths", "base"),
        (lambda: posenc.rotation(float("nan"), 8), "rotation", "k must be a finite real offset"),
        (lambda: posenc.rotation(1, 7), "rotation", "needs an even d_model, not 7"),
        (lambda: posenc.SinusoidalPositionalEncoding(0), "SinusoidalPositionalEncoding", "d_model"),
        (lambda: posenc.SinusoidalPositionalEncoding(8, dropout=1.5), "SinusoidalPositionalEncoding", "dropout"),
        (
            lambda: posenc.SinusoidalPositionalEncoding(8)(torch.zeros(5, 8)),
            "SinusoidalPositionalEncoding",
            "3 dimensions.*\\(5, 8\\)",
        ),
        (
            lambda: posenc.SinusoidalPositionalEncoding(8)(torch.zeros(1, 5, 9)),
            "SinusoidalPositionalEncoding",
            "d_model=8.*not 9",
        ),
        (
            lambda: posenc.SinusoidalPositionalEncoding(8)(np.zeros((1, 5, 8))),
            "SinusoidalPositionalEncoding",
            "x must be a torch tensor",
        ),
        (
            lambda: posenc.SinusoidalPositionalEncoding(8)(torch.zeros(1, 5, 8, dtype=torch.long)),
            "SinusoidalPositionalEncoding",
            "floating",
        ),
        (lambda: posenc.LearnedPositionalEmbedding(0, 8), "LearnedPositionalEmbedding", "max_len"),
        (
            lambda: posenc.LearnedPositionalEmbedding(4, 8)(torch.zeros(1, 4, 7)),
            "LearnedPositionalEmbedding",
            "d_model=8",
        ),
        (
            lambda: posenc.LearnedPositionalEmbedding(4, 8)(torch.zeros(1, 5, 8)),
            "LearnedPositionalEmbedding",
            "length 5, which exceeds max_len=4",
        ),
        (
            lambda: posenc.self_attention(np.zeros(4), np.zeros((4, 2)), np.zeros((4, 2)), np.zeros((4, 2))),
            "self_attention",
            "x must",
        ),
        (
            lambda: posenc.self_attention(np.zeros((3, 4)), np.zeros((5, 2)), np.zeros((4, 2)), np.zeros((4, 2))),
            "self_attention",
            "w_q",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_function_and_the_argument(call, function, pattern):
    """The course's one error: an ArgumentError (a ValueError and a TypeError) that starts with the function's name."""
    with pytest.raises(ArgumentError, match=pattern) as info:
        call()
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    assert str(info.value).startswith(function) and "\n" not in str(info.value)
    assert info.value._render_traceback_() == [f"ArgumentError: {info.value}"]  # what Jupyter shows: this line


# --------------------------------------------------------------------------
# resize_grid: a learned 2-D position table at another grid size (chapter 13)
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, size", [((4, 4, 3), (6, 6)), ((3, 5, 2), (7, 2)), ((8, 8, 1), (3, 5)), ((1, 1, 4), (2, 3))]
)
def test_resize_grid_is_pytorchs_bicubic_with_centres_aligned(shape, size):
    grid = np.random.default_rng(sum(shape)).normal(size=shape)
    image = torch.from_numpy(grid).permute(2, 0, 1)[None]
    want = torch.nn.functional.interpolate(image, size=size, mode="bicubic", align_corners=False)
    np.testing.assert_allclose(posenc.resize_grid(grid, *size), want[0].permute(1, 2, 0).numpy(), atol=1e-12)


def test_resize_grid_keeps_a_grid_of_the_same_size_and_refuses_bad_input():
    grid = np.random.default_rng(0).normal(size=(5, 3, 2))
    np.testing.assert_allclose(posenc.resize_grid(grid, 5, 3), grid, atol=1e-15)
    with pytest.raises(ValueError, match="shape \\(h, w, d\\)"):
        posenc.resize_grid(grid[0], 2, 2)
    with pytest.raises(ValueError, match="height must be an integer >= 1"):
        posenc.resize_grid(grid, 0, 2)
    with pytest.raises(ValueError, match="finite"):
        posenc.resize_grid(np.full((2, 2, 1), np.nan), 3, 3)
