"""Tests for posenc_course.bug_zoo: each bug does what its docstring says (and no more),
each fix agrees with posenc, and the checks separate correct tables from buggy ones."""

import math

import mpmath
import numpy as np
import pytest
import torch
from torch import nn

import posenc
from posenc_course import bug_zoo

mpmath.mp.dps = 40
WIDTHS = [1, 2, 3, 7, 8, 64, 65]


# --------------------------------------------------------------------------
# Bug 1
# --------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 3, 8, 64, 65])
def test_doubled_exponent_uses_the_frequency_of_pair_2i(d):
    table = bug_zoo.doubled_exponent(50, d)
    omega = 10000.0 ** (-4.0 * np.arange((d + 1) // 2) / d)
    angle = np.outer(np.arange(50), omega)
    want = np.empty((50, 2 * len(omega)))
    want[:, 0::2], want[:, 1::2] = np.sin(angle), np.cos(angle)
    assert table.shape == (50, d)
    assert np.allclose(table, want[:, :d], atol=1e-12)
    if d >= 3:
        assert np.abs(table - posenc.sinusoidal(50, d)).max() > 1e-3


def test_doubled_exponent_passes_the_structural_checks_but_not_the_reference():
    table = bug_zoo.doubled_exponent(128, 64)
    assert bug_zoo.toeplitz_defect(table) < 1e-12
    assert bug_zoo.best_linear_residual(table, 3) < 1e-10
    assert bug_zoo.rotation_residual(table, 1) > 0.1
    assert np.abs(table - posenc.sinusoidal(128, 64)).max() > 1.9


# --------------------------------------------------------------------------
# Bug 2
# --------------------------------------------------------------------------


@pytest.mark.parametrize("d", [3, 7, 65])
def test_the_recipe_fails_for_odd_widths(d):
    with pytest.raises(RuntimeError, match="must match"):
        bug_zoo.tutorial_recipe(10, d)


def test_the_recipe_survives_width_1_by_broadcasting_into_an_empty_slice():
    table = bug_zoo.tutorial_recipe(10, 1)
    assert np.abs(table.double().numpy() - posenc.sinusoidal(10, 1)).max() < 1e-6


@pytest.mark.parametrize("d", [2, 8, 64])
def test_the_recipe_is_right_for_even_widths_and_short_tables(d):
    table = bug_zoo.tutorial_recipe(200, d)
    assert table.dtype == torch.float32 and table.shape == (200, d)
    assert np.abs(table.double().numpy() - posenc.sinusoidal(200, d)).max() < 1e-4


def test_the_recipe_loses_precision_with_the_position():
    table = bug_zoo.tutorial_recipe(8192, 64).double().numpy()
    err = np.abs(table - posenc.sinusoidal(8192, 64)).max(axis=1)
    assert err[:100].max() < 1e-5 < err[-100:].max()


@pytest.mark.parametrize("d", WIDTHS)
def test_recipe_fixed_matches_posenc(d):
    table = bug_zoo.recipe_fixed(3000, d)
    assert table.dtype == torch.float32 and table.shape == (3000, d)
    assert np.abs(table.double().numpy() - posenc.sinusoidal(3000, d)).max() <= 1e-7


# --------------------------------------------------------------------------
# Bug 3
# --------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 4, 7, 64])
def test_cosine_own_frequency_gives_each_channel_its_own_exponent(d):
    table = bug_zoo.cosine_own_frequency(40, d)
    p = np.arange(40)
    for j in range(d):
        f = np.sin if j % 2 == 0 else np.cos
        assert np.allclose(table[:, j], f(p / 10000.0 ** (j / d)), atol=1e-12)
    assert np.allclose(table[:, 0::2], posenc.sinusoidal(40, d)[:, 0::2], atol=1e-12)  # the sines are right


def test_cosine_own_frequency_has_no_rotation_and_no_linear_map():
    table = bug_zoo.cosine_own_frequency(128, 64)
    for k in [1, 5, 25]:
        assert bug_zoo.rotation_residual(table, k) > 0.1
        assert bug_zoo.best_linear_residual(table, k) > 0.01
    assert bug_zoo.toeplitz_defect(table) > 0.1
    norms = np.linalg.norm(table, axis=1)
    assert norms.max() - norms.min() > 0.1


# --------------------------------------------------------------------------
# Bug 4
# --------------------------------------------------------------------------


def test_seq_first_table_shape_and_values():
    pe = bug_zoo.seq_first_table(30, 8)
    assert pe.shape == (30, 1, 8) and pe.dtype == torch.float32
    assert np.abs(pe[:, 0].double().numpy() - posenc.sinusoidal(30, 8)).max() <= 2e-7


def test_add_along_batch_is_right_for_seq_first_inputs():
    pe = bug_zoo.seq_first_table(50, 8)
    x = torch.randn(12, 3, 8)  # (seq, batch, d)
    out = bug_zoo.add_along_batch(x, pe)
    for b in range(3):
        assert torch.allclose(out[:, b] - x[:, b], pe[:12, 0], atol=1e-6)


@pytest.mark.parametrize("batch,seq", [(1, 10), (4, 10), (10, 4), (7, 7)])
def test_add_along_batch_gives_sequence_b_the_vector_of_position_b(batch, seq):
    pe = bug_zoo.seq_first_table(50, 8)
    x = torch.randn(batch, seq, 8)
    out = bug_zoo.add_along_batch(x, pe)
    assert out.shape == x.shape
    for b in range(batch):
        assert torch.allclose(out[b] - x[b], pe[b].expand(seq, 8), atol=1e-6)


def test_add_along_batch_with_a_flat_table():
    flat = bug_zoo.seq_first_table(50, 8)[:, 0]
    one = bug_zoo.add_along_batch(torch.zeros(1, 6, 8), flat)
    assert torch.equal(one[0], flat[0].expand(6, 8))
    square = bug_zoo.add_along_batch(torch.zeros(6, 6, 8), flat)
    assert all(torch.equal(square[b], flat[:6]) for b in range(6))
    with pytest.raises(RuntimeError):
        bug_zoo.add_along_batch(torch.zeros(4, 6, 8), flat)


@pytest.mark.parametrize("batch,seq,d", [(1, 10, 8), (4, 10, 7), (10, 4, 16)])
def test_add_along_seq_matches_the_posenc_module(batch, seq, d):
    pe = bug_zoo.seq_first_table(64, d)
    x = torch.randn(batch, seq, d)
    assert torch.allclose(bug_zoo.add_along_seq(x, pe), posenc.SinusoidalPositionalEncoding(d)(x), atol=1e-6)


# --------------------------------------------------------------------------
# Bug 5
# --------------------------------------------------------------------------


def test_parameter_table_is_overwritten_by_a_model_wide_init():
    torch.manual_seed(0)
    model = nn.Sequential(bug_zoo.ParameterTable(64, 16), nn.Linear(16, 16))
    before = model[0](torch.zeros(1, 64, 16))[0].detach().double().numpy()
    assert np.abs(before - posenc.sinusoidal(64, 16)).max() <= 2e-7
    assert not model[0].pe.requires_grad
    bug_zoo.init_all_parameters(model)
    after = model[0].pe.detach().double().numpy()
    assert np.abs(after - posenc.sinusoidal(64, 16)).max() > 0.5
    assert 0.01 < after.std() < 0.03


def test_the_posenc_module_survives_the_same_init():
    model = nn.Sequential(posenc.SinusoidalPositionalEncoding(16), nn.Linear(16, 16))
    model[0](torch.zeros(1, 8, 16))  # the table exists before the init
    bug_zoo.init_all_parameters(model)
    out = model[0](torch.zeros(1, 64, 16))[0].double().numpy()
    assert np.abs(out - posenc.sinusoidal(64, 16)).max() <= 2e-7


# --------------------------------------------------------------------------
# Bug 6 and precision
# --------------------------------------------------------------------------


def lost_positions(n, dtype):
    return n - len(torch.unique(torch.arange(n, dtype=torch.float64).to(dtype)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_angle_encoding_collides_after_conversion(dtype):
    layer = bug_zoo.HalfAngleEncoding(32)
    x = torch.zeros(1, 4096, 32)
    out32 = layer(x)[0]
    assert bug_zoo.duplicate_rows(out32) == 0
    assert np.abs(out32.double().numpy() - posenc.sinusoidal(4096, 32)).max() < 1e-3
    out = layer.to(dtype)(x.to(dtype))[0]
    assert out.dtype == dtype
    assert bug_zoo.duplicate_rows(out) == lost_positions(4096, dtype) > 0


@pytest.mark.parametrize("d", [1, 5, 16])
def test_half_angle_encoding_handles_odd_widths(d):
    out = bug_zoo.HalfAngleEncoding(d)(torch.zeros(2, 30, d))
    assert out.shape == (2, 30, d)
    assert np.abs(out[1].double().numpy() - posenc.sinusoidal(30, d)).max() < 1e-5


def test_low_precision_table():
    p = np.arange(300)
    assert np.abs(bug_zoo.low_precision_table(p, 9, dtype=torch.float64) - posenc.sinusoidal(p, 9)).max() < 1e-12
    fp16 = bug_zoo.low_precision_table(np.arange(8192), 16, dtype=torch.float16)
    assert bug_zoo.duplicate_rows(fp16) == lost_positions(8192, torch.float16) == 4095
    assert np.array_equal(fp16[4096], fp16[4097])
    assert np.isnan(bug_zoo.low_precision_table([70000], 4, dtype=torch.float16)).all()  # overflow


def test_angles_in_dtype_rounds_positions_and_overflows():
    a = bug_zoo.angles_in_dtype([2049, 4097, 65504, 70000], 4, dtype=torch.float16)
    assert a.shape == (4, 2)
    assert a[0, 0] == 2048 and a[1, 0] == 4096 and a[2, 0] == 65504 and np.isinf(a[3, 0])
    assert np.array_equal(
        bug_zoo.angles_in_dtype([3, 5], 4, dtype=torch.float64), np.outer([3, 5], posenc.frequencies(4))
    )


@pytest.mark.parametrize("name", list(bug_zoo.TORCH_DTYPES))
def test_phase_error_against_mpmath(name):
    dtype = bug_zoo.TORCH_DTYPES[name]
    positions = np.array([1, 77, 3000, 40000, 2**24 - 3])
    d = 8
    got = bug_zoo.phase_error(positions, d, dtype=dtype)
    angles = bug_zoo.angles_in_dtype(positions, d, dtype=dtype)
    for r, p in enumerate(positions):
        for i in range(d // 2):
            if not np.isfinite(angles[r, i]):
                assert np.isnan(got[r, i])
                continue
            exact = mpmath.mpf(int(p)) * mpmath.power(10000, mpmath.mpf(-2 * i) / d)
            diff = mpmath.mpf(float(angles[r, i])) - exact
            wrapped = abs(diff - 2 * mpmath.pi * mpmath.nint(diff / (2 * mpmath.pi)))
            assert abs(float(wrapped) - got[r, i]) < 1e-11


@pytest.mark.parametrize("name", list(bug_zoo.TORCH_DTYPES))
def test_phase_error_is_bounded_by_three_roundings(name):
    dtype = bug_zoo.TORCH_DTYPES[name]
    u = torch.finfo(dtype).eps / 2
    positions = np.unique(np.round(np.logspace(0, 7, 60)).astype(np.int64))
    for base in [100.0, 10000.0, 500000.0]:
        err = bug_zoo.phase_error(positions, 32, base, dtype=dtype)
        finite = np.isfinite(err).all(axis=1)
        assert np.all(err[finite] >= 0) and np.all(err[finite] <= np.pi)
        if name != "float16":  # float16 frequencies of a large base are subnormal: larger relative error
            assert np.all(err[finite].max(axis=1) <= 3 * u * positions[finite] + 1e-12)


# --------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "d,base,layout",
    [
        (64, 10000.0, "interleaved"),
        (16, 500000.0, "interleaved"),
        (8, 100.0, "concatenated"),
        (7, 10000.0, "interleaved"),
    ],
)
def test_correct_tables_pass_every_structural_check(d, base, layout):
    table = posenc.sinusoidal(np.arange(1000, 1128), d, base, layout=layout)
    assert bug_zoo.duplicate_rows(table) == 0
    if d % 2 == 0:
        assert bug_zoo.toeplitz_defect(table) < 1e-12
    else:  # the lone last sine adds sin(p w) sin(q w), which depends on p + q too
        assert bug_zoo.toeplitz_defect(table) > 1e-3
    if d % 2 == 0:
        assert bug_zoo.best_linear_residual(table, 3) < 1e-10
    if d % 2 == 0 and layout == "interleaved":
        assert bug_zoo.rotation_residual(table, 1, base) < 1e-12
        assert bug_zoo.rotation_residual(table, 7, base) < 1e-12


def test_checks_accept_torch_tensors_and_flag_random_tables():
    torch.manual_seed(1)
    noise = torch.randn(100, 16) * 0.02
    assert bug_zoo.toeplitz_defect(noise) > 0.1
    assert bug_zoo.best_linear_residual(noise, 1) > 0.1
    assert bug_zoo.rotation_residual(noise, 1) > 0.01
    assert bug_zoo.gram(noise).shape == (100, 100)


def test_duplicate_rows_counts_repeats():
    table = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    assert bug_zoo.duplicate_rows(table) == 3
    assert bug_zoo.duplicate_rows(np.eye(4)) == 0


# --------------------------------------------------------------------------
# Layout variants
# --------------------------------------------------------------------------


@pytest.mark.parametrize("d", [4, 6, 32, 512])
def test_variant_tables(d):
    h = d // 2
    tables = {v: bug_zoo.variant_table(30, d, v) for v in bug_zoo.VARIANTS}
    assert np.array_equal(tables["interleaved"], posenc.sinusoidal(30, d))
    assert np.array_equal(tables["concatenated"], tables["interleaved"][:, posenc.layout_permutation(d)])
    assert np.array_equal(tables["cos_first"], np.roll(tables["concatenated"], h, axis=1))
    omega = 10000.0 ** (-np.arange(h) / (h - 1))
    angle = np.outer(np.arange(30), omega)
    assert np.allclose(tables["fairseq"], np.concatenate([np.sin(angle), np.cos(angle)], axis=1), atol=1e-12)
    assert np.isclose(omega[-1], 1e-4)
    assert np.array_equal(bug_zoo.variant_table(np.arange(30), d, "fairseq"), tables["fairseq"])


def test_variant_table_refuses_what_it_cannot_build():
    with pytest.raises(ValueError, match="variant must be one of"):
        bug_zoo.variant_table(5, 8, "sin_cos")
    for d in [2, 7]:
        for v in ["cos_first", "fairseq"]:
            with pytest.raises(ValueError, match="even d_model >= 4"):
                bug_zoo.variant_table(5, d, v)
    assert bug_zoo.variant_table(5, 7, "concatenated").shape == (5, 7)


@pytest.mark.parametrize("d", [4, 10, 64, 512])
@pytest.mark.parametrize("variant", bug_zoo.VARIANTS)
def test_identify_variant(variant, d):
    table = bug_zoo.variant_table(25, d, variant)
    assert bug_zoo.identify_variant(table) == variant
    assert bug_zoo.identify_variant(table.astype(np.float32)) == variant
    assert bug_zoo.identify_variant(torch.from_numpy(table)) == variant


def test_identify_variant_refuses_unknown_tables():
    with pytest.raises(ValueError, match="matches none"):
        bug_zoo.identify_variant(np.random.default_rng(0).normal(size=(20, 8)))
    with pytest.raises(ValueError, match="matches none"):
        bug_zoo.identify_variant(posenc.sinusoidal(20, 8, base=500.0))
    assert bug_zoo.identify_variant(posenc.sinusoidal(20, 8, base=500.0), base=500.0) == "interleaved"


def test_mystery_tables_are_deterministic_and_cover_every_variant():
    names = set()
    for k in range(1, 5):
        table = bug_zoo.mystery_table(k)
        assert table.dtype == np.float32 and table.shape == (64, 32)
        assert np.array_equal(table, bug_zoo.mystery_table(k))
        names.add(bug_zoo.identify_variant(table))
    assert names == set(bug_zoo.VARIANTS)
    assert bug_zoo.mystery_table(3, n=10, d_model=8).shape == (10, 8)
    assert math.isfinite(float(bug_zoo.mystery_table(9).sum()))


# Each variant as real float32 code computes it: positions, frequencies and
# angles all in float32, sin and cos taken in float32. Written from the math.


def _float32_angles(n, omega):
    return torch.arange(n, dtype=torch.float32)[:, None] * omega[None, :]


def paper_frequencies32(d, base=10000.0):
    """omega_i = base ** (-2i / d) as a float32 power of a float32 exponent."""
    return 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)


def fairseq_frequencies32(d, base=10000.0):
    """omega_i = exp(-i * log(base) / (h - 1)), h = d / 2, the step rounded to float32 first."""
    h = d // 2
    step = torch.tensor(math.log(base) / (h - 1), dtype=torch.float32)
    return torch.exp(torch.arange(h, dtype=torch.float32) * -step)


def float32_recipe(n, d, variant, base=10000.0):
    if variant == "fairseq":
        angle = _float32_angles(n, fairseq_frequencies32(d, base))
        return torch.cat([angle.sin(), angle.cos()], dim=1)
    angle = _float32_angles(n, paper_frequencies32(d, base))  # ceil(d/2) pairs
    sin, cos = angle.sin(), angle.cos()[:, : d // 2]
    if variant == "interleaved":
        out = torch.empty(n, d)
        out[:, 0::2], out[:, 1::2] = sin, cos
        return out
    if variant == "concatenated":  # x-transformers, tensor2tensor
        return torch.cat([sin, cos], dim=1)
    return torch.cat([cos, sin], dim=1)  # cos_first


@pytest.mark.parametrize("n, d, variant", [(2048, 64, "fairseq"), (2048, 512, "concatenated")])
def test_the_reported_float32_tables_are_identified(n, d, variant):
    """The reported float32 tables: off by more than 1e-4 from the exact variant, still identified."""
    table = float32_recipe(n, d, variant)
    assert np.abs(table.double().numpy() - bug_zoo.variant_table(n, d, variant)).max() > 1e-4
    assert bug_zoo.identify_variant(table) == variant
    assert bug_zoo.identify_variant(table.numpy()) == variant


def _buildable(variant, d):
    return d % 2 == 0 or variant in ("interleaved", "concatenated")


@pytest.mark.parametrize("n", [2, 16, 300, 3000])
@pytest.mark.parametrize(
    "variant, d", [(v, d) for v in bug_zoo.VARIANTS for d in [5, 8, 33, 64, 256] if _buildable(v, d)]
)
def test_every_float32_recipe_is_identified_as_itself_only(variant, d, n):
    table = float32_recipe(n, d, variant).double().numpy()
    assert bug_zoo.identify_variant(table) == variant
    # and it is outside the tolerance of every other variant that can be built at this size
    n_rows = np.maximum(np.arange(n), 1)[:, None]
    allowed = 1e-4 + bug_zoo.ANGLE_SLACK * n_rows
    for other in bug_zoo.VARIANTS:
        if other == variant or not _buildable(other, d):
            continue
        assert np.any(np.abs(table - bug_zoo.variant_table(n, d, other)) > allowed), other
