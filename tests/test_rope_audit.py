"""Tests for posenc_course.rope_audit, against Hugging Face transformers (the ``models`` extra, pinned 5.24.0).

Every model is tiny and built from a config with random weights (width 64, one layer, four heads, two key-value
heads: no download, ``HF_HUB_OFFLINE=1``), one per family the library ships with RoPE: Llama, Qwen2, Mistral,
Phi-3 (LongRoPE), GPT-NeoX (partial rotation) and Gemma. For each family the check must pass a correct model and
flag each broken config (a dropped ``rope_theta``, a deleted scaling block, the wrong ``rope_type``, a wrong
``partial_rotary_factor``) with the right named difference and the first position where the angles diverge.

The layout conversion is tested for real: a Meta-style forward (interleaved rotation, posenc.apply_rope with
``layout="interleaved"``, in float64) on the original weights against the library's Llama attention on the
converted weights; each wrong conversion is measured and must disagree. Its permutation is compared with the
two the library ships (GGUF loading, ``core_model_loading.PermuteForRope``).

Like tests/test_posenc_rope_scaling.py, the module imports transformers in its first fixture (seconds, paid
once) and is skipped without it.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import posenc
from posenc_course.arguments import ArgumentError
from posenc_course.rope_audit import (
    DIFFERENCES,
    RotaryReport,
    check_rotary,
    convert_qk,
    half_split_to_interleaved,
    interleaved_to_half_split,
)

HEADS, KV_HEADS, HEAD_DIM = 4, 2, 16
TINY = dict(
    hidden_size=HEADS * HEAD_DIM,
    intermediate_size=128,
    num_hidden_layers=1,
    num_attention_heads=HEADS,
    num_key_value_heads=KV_HEADS,
    vocab_size=32,
    max_position_embeddings=512,
    pad_token_id=0,
    bos_token_id=None,
    eos_token_id=None,
)
# LongRoPE's per-pair factors (Phi-3 style): trained length 64, extended to 256
SHORT = [1.0, 1.0, 1.1, 1.2, 1.3, 1.5, 1.8, 2.0]
LONG = [1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0]


@pytest.fixture(scope="module")
def tf():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()  # the tiny configs' token ids and odd values are on purpose
    return transformers


def config(tf, family: str, **settings):
    """A tiny config of ``family``; ``settings`` (rope settings, a length) replace the family's usual ones."""
    if family == "gpt_neox":
        kw = {k: v for k, v in TINY.items() if k != "num_key_value_heads"}
        return tf.GPTNeoXConfig(**(kw | {"rotary_pct": 0.25} | settings))
    cls = {
        "llama": tf.LlamaConfig,
        "qwen2": tf.Qwen2Config,
        "mistral": tf.MistralConfig,
        "phi3": tf.Phi3Config,
        "gemma": tf.GemmaConfig,
    }[family]
    extra = {"head_dim": HEAD_DIM} if family == "gemma" else {}
    if family == "phi3":
        extra = dict(max_position_embeddings=256, original_max_position_embeddings=64)
    return cls(**(TINY | extra | settings))


MODELS = {
    "llama": "LlamaForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
    "mistral": "MistralForCausalLM",
    "phi3": "Phi3ForCausalLM",
    "gpt_neox": "GPTNeoXForCausalLM",
    "gemma": "GemmaForCausalLM",
}
# each family as released checkpoints configure it (the base, the scaling block)
AS_RELEASED = {
    "llama": dict(
        rope_parameters={
            "rope_type": "llama3",
            "rope_theta": 500_000.0,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64,
        }
    ),
    "qwen2": dict(
        rope_parameters={
            "rope_type": "yarn",
            "rope_theta": 1_000_000.0,
            "factor": 4.0,
            "original_max_position_embeddings": 128,
        }
    ),
    "mistral": dict(rope_parameters={"rope_type": "default", "rope_theta": 1_000_000.0}),
    "phi3": dict(rope_parameters={"rope_type": "longrope", "short_factor": SHORT, "long_factor": LONG}),
    "gpt_neox": dict(rotary_pct=0.25),
    "gemma": dict(rope_parameters={"rope_type": "default", "rope_theta": 10_000.0}),
}


@pytest.fixture(scope="module")
def models(tf):
    """One tiny model of each family, as released (random weights)."""
    torch.manual_seed(0)
    return {family: getattr(tf, MODELS[family])(config(tf, family, **AS_RELEASED[family])).eval() for family in MODELS}


def expected_angles_diverge_at(report: RotaryReport, model_inv, ref_inv, atol: float, rtol: float = 1e-5):
    """Check the report's first diverging position by its definition: within tolerance before it, beyond at it."""
    p = report.angles_diverge_at

    def beyond(pos):
        gap = np.abs(pos * (model_inv - ref_inv))
        return bool(np.any(gap > atol + rtol * pos * ref_inv))

    assert p is not None and beyond(p) and not beyond(p - 1)


# --------------------------------------------------------------------------
# correct models are not flagged
# --------------------------------------------------------------------------


@pytest.mark.parametrize("family", list(MODELS))
def test_a_correct_model_of_each_family_is_not_flagged(models, family):
    dtypes = (torch.float32, torch.bfloat16, torch.float16)
    positions = 256 if family == "phi3" else 512  # Phi-3's long factors from 65 tokens on
    report = check_rotary(models[family], positions=positions, dtypes=dtypes)
    assert report.ok, str(report)
    assert report.differences == () and report.angles_diverge_at is None
    assert set(report.cos_sin) == {"float32", "bfloat16", "float16"}
    assert all(first is None for _, first in report.cos_sin.values())
    assert str(report).splitlines()[0].endswith(": ok")


@pytest.mark.parametrize("family", list(MODELS))
def test_a_config_is_checked_through_the_library_s_own_rotary_embedding(tf, models, family):
    cfg = config(tf, family, **AS_RELEASED[family])
    from_config, from_model = check_rotary(cfg, positions=64), check_rotary(models[family], positions=64)
    assert from_config.ok and from_config.rotary == from_model.rotary
    assert from_config.settings == from_model.settings


def test_phi3_longrope_is_checked_with_short_and_long_factors(models):
    phi = models["phi3"]
    short, long = check_rotary(phi, positions=64), check_rotary(phi, positions=[0, 1, 100, 255])
    assert short.ok and long.ok
    expected = math.sqrt(1 + math.log(4.0) / math.log(64))  # LongRoPE's attention factor for 64 -> 256 tokens
    assert short.settings["attention_factor"] == pytest.approx(expected, rel=1e-12)
    # the check ran on a copy: after the long check, the model's buffer still holds the short factors
    lr = dict(factor=4.0, short_factor=SHORT, long_factor=LONG, original_max_position_embeddings=64, seq_len=64)
    inv_short = posenc.rope_parameters(HEAD_DIM, 10_000.0, "longrope", **lr)[0]
    assert np.allclose(phi.model.rotary_emb.inv_freq.double().numpy(), inv_short, rtol=1e-6)


def test_a_model_cast_whole_to_bfloat16_is_flagged(tf):
    """``model.to(torch.bfloat16)`` rounds the inv_freq buffer too: the angles drift, by 0.7 in cos at 4,095."""
    cfg = config(tf, "llama", max_position_embeddings=4096)
    model = tf.LlamaForCausalLM(cfg).to(torch.bfloat16)
    assert model.model.rotary_emb.inv_freq.dtype == torch.bfloat16
    report = check_rotary(model, dtypes=(torch.bfloat16,))
    assert report.differs == {"frequencies", "cos_sin"}
    largest, first = report.cos_sin["bfloat16"]
    assert largest > 0.5 and 1 < first < 4096
    assert check_rotary(tf.LlamaForCausalLM(cfg), dtypes=(torch.bfloat16,)).ok  # the same model, not cast


def test_cohere_s_interleaved_cos_sin_are_read_as_its_layout(tf):
    """Cohere lays cos and sin out interleaved (``repeat_interleave``, its rotation pairs 2i, 2i+1): correct."""
    cohere = check_rotary(tf.CohereConfig(**TINY), positions=512, dtypes=(torch.float32, torch.bfloat16))
    assert cohere.ok and cohere.settings["layout"] == "interleaved"
    assert "rotates 16 of 16 channels (interleaved)" in str(cohere)
    llama = check_rotary(config(tf, "llama"), positions=512)
    assert llama.settings["layout"] == "half-split"


def test_scaling_rules_and_the_legacy_type_key_are_not_flagged(tf):
    """linear, dynamic (beyond its trained length), yarn, llama3; and ``type`` for ``rope_type`` (transformers 4.x)."""
    blocks = [
        {"rope_type": "linear", "factor": 4.0},
        {"rope_type": "dynamic", "factor": 2.0},
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 128, "beta_fast": 16.0},
        {"rope_type": "proportional", "partial_rotary_factor": 0.5},
    ]
    for block in blocks:
        report = check_rotary(config(tf, "llama", rope_parameters=block), positions=[0, 1, 7, 300, 1000])
        assert report.ok, str(report)
    legacy = config(tf, "llama", rope_scaling={"type": "linear", "factor": 4.0})
    modern = config(tf, "llama", rope_parameters={"rope_type": "linear", "factor": 4.0})
    assert check_rotary(modern, positions=300, reference_config=legacy).ok


def test_dynamic_ntk_is_checked_at_the_length_the_positions_reach(tf):
    dynamic = tf.LlamaForCausalLM(config(tf, "llama", rope_parameters={"rope_type": "dynamic", "factor": 2.0}))
    before = dynamic.model.rotary_emb.inv_freq.clone()
    report = check_rotary(dynamic, positions=2048)  # four times the trained 512: a raised base
    assert report.ok, str(report)
    assert torch.equal(dynamic.model.rotary_emb.inv_freq, before)  # the check never changes the model


# --------------------------------------------------------------------------
# broken configs are flagged, with the right difference and position
# --------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["llama", "qwen2", "mistral", "gemma"])
def test_a_dropped_rope_theta_is_flagged_from_position_one(tf, family):
    trained = config(tf, family, rope_parameters={"rope_type": "default", "rope_theta": 1_000_000.0})
    loaded = config(tf, family, rope_parameters={"rope_type": "default"})  # the base fell back to 10,000
    report = check_rotary(loaded, positions=512, reference_config=trained)
    assert not report.ok
    assert report.differs == {"base", "frequencies", "cos_sin"}
    assert (report.difference("base").model, report.difference("base").reference) == (10_000.0, 1_000_000.0)
    assert report.angles_diverge_at == 1 and report.cos_sin["float32"][1] == 1
    assert "base: model 10000, reference 1e+06" in str(report)


@pytest.mark.parametrize(
    ("family", "expected"),
    [
        ("llama", {"rope_type", "scaling", "base", "frequencies", "cos_sin"}),
        ("qwen2", {"rope_type", "scaling", "attention_factor", "frequencies", "cos_sin"}),
        ("phi3", {"rope_type", "scaling", "attention_factor", "frequencies", "cos_sin"}),
    ],
)
def test_a_deleted_scaling_block_is_flagged(tf, family, expected):
    trained = config(tf, family, **AS_RELEASED[family])
    block = {"rope_type": "default"}
    if family != "llama":  # Llama's block carries the base too: deleting it drops both
        block["rope_theta"] = trained.rope_parameters["rope_theta"]
    deleted = config(tf, family, rope_parameters=block)
    report = check_rotary(deleted, positions=256, reference_config=trained)
    assert report.differs == expected, str(report)
    assert report.difference("rope_type").model == "default"
    # YaRN and LongRoPE scale cos and sin at every position: the cos/sin differ from position 0 on
    first = report.cos_sin["float32"][1]
    assert first == (0 if "attention_factor" in expected else report.angles_diverge_at)


def test_a_deleted_yarn_block_diverges_only_on_its_slow_pairs(tf):
    """YaRN keeps its fast pairs: with its attention factor set to 1, the angles diverge late, not at position 1."""
    trained = config(
        tf,
        "qwen2",
        rope_parameters={
            "rope_type": "yarn",
            "rope_theta": 10_000.0,
            "factor": 4.0,
            "original_max_position_embeddings": 2048,
            "attention_factor": 1.0,
        },
    )
    deleted = config(tf, "qwen2", rope_parameters={"rope_type": "default", "rope_theta": 10_000.0})
    atol = 1e-2
    report = check_rotary(deleted, positions=512, reference_config=trained, atol=atol)
    assert report.differs == {"rope_type", "scaling", "frequencies", "cos_sin"}
    ref_inv = posenc.rope_parameters(HEAD_DIM, 10_000.0, "yarn", factor=4.0, original_max_position_embeddings=2048)[0]
    model_inv = posenc.frequencies(HEAD_DIM, 10_000.0)
    kept = int(np.sum(posenc.yarn_ramp(HEAD_DIM, 10_000.0, 2048) == 0))  # the fast pairs YaRN keeps
    assert kept >= 2 and np.array_equal(ref_inv[:kept], model_inv[:kept])
    assert f"first pair {kept};" in report.difference("frequencies").note
    expected_angles_diverge_at(report, model_inv, ref_inv, atol)
    assert report.angles_diverge_at > 1
    assert report.cos_sin["float32"][1] >= report.angles_diverge_at


def test_the_wrong_rope_type_is_flagged(tf):
    """Trained with dynamic NTK (nothing changes up to 512 tokens), served with linear interpolation."""
    trained = config(tf, "mistral", rope_parameters={"rope_type": "dynamic", "factor": 4.0})
    served = config(tf, "mistral", rope_parameters={"rope_type": "linear", "factor": 4.0})
    report = check_rotary(served, positions=512, reference_config=trained)
    assert report.differs == {"rope_type", "frequencies", "cos_sin"}
    assert (report.difference("rope_type").model, report.difference("rope_type").reference) == ("linear", "dynamic")
    assert report.angles_diverge_at == 1
    assert "4 of 8 pairs differ" not in str(report) and "8 of 8 pairs differ" in str(report)


@pytest.mark.parametrize(("served", "trained"), [(0.5, 0.25), (0.25, 1.0)])
def test_a_wrong_partial_rotary_factor_is_flagged(tf, served, trained):
    report = check_rotary(
        config(tf, "gpt_neox", rotary_pct=served),
        positions=64,
        reference_config=config(tf, "gpt_neox", rotary_pct=trained),
    )
    assert report.differs == {"partial_rotary_factor", "rotary_width", "cos_sin"}
    width = report.difference("rotary_width")
    assert (width.model, width.reference) == (int(HEAD_DIM * served), int(HEAD_DIM * trained))
    assert report.angles_diverge_at == 1 and report.cos_sin["float32"][1] == 1


def test_a_family_that_ignores_partial_rotary_factor_is_flagged_against_its_own_config(tf):
    """Llama's default rule rotates the whole head whatever partial_rotary_factor says; posenc honours it."""
    cfg = config(tf, "llama", rope_parameters={"rope_type": "default", "partial_rotary_factor": 0.5})
    report = check_rotary(cfg, positions=64)
    assert report.differs == {"rotary_width", "cos_sin"}
    assert (report.difference("rotary_width").model, report.difference("rotary_width").reference) == (16, 8)


def test_the_report_reads_as_a_list_of_named_differences(tf):
    trained = config(tf, "qwen2", **AS_RELEASED["qwen2"])
    dropped = config(tf, "qwen2", rope_parameters={"rope_type": "default"})
    report = check_rotary(dropped, positions=512, reference_config=trained)
    text = str(report)
    lines = text.splitlines()
    assert lines[0].startswith("RoPE check of Qwen2RotaryEmbedding against posenc.rope_parameters for Qwen2Config")
    assert lines[0].endswith(f": {len(report.differences)} differences")
    named = [line.split(":")[0].strip() for line in lines[2 : 2 + len(report.differences)]]
    assert named == [d.what for d in report.differences] and set(named) <= set(DIFFERENCES)
    assert "angles first diverge (by more than 0.0001 rad) at position 1" in text


def test_gemma3_gets_one_report_per_layer_type(tf):
    cfg = tf.Gemma3TextConfig(
        **(TINY | dict(num_hidden_layers=2, head_dim=HEAD_DIM)),
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention"],
    )
    reports = check_rotary(cfg, positions=128)
    assert [r.layer_type for r in reports] == ["sliding_attention", "full_attention"]
    assert all(r.ok for r in reports)
    assert [r.settings["base"] for r in reports] == [10_000.0, 1_000_000.0]


# --------------------------------------------------------------------------
# what it does not understand: one line naming the argument
# --------------------------------------------------------------------------


def test_a_model_or_config_without_rope_is_refused_in_one_line(tf):
    gpt2 = tf.GPT2Config(n_embd=64, n_layer=1, n_head=4, vocab_size=32)
    for given in (gpt2, tf.GPT2LMHeadModel(gpt2)):
        with pytest.raises(ArgumentError, match="model_or_config") as caught:
            check_rotary(given)
        assert "\n" not in str(caught.value) and "RoPE" in str(caught.value)


def test_an_unknown_rope_type_is_refused_with_the_allowed_ones(tf):
    unknown = config(tf, "llama", rope_parameters={"rope_type": "su", "rope_theta": 1e4})
    with pytest.raises(ArgumentError, match=r"model_or_config has rope_type 'su'.*allowed: default, linear"):
        check_rotary(unknown)
    with pytest.raises(ArgumentError, match=r"reference_config has rope_type 'su'"):
        check_rotary(config(tf, "llama"), reference_config=unknown)
    with pytest.raises(ArgumentError, match="model_or_config must be a transformers model"):
        check_rotary({"rope_type": "default"})
    with pytest.raises(ArgumentError, match="positions must be at least one integer position"):
        check_rotary(config(tf, "llama"), positions=[0, -3])


def test_a_rope_block_posenc_cannot_read_is_refused_naming_the_key(tf):
    """Qwen2-VL's multimodal sections (mrope_section) are not a rule posenc computes."""
    mrope = tf.Qwen2VLTextConfig(**TINY, rope_parameters={"rope_type": "default", "mrope_section": [2, 3, 3]})
    with pytest.raises(ArgumentError, match=r"model_or_config has a rope block posenc cannot read: .*'mrope_section'"):
        check_rotary(mrope, positions=8)
    with pytest.raises(ArgumentError, match=r"reference_config has a rope block posenc cannot read"):
        check_rotary(config(tf, "qwen2"), positions=8, reference_config=mrope)


def test_importing_the_module_does_not_import_transformers():
    code = "import sys, posenc_course.rope_audit; assert 'transformers' not in sys.modules"
    subprocess.run(
        [sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    )


# --------------------------------------------------------------------------
# layout conversion of q/k projections
# --------------------------------------------------------------------------


def test_conversion_is_the_layout_permutation_within_each_head_and_its_inverse():
    torch.manual_seed(1)
    w = torch.randn(HEADS * HEAD_DIM, 64)
    half = interleaved_to_half_split(w, HEADS)
    perm = torch.as_tensor(posenc.layout_permutation(HEAD_DIM))
    for h in range(HEADS):
        rows = slice(h * HEAD_DIM, (h + 1) * HEAD_DIM)
        assert torch.equal(half[rows], w[rows][perm])
    assert torch.equal(half_split_to_interleaved(half, HEADS), w)
    bias = torch.randn(KV_HEADS * HEAD_DIM)
    assert torch.equal(half_split_to_interleaved(interleaved_to_half_split(bias, KV_HEADS), KV_HEADS), bias)
    partial = interleaved_to_half_split(w, HEADS, rotary_dim=4)  # GPT-J style: only the first 4 rows of a head
    assert torch.equal(partial[4:16], w[4:16]) and torch.equal(partial[:4], w[[0, 2, 1, 3]])
    assert torch.equal(half_split_to_interleaved(partial, HEADS, rotary_dim=4), w)


def test_conversion_errors_name_the_argument():
    w = torch.randn(48, 8)
    with pytest.raises(ArgumentError, match=r"n_heads=5 does not divide the 48 rows"):
        interleaved_to_half_split(w, 5)
    with pytest.raises(ArgumentError, match=r"48 rows / 16 heads = 3 channels a head, an odd number"):
        interleaved_to_half_split(w, 16)
    with pytest.raises(ArgumentError, match=r"rotary_dim=16 is more than the head size 12"):
        half_split_to_interleaved(w, 4, rotary_dim=16)
    with pytest.raises(ArgumentError, match=r"weight must be a q or k projection"):
        interleaved_to_half_split(torch.randn(2, 2, 2), 1)


@pytest.fixture(scope="module")
def gqa(tf):
    """A tiny GQA Llama (4 query heads, 2 key-value heads), its Meta-layout weights and a sequence."""
    torch.manual_seed(49)
    cfg = config(tf, "llama", rope_parameters={"rope_type": "default", "rope_theta": 10_000.0})
    cfg._attn_implementation = "eager"
    model = tf.LlamaForCausalLM(cfg).eval()
    attn = model.model.layers[0].self_attn
    # weights of standard deviation 1/8 = 1/sqrt(64): queries and keys of order 1, and so are the scores
    meta = {
        name: torch.randn(getattr(attn, name).weight.shape) / 8 for name in ("q_proj", "k_proj", "v_proj", "o_proj")
    }
    x = torch.randn(1, 24, 64)
    return cfg, model, attn, meta, x


def meta_forward(meta, x, base=10_000.0):
    """Meta's reference attention, in float64: interleaved rotation of q and k, each key-value head shared."""
    n = x.shape[1]
    w = {k: v.double() for k, v in meta.items()}
    xd = x[0].double()
    q = (xd @ w["q_proj"].T).view(n, HEADS, HEAD_DIM).transpose(0, 1)
    k = (xd @ w["k_proj"].T).view(n, KV_HEADS, HEAD_DIM).transpose(0, 1)
    v = (xd @ w["v_proj"].T).view(n, KV_HEADS, HEAD_DIM).transpose(0, 1)
    q = posenc.apply_rope(q, base=base, layout="interleaved")
    k = posenc.apply_rope(k, base=base, layout="interleaved")
    k, v = (t.repeat_interleave(HEADS // KV_HEADS, 0) for t in (k, v))
    scores = q @ k.transpose(1, 2) / math.sqrt(HEAD_DIM)
    causal = torch.triu(torch.full((n, n), -math.inf, dtype=torch.float64), 1)
    out = torch.softmax(scores + causal, -1) @ v
    return scores, out.transpose(0, 1).reshape(n, HEADS * HEAD_DIM) @ w["o_proj"].T


def library_forward(tf, model, attn, q_weight, k_weight, meta, x):
    """The library's Llama attention with the given q/k weights: its pre-softmax scores and its output."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    with torch.no_grad():
        attn.q_proj.weight.copy_(q_weight)
        attn.k_proj.weight.copy_(k_weight)
        attn.v_proj.weight.copy_(meta["v_proj"])
        attn.o_proj.weight.copy_(meta["o_proj"])
        n = x.shape[1]
        cos, sin = model.model.rotary_emb(x, torch.arange(n)[None])
        mask = torch.triu(torch.full((n, n), -math.inf), 1)[None, None]
        out, _ = attn(x, position_embeddings=(cos, sin), attention_mask=mask)
        q = attn.q_proj(x).view(1, n, HEADS, HEAD_DIM).transpose(1, 2)
        k = attn.k_proj(x).view(1, n, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        k = k.repeat_interleave(HEADS // KV_HEADS, 1)
        scores = q @ k.transpose(2, 3) / math.sqrt(HEAD_DIM)
    return scores[0].double(), out[0].double()


def whole(weight):
    """A wrong conversion: one permutation over the whole projection, as if it were a single head."""
    return interleaved_to_half_split(weight, 1)


CONVERSIONS = {
    "per head (GQA aware)": lambda cfg, q, k: convert_qk(cfg, q, k),
    "none": lambda cfg, q, k: (q, k),
    "over the whole projection": lambda cfg, q, k: (whole(q), whole(k)),
    "K with as many heads as Q": lambda cfg, q, k: (
        interleaved_to_half_split(q, HEADS),
        interleaved_to_half_split(k, HEADS),
    ),
}


@pytest.fixture(scope="module")
def disagreement(tf, gqa):
    """{conversion: (max |score difference|, max |output difference|)} against Meta's forward."""
    cfg, model, attn, meta, x = gqa
    ref_scores, ref_out = meta_forward(meta, x)
    found = {}
    for name, convert in CONVERSIONS.items():
        q, k = convert(cfg, meta["q_proj"], meta["k_proj"])
        scores, out = library_forward(tf, model, attn, q, k, meta, x)
        found[name] = ((scores - ref_scores).abs().max().item(), (out - ref_out).abs().max().item())
    print("\nMeta-style forward against the library's on converted weights (max |difference|: scores, output):")
    for name, (s, o) in found.items():
        print(f"  {name:28s} {s:.3g}  {o:.3g}")
    return found


def test_the_library_on_converted_weights_equals_meta_s_forward(disagreement):
    scores, out = disagreement["per head (GQA aware)"]
    assert scores < 1e-5 and out < 1e-5


@pytest.mark.parametrize("wrong", ["none", "over the whole projection", "K with as many heads as Q"])
def test_each_wrong_conversion_disagrees(disagreement, wrong):
    scores, out = disagreement[wrong]
    assert scores > 0.1 and out > 1e-2


def test_convert_qk_round_trips_and_checks_the_config(gqa):
    cfg, _, _, meta, _ = gqa
    q, k = convert_qk(cfg, meta["q_proj"], meta["k_proj"])
    back = convert_qk(cfg, q, k, to="interleaved")
    assert torch.equal(back[0], meta["q_proj"]) and torch.equal(back[1], meta["k_proj"])
    with pytest.raises(ArgumentError, match=r"k has 64 rows; the config's 2 heads of 16 channels make 32"):
        convert_qk(cfg, meta["q_proj"], meta["q_proj"])


def test_conversion_equals_the_library_s_gguf_permutation(tf, gqa):
    """modeling_gguf_pytorch_utils reverses llama.cpp's permutation: interleaved to half-split, K by its own heads."""
    from transformers.modeling_gguf_pytorch_utils import LlamaTensorProcessor

    cfg, _, _, meta, _ = gqa
    processor = LlamaTensorProcessor(config={"num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS})
    ours = convert_qk(cfg, meta["q_proj"], meta["k_proj"])
    for name, weight, mine in (
        ("blk.0.attn_q.weight", meta["q_proj"], ours[0]),
        ("blk.0.attn_k.weight", meta["k_proj"], ours[1]),
    ):
        theirs = processor.process(weight.numpy(), name).weights
        assert np.array_equal(theirs, mine.numpy()), name


def test_conversion_equals_permute_for_rope_where_it_applies(tf, gqa):
    """core_model_loading.PermuteForRope counts every tensor's heads with num_attention_heads: right for Q (and for
    keys with as many heads), wrong for GQA keys, where it is the 'K with as many heads as Q' mistake."""
    from transformers.core_model_loading import PermuteForRope

    cfg, _, _, meta, _ = gqa

    def permute(tensor):
        return PermuteForRope().convert({"w": tensor}, ["w"], ["w"], cfg)["w"]

    q, k = convert_qk(cfg, meta["q_proj"], meta["k_proj"])
    assert torch.equal(permute(meta["q_proj"]), q)
    assert not torch.equal(permute(meta["k_proj"]), k)
    assert torch.equal(permute(meta["k_proj"]), interleaved_to_half_split(meta["k_proj"], HEADS))
    inverse = PermuteForRope(inverse=True).convert({"w": q}, ["w"], ["w"], cfg)["w"]
    assert torch.equal(inverse, meta["q_proj"])
