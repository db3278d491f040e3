"""posenc's RoPE scaling rules against Hugging Face transformers (a test dependency, pinned 5.24.0).

For every rope type in ``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS`` and for the default
frequencies (``LlamaRotaryEmbedding.compute_default_rope_parameters``), hypothesis draws many configs
(head sizes, bases, factors, lengths, betas, mscales, per-pair factors, partial rotation), builds each
config locally (no download: ``HF_HUB_OFFLINE=1``) and compares the inverse frequencies and attention
factor with ``posenc.rope_parameters``.

Precision, the one deliberate difference. The library computes the frequencies in float32 (``torch.float``,
``torch.float32`` and ``Tensor.float()`` are written into its formulas); posenc computes them in float64 with
the default ladder correctly rounded. So each config is compared twice:

* with the library's own code run in float64 (``library_in_float64`` below swaps the float32 dtype for
  float64 inside the library's modules while it runs): its formulas, evaluated at our precision, must agree
  to 1e-12 relative (they agree to a few units in the last place of float64);
* as shipped, in float32: within float32 rounding of the exponent and of YaRN's ramp (1e-5 relative).

Other differences, on purpose (each has its own test below): posenc raises a ValueError where the library
silently substitutes a default (``beta_fast=0`` or ``beta_slow=0``, ``mscale`` given without
``mscale_all_dim``, a factor below 1, an odd rotated width); and posenc's ``"default"`` honours
``partial_rotary_factor`` (as GPT-NeoX's default does), while Llama's default ignores it, so the default is
compared at ``partial_rotary_factor = 1``.

Layout. The library's ``rotate_half`` pairs channel ``i`` with channel ``i + r/2`` of the ``r`` rotated
channels: that is posenc's ``layout="concatenated"``. posenc's ``"interleaved"`` (pairs ``2i, 2i+1``) is the
same rotation after the channel permutation ``posenc.layout_permutation(r)``.

The number of configs compared and the largest differences are printed at the end of the module.
"""

from __future__ import annotations

import contextlib
import math
import os
import types

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st

import posenc

# The library, imported by the first test of this module (``_library``), not at collection: importing it takes
# seconds, which every pytest-xdist worker would pay to collect this file, though one runs it.
transformers = LlamaConfig = Qwen2VLTextConfig = rope_utils = modeling_llama = modeling_qwen2_vl = None


@pytest.fixture(scope="module", autouse=True)
def _library():
    global transformers, LlamaConfig, Qwen2VLTextConfig, rope_utils, modeling_llama, modeling_qwen2_vl
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    transformers = pytest.importorskip("transformers")
    from transformers import LlamaConfig, Qwen2VLTextConfig, modeling_rope_utils as rope_utils
    from transformers.models.llama import modeling_llama
    from transformers.models.qwen2_vl import modeling_qwen2_vl

    transformers.logging.set_verbosity_error()  # the configs' validation warns about the odd values we try


RTOL = 1e-12  # posenc against the library's formulas evaluated in float64
RTOL_FLOAT32 = 1e-5  # posenc against the library as shipped (float32 exponent, and float32 YaRN ramp)
LIBRARY_TYPES = ("linear", "dynamic", "yarn", "longrope", "llama3", "proportional")
STATS: dict = {}  # rope_type -> {"sets": n, "float64": largest relative difference, "float32": ...}

# ---------------------------------------------------------------------------------------------------------
# the library in float64
# ---------------------------------------------------------------------------------------------------------


class _Float64Torch(types.ModuleType):
    """``torch`` as the library's modules see it while ``library_in_float64`` runs: float32 means float64."""

    float = torch.float64
    float32 = torch.float64

    def __getattr__(self, name):
        return getattr(torch, name)


@contextlib.contextmanager
def library_in_float64():
    modules = (rope_utils, modeling_llama, modeling_qwen2_vl)
    saved = [m.torch for m in modules]
    own = "float" in vars(torch.Tensor)
    old_float = torch.Tensor.float
    try:
        for m in modules:
            m.torch = _Float64Torch("torch")
        torch.Tensor.float = lambda self, *a, **k: self.double()
        yield
    finally:
        for m, t in zip(modules, saved):
            m.torch = t
        if own:
            torch.Tensor.float = old_float
        else:
            del torch.Tensor.float


def test_library_in_float64_restores_torch():
    with library_in_float64():
        assert torch.ones(2).float().dtype == torch.float64
    assert torch.ones(2).double().float().dtype == torch.float32
    assert rope_utils.torch is torch and modeling_llama.torch is torch


# ---------------------------------------------------------------------------------------------------------
# configs, built locally
# ---------------------------------------------------------------------------------------------------------


def config(head_dim, base, rope_type, max_position_embeddings=4096, **params):
    rope = {"rope_type": rope_type, "rope_theta": base}
    # None means "not in the config" (yarn reads its factor key even when it is None: kept for yarn)
    rope.update(
        {
            k: v
            for k, v in params.items()
            if k != "seq_len" and (v is not None or (rope_type == "yarn" and k == "factor"))
        }
    )
    return LlamaConfig(
        hidden_size=2 * head_dim,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=rope,
    )


def library(rope_type, cfg, seq_len=None, *, float64=True):
    fn = (
        modeling_llama.LlamaRotaryEmbedding.compute_default_rope_parameters
        if rope_type == "default"
        else rope_utils.ROPE_INIT_FUNCTIONS[rope_type]
    )
    with library_in_float64() if float64 else contextlib.nullcontext():
        kwargs = {} if seq_len is None else {"seq_len": seq_len}
        inv, factor = fn(cfg, **kwargs)
    return inv.double().numpy(), float(factor)


def relative(ours, theirs):
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    zero = theirs == 0
    assert np.array_equal(ours[zero], theirs[zero]), "a pair the library leaves unrotated turns in posenc"
    return float(np.max(np.abs(ours[~zero] / theirs[~zero] - 1), initial=0.0))


def compare(rope_type, head_dim, base, max_position_embeddings=4096, *, rtol32=RTOL_FLOAT32, **params):
    """posenc against the library for one config, in float64 and as shipped (within ``rtol32``); returns
    posenc's result."""
    cfg = config(head_dim, base, rope_type, max_position_embeddings, **params)
    ours = dict(params)
    if rope_type in ("dynamic", "yarn", "longrope"):
        ours["max_position_embeddings"] = max_position_embeddings
    if rope_type in ("yarn", "longrope") and ours.get("factor") is None:
        ours.pop("factor", None)
    ours = {k: v for k, v in ours.items() if v is not None}
    inv, factor = posenc.rope_parameters(head_dim, base, rope_type, **ours)
    stats = STATS.setdefault(rope_type, {"sets": 0, "float64": 0.0, "float32": 0.0, "factor": 0.0})
    seq_len = params.get("seq_len")
    lib_inv, lib_factor = library(rope_type, cfg, seq_len)
    err64 = relative(inv, lib_inv)
    assert err64 <= RTOL, f"{rope_type}: relative difference {err64:.2e} from the library in float64"
    err_factor = abs(factor / lib_factor - 1)
    assert err_factor <= RTOL, f"{rope_type}: attention factor {factor!r} != library's {lib_factor!r}"
    shipped_inv, shipped_factor = library(
        rope_type, config(head_dim, base, rope_type, max_position_embeddings, **params), seq_len, float64=False
    )
    err32 = relative(inv, shipped_inv)
    assert err32 <= rtol32, f"{rope_type}: {err32:.2e} from the library in float32 (allowed {rtol32:.2e})"
    assert shipped_factor == pytest.approx(factor, rel=1e-12)
    stats["sets"] += 1
    stats["float64"] = max(stats["float64"], err64)
    stats["float32"] = max(stats["float32"], err32)
    stats["factor"] = max(stats["factor"], err_factor)
    return inv, factor


@pytest.fixture(scope="module", autouse=True)
def report(request):
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not STATS:
        return
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        write_report(reporter)


def write_report(reporter):
    reporter.write_line("")
    reporter.write_line(
        f"posenc.rope_parameters against transformers {transformers.__version__} (largest relative differences):"
    )
    for rope_type, s in STATS.items():
        reporter.write_line(
            f"  {rope_type:13s} {s['sets']:5d} configs   inv_freq vs library in float64 "
            f"{s['float64']:.1e}, as shipped (float32) {s['float32']:.1e}, "
            f"attention factor {s['factor']:.1e}"
        )


# ---------------------------------------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------------------------------------

EXAMPLES = settings(
    max_examples=int(os.environ.get("POSENC_ROPE_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
head_dims = st.integers(2, 128).map(lambda h: 2 * h)
bases = st.one_of(
    st.sampled_from([10000.0, 500000.0, 1000000.0, 5000000.0, 160.0]), st.floats(0.5, 7.5).map(lambda e: 10.0**e)
)
factors = st.one_of(st.sampled_from([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 40.0]), st.floats(1.0, 64.0))
lengths = st.one_of(st.sampled_from([2048, 4096, 8192, 32768]), st.integers(16, 2**17))
partials = st.one_of(st.just(1.0), st.sampled_from([0.25, 0.5, 0.75]), st.floats(0.05, 1.0))


def rotated(head_dim, prf, at_least=2):
    r = int(head_dim * prf)
    assume(r >= at_least and r % 2 == 0)
    return r


# ---------------------------------------------------------------------------------------------------------
# every rope type
# ---------------------------------------------------------------------------------------------------------


def test_every_library_rope_type_is_covered():
    assert set(rope_utils.ROPE_INIT_FUNCTIONS) == set(LIBRARY_TYPES)
    assert set(posenc.ROPE_TYPES) == {"default", *LIBRARY_TYPES}


@EXAMPLES
@given(head_dim=head_dims, base=bases)
def test_default(head_dim, base):
    compare("default", head_dim, base)


@EXAMPLES
@given(head_dim=head_dims, base=bases, factor=factors, prf=partials)
def test_linear(head_dim, base, factor, prf):
    rotated(head_dim, prf)
    compare("linear", head_dim, base, factor=factor, partial_rotary_factor=prf)


@EXAMPLES
@given(
    head_dim=head_dims,
    base=bases,
    factor=factors,
    prf=partials,
    mpe=lengths,
    seq=st.one_of(st.none(), st.floats(0.01, 8.0)),
)
def test_dynamic(head_dim, base, factor, prf, mpe, seq):
    rotated(head_dim, prf, at_least=4)
    seq_len = None if seq is None else max(1, int(seq * mpe))
    compare("dynamic", head_dim, base, mpe, factor=factor, partial_rotary_factor=prf, seq_len=seq_len)


def yarn_float32_tolerance(head_dim, base, original, factor, prf, beta_fast, beta_slow, truncate) -> float:
    """How far the library's float32 YaRN may be from the exact values. It forms the ramp as
    ``(arange(dim // 2, float32) - low) / (high - low)``: ``low`` rounded to float32 and the subtraction err by
    up to ``2**-24 * (|low| + dim / 2)``, which the division by ``high - low`` (a fraction of a pair when the two
    betas are close and the ends are not truncated) magnifies; an error ``d`` in the ramp moves a frequency
    ``w * (1 - ramp * (1 - 1/s))`` by at most ``d * (s - 1)`` relative to it. Twice that, on top of RTOL_FLOAT32."""
    dim = posenc.rotary_dim(head_dim, prf)
    low, high = posenc._yarn_ramp_ends(dim, base, original, beta_fast, beta_slow, truncate)
    width = abs(high - low)  # clipping can put high below low
    ramp_error = 2.0**-24 * (abs(low) + dim / 2) / width
    return RTOL_FLOAT32 + 2 * ramp_error * max(factor - 1, 0)


@EXAMPLES
@given(
    head_dim=head_dims,
    base=bases,
    factor=st.one_of(st.none(), factors),
    prf=partials,
    original=lengths,
    betas=st.tuples(st.floats(1.0, 64.0), st.floats(0.05, 1.0)),
    truncate=st.booleans(),
    mscales=st.one_of(st.none(), st.tuples(st.floats(0.1, 2.0), st.floats(0.1, 2.0))),
    attention=st.one_of(st.none(), st.floats(0.5, 2.0)),
    stretch=st.integers(1, 8),
)
@example(
    head_dim=112,
    base=10000.0,
    factor=4.0,
    prf=1.0,
    original=38349,
    betas=(1.0, 0.984375),
    truncate=False,
    mscales=None,
    attention=None,
    stretch=1,
)  # a ramp 0.16 pairs wide: the library's float32 is off by 1.3e-5
def test_yarn(head_dim, base, factor, prf, original, betas, truncate, mscales, attention, stretch):
    rotated(head_dim, prf)
    beta_fast, beta_slow = betas[0] * 1.0001 + 0.01, betas[0] * betas[1]  # beta_fast > beta_slow > 0
    mscale, mscale_all_dim = mscales or (None, None)
    compare(
        "yarn",
        head_dim,
        base,
        original * stretch,
        factor=factor,
        partial_rotary_factor=prf,
        rtol32=yarn_float32_tolerance(head_dim, base, original, factor or stretch, prf, beta_fast, beta_slow, truncate),
        original_max_position_embeddings=original,
        beta_fast=beta_fast,
        beta_slow=beta_slow,
        truncate=truncate,
        mscale=mscale,
        mscale_all_dim=mscale_all_dim,
        attention_factor=attention,
    )


@EXAMPLES
@given(
    head_dim=head_dims,
    base=bases,
    factor=st.one_of(st.none(), factors),
    prf=partials,
    original=lengths,
    seq=st.one_of(st.none(), st.floats(0.01, 4.0)),
    attention=st.one_of(st.none(), st.floats(0.5, 2.0)),
    stretch=st.integers(1, 32),
    data=st.data(),
)
def test_longrope(head_dim, base, factor, prf, original, seq, attention, stretch, data):
    r = rotated(head_dim, prf)
    per_pair = st.lists(st.floats(1.0, 64.0), min_size=r // 2, max_size=r // 2)
    short, long = data.draw(per_pair), data.draw(per_pair)
    seq_len = None if seq is None else max(1, int(seq * original))
    compare(
        "longrope",
        head_dim,
        base,
        original * stretch,
        factor=factor,
        partial_rotary_factor=prf,
        original_max_position_embeddings=original,
        short_factor=short,
        long_factor=long,
        seq_len=seq_len,
        attention_factor=attention,
    )


def llama3_float32_tolerance(factor, low, high) -> float:
    """How far the library's float32 Llama 3 rule may be from the exact values. Its smoothing factor
    ``(L / wavelength - low) / (high - low)`` is formed from a float32 frequency (a few roundings: the power, the
    wavelength ``2 pi / w``, ``L / wavelength``, the subtraction), each up to ``2**-24`` of ``L / wavelength <=
    high``, which the division by ``high - low`` magnifies when the two factors are close; an error ``d`` in the
    smoothing factor moves a frequency by at most ``d * (s - 1)`` relative to it. Twice that, on top of
    RTOL_FLOAT32."""
    smooth_error = 4 * 2.0**-24 * high / (high - low)
    return RTOL_FLOAT32 + 2 * smooth_error * max(factor - 1, 0)


@EXAMPLES
@given(
    head_dim=head_dims,
    base=bases,
    factor=factors,
    prf=partials,
    original=lengths,
    low=st.floats(0.25, 4.0),
    gap=st.floats(0.05, 16.0),
)
@example(head_dim=50, base=500000.0, factor=8.0, prf=1.0, original=2048, low=2.875, gap=0.25)  # off by 1.16e-5
def test_llama3(head_dim, base, factor, prf, original, low, gap):
    rotated(head_dim, prf)
    compare(
        "llama3",
        head_dim,
        base,
        factor=factor,
        partial_rotary_factor=prf,
        original_max_position_embeddings=original,
        low_freq_factor=low,
        high_freq_factor=low + gap,
        rtol32=llama3_float32_tolerance(factor, low, low + gap),
    )


@EXAMPLES
@given(
    head_dim=head_dims,
    base=bases,
    factor=st.one_of(st.none(), factors),
    prf=st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.floats(0.0, 1.0)),
)
def test_proportional(head_dim, base, factor, prf):
    inv, _ = compare("proportional", head_dim, base, factor=factor, partial_rotary_factor=prf)
    assert np.count_nonzero(inv) == int(prf * head_dim // 2)


def test_published_configs():
    """The rope blocks of a few published models (the chapter reads the same numbers)."""
    compare(
        "llama3",
        128,
        500000.0,
        131072,
        factor=8.0,
        low_freq_factor=1.0,
        high_freq_factor=4.0,
        original_max_position_embeddings=8192,
    )  # Llama 3.1
    compare("yarn", 128, 1000000.0, 131072, factor=4.0, original_max_position_embeddings=32768)  # Qwen2.5
    compare(
        "yarn",
        64,
        10000.0,
        163840,
        factor=40.0,
        original_max_position_embeddings=4096,
        beta_fast=32.0,
        beta_slow=1.0,
        mscale=1.0,
        mscale_all_dim=1.0,
    )  # DeepSeek-V3 (rope head 64)
    compare("linear", 128, 10000.0, 16384, factor=4.0)
    compare("dynamic", 128, 10000.0, 4096, factor=2.0, seq_len=16384)
    compare("proportional", 256, 1000000.0, factor=8.0, partial_rotary_factor=0.25)


# ---------------------------------------------------------------------------------------------------------
# applying the rotation: posenc.apply_rope against apply_rotary_pos_emb
# ---------------------------------------------------------------------------------------------------------


def library_rotate(q, k, positions, inv_freq, attention_factor):
    """The library's rotation in float64: cos/sin tables as its rotary modules build them, partial like NeoX."""
    inv = torch.as_tensor(inv_freq, dtype=torch.float64)
    freqs = torch.as_tensor(positions, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.cat([freqs, freqs], -1)
    cos, sin = (emb.cos() * attention_factor)[None], (emb.sin() * attention_factor)[None]
    r = emb.shape[-1]
    qr, kr = modeling_llama.apply_rotary_pos_emb(q[..., :r], k[..., :r], cos, sin)
    return torch.cat([qr, q[..., r:]], -1), torch.cat([kr, k[..., r:]], -1)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    rope_type=st.sampled_from(["default", "linear", "yarn", "llama3", "proportional"]),
    head_dim=st.integers(2, 64).map(lambda h: 2 * h),
    prf=partials,
    base=bases,
    positions=st.lists(st.integers(0, 200_000), min_size=1, max_size=9),
    seed=st.integers(0, 2**16),
)
def test_apply_rope_matches_apply_rotary_pos_emb(rope_type, head_dim, prf, base, positions, seed):
    prf = 1.0 if rope_type == "default" else prf
    rotated(head_dim, prf)
    params = {
        "default": {},
        "linear": {"factor": 4.0},
        "llama3": {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 512,
        },
        "yarn": {"factor": 8.0, "original_max_position_embeddings": 512, "max_position_embeddings": 4096},
        "proportional": {},
    }[rope_type]
    inv, factor = posenc.rope_parameters(head_dim, base, rope_type, partial_rotary_factor=prf, **params)
    rng = np.random.default_rng(seed)
    q, k = (torch.from_numpy(rng.normal(size=(1, 2, len(positions), head_dim))) for _ in range(2))
    lib_q, lib_k = library_rotate(q, k, positions, inv, factor)
    for x, expected in ((q, lib_q), (k, lib_k)):
        ours = posenc.apply_rope(x, positions, inv_freq=inv, attention_factor=factor, layout="concatenated")
        # angles up to 2e5 radians formed in float64 on both sides: about 1e-11 apart
        torch.testing.assert_close(ours, expected, rtol=0, atol=1e-9)
        r = 2 * len(inv)  # interleaved = the same rotation with the rotated channels permuted
        perm = np.concatenate([posenc.layout_permutation(r), np.arange(r, head_dim)])
        back = np.argsort(perm)
        inter = posenc.apply_rope(x.numpy()[..., back], positions, inv_freq=inv, attention_factor=factor)
        np.testing.assert_allclose(inter[..., perm], expected.numpy(), rtol=0, atol=1e-9)


def test_apply_rope_with_the_default_ladder_is_the_plain_rope():
    x = np.random.default_rng(3).normal(size=(2, 7, 16))
    inv, _ = posenc.rope_parameters(16, 500000.0)
    for layout in posenc.LAYOUTS:
        np.testing.assert_allclose(
            posenc.apply_rope(x, None, 500000.0, layout=layout, inv_freq=inv),
            posenc.apply_rope(x, None, 500000.0, layout=layout),
            atol=1e-13,
        )


def test_the_library_rotary_module_in_float32():
    """LlamaRotaryEmbedding as shipped (float32 angles) against posenc, at positions where float32 suffices."""
    cfg = config(64, 500000.0, "yarn", 32768, factor=4.0, original_max_position_embeddings=8192)
    module = modeling_llama.LlamaRotaryEmbedding(cfg)
    positions = torch.arange(0, 2000, 7)[None]
    x = torch.randn(1, 2, positions.shape[1], 64, generator=torch.Generator().manual_seed(0))
    cos, sin = module(x, positions)
    lib_q, _ = modeling_llama.apply_rotary_pos_emb(x, x, cos, sin)
    inv, factor = posenc.rope_parameters(64, 500000.0, "yarn", factor=4.0, original_max_position_embeddings=8192)
    ours = posenc.apply_rope(x.double(), positions[0], inv_freq=inv, attention_factor=factor, layout="concatenated")
    assert module.attention_scaling == pytest.approx(factor, rel=1e-12)
    torch.testing.assert_close(ours.float(), lib_q, rtol=0, atol=2e-3)


def test_multimodal_rope_matches_qwen2_vl():
    """apply_rope_axes with mrope_section = Qwen2-VL's rotary module (its recomposition of the pairs)."""
    sections = [4, 6, 6]
    cfg = Qwen2VLTextConfig(
        hidden_size=64,
        num_attention_heads=2,
        head_dim=32,
        max_position_embeddings=4096,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": sections},
    )
    with library_in_float64():
        module = modeling_qwen2_vl.Qwen2VLRotaryEmbedding(cfg)
        rng = np.random.default_rng(5)
        pos = rng.integers(0, 500, size=(9, 3))
        x = torch.from_numpy(rng.normal(size=(1, 1, 9, 32)))
        cos, sin = module(x, torch.from_numpy(pos.T[:, None, :]))
    lib_q, _ = modeling_qwen2_vl.apply_rotary_pos_emb(x, x, cos, sin)
    ours = posenc.apply_rope_axes(x, pos, sections)
    torch.testing.assert_close(ours, lib_q, rtol=0, atol=1e-11)


# ---------------------------------------------------------------------------------------------------------
# where posenc deliberately differs: a clear error instead of a silent substitute
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rope_type", "params", "named"),
    [
        ("linear", {"factor": 0.5}, "factor"),
        ("linear", {}, "factor"),
        ("linear", {"factor": 2.0, "beta_fast": 3.0}, "beta_fast"),
        ("yarn", {"factor": 4.0, "original_max_position_embeddings": 4096, "beta_fast": 0.0}, "beta_fast"),
        (
            "yarn",
            {"factor": 4.0, "original_max_position_embeddings": 4096, "beta_fast": 1.0, "beta_slow": 2.0},
            "beta_fast must be greater",
        ),
        ("yarn", {"factor": 4.0, "original_max_position_embeddings": 4096, "mscale": 0.7}, "mscale_all_dim"),
        ("yarn", {"factor": 4.0}, "original_max_position_embeddings"),
        ("yarn", {"factor": 4.0, "original_max_position_embeddings": 4096, "truncate": "yes"}, "truncate"),
        (
            "longrope",
            {
                "original_max_position_embeddings": 4096,
                "factor": 2.0,
                "short_factor": [1.0] * 3,
                "long_factor": [1.0] * 32,
            },
            "short_factor",
        ),
        (
            "llama3",
            {"factor": 8.0, "original_max_position_embeddings": 8192, "low_freq_factor": 4.0, "high_freq_factor": 1.0},
            "high_freq_factor",
        ),
        ("llama3", {"factor": 8.0, "original_max_position_embeddings": 8192}, "low_freq_factor"),
        ("dynamic", {"factor": 2.0}, "max_position_embeddings"),
        ("default", {"partial_rotary_factor": 0.3}, "even"),
        ("default", {"partial_rotary_factor": 1.5}, "partial_rotary_factor"),
        ("proportional", {"partial_rotary_factor": -0.1}, "partial_rotary_factor"),
        ("nope", {}, "rope_type"),
    ],
)
def test_bad_parameters_are_named(rope_type, params, named):
    with pytest.raises(ValueError, match=named):
        posenc.rope_parameters(64, 10000.0, rope_type, **params)


def test_library_substitutes_where_posenc_refuses():
    """The library turns beta_fast=0 into 32 and ignores a lone mscale: posenc raises instead (tested above)."""
    cfg = config(64, 10000.0, "yarn", 16384, factor=4.0, original_max_position_embeddings=4096, beta_fast=0)
    inv0, _ = library("yarn", cfg)
    inv32, _ = posenc.rope_parameters(64, 10000.0, "yarn", factor=4.0, original_max_position_embeddings=4096)
    assert relative(inv32, inv0) < RTOL
    lone = config(64, 10000.0, "yarn", 16384, factor=4.0, original_max_position_embeddings=4096, mscale=0.5)
    assert library("yarn", lone)[1] == pytest.approx(0.1 * math.log(4.0) + 1)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"rotary_dim": 3}, "rotary_dim"),
        ({"rotary_dim": 32}, "rotary_dim"),
        ({"inv_freq": [0.5] * 9}, "rotary_dim"),
        ({"inv_freq": [1.0, float("nan")]}, "inv_freq"),
        ({"attention_factor": 0.0}, "attention_factor"),
        ({"inv_freq": [1.0, 0.5], "rotary_dim": 8}, "inv_freq"),
    ],
)
def test_apply_rope_keywords_are_checked(kwargs, named):
    with pytest.raises(ValueError, match=named):
        posenc.apply_rope(np.zeros((3, 16)), **kwargs)


def test_apply_rope_axes_checks_its_input():
    x = np.zeros((4, 16))
    with pytest.raises(ValueError, match="sections"):
        posenc.apply_rope_axes(x, np.zeros((4, 2)), [5, 5])
    with pytest.raises(ValueError, match="positions"):
        posenc.apply_rope_axes(x, np.zeros((4, 3)), [4, 4])
    with pytest.raises(ValueError, match="sections"):
        posenc.apply_rope_axes(x, np.zeros((4, 2)), [4, 0])
