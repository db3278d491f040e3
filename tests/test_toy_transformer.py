"""Tests for posenc_course.toy_transformer: the task's data, the model's schemes,
permutation equivariance without positions, training, and bad arguments."""

import numpy as np
import pytest
import torch

import posenc
from posenc_course import toy_transformer as tt

torch.set_num_threads(1)

VOCAB, D = 40, 32


# --------------------------------------------------------------------------
# The data generator
# --------------------------------------------------------------------------


def test_batch_is_deterministic():
    a = tt.offset_copy_batch(8, 12, VOCAB, 2, seed=3)
    b = tt.offset_copy_batch(8, 12, VOCAB, 2, seed=3)
    c = tt.offset_copy_batch(8, 12, VOCAB, 2, seed=4)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a[0], c[0])


@pytest.mark.parametrize("length, offset", [(2, 1), (12, 2), (16, 5), (40, 39)])
def test_batch_labels_are_right(length, offset):
    tokens, targets = tt.offset_copy_batch(50, length, VOCAB, offset, seed=1)
    assert tokens.shape == targets.shape == (50, length)
    assert tokens.dtype == targets.dtype == torch.int64
    # targets, checked one entry at a time
    for row in range(50):
        for t in range(length):
            want = tokens[row, t - offset].item() if t >= offset else tt.IGNORE
            assert targets[row, t].item() == want
    # tokens: in range and distinct within each row
    assert tokens.min() >= 0 and tokens.max() < VOCAB
    assert all(len(set(row.tolist())) == length for row in tokens)


def test_batch_tokens_cover_the_vocabulary_evenly():
    tokens, _ = tt.offset_copy_batch(4000, 10, VOCAB, 1, seed=0)
    counts = np.bincount(tokens.flatten().numpy(), minlength=VOCAB)
    expected = tokens.numel() / VOCAB
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))


# --------------------------------------------------------------------------
# The no-order baselines
# --------------------------------------------------------------------------


def test_chance_accuracy_bidirectional():
    assert tt.chance_accuracy_bidirectional(2) == 1.0
    assert tt.chance_accuracy_bidirectional(17) == pytest.approx(1 / 16)
    assert tt.chance_accuracy is tt.chance_accuracy_bidirectional  # the shorter name still works


def test_chance_accuracy_causal_by_position():
    by_position = tt.chance_accuracy_causal_by_position(16, 2)
    assert by_position.shape == (16,) and by_position.dtype == np.float64
    assert np.isnan(by_position[:2]).all()  # no target before the offset, as in evaluate's per_position
    assert np.allclose(by_position[2:], [1 / t for t in range(2, 16)], rtol=1e-15)


def test_chance_accuracy_causal():
    # chapters 8 to 10 (L = 16, k = 2): the mean of 1/t over t = 2 .. 15 is (H_15 - 1) / 14
    harmonic_15 = sum(1 / t for t in range(1, 16))
    assert tt.chance_accuracy_causal(16, 2) == pytest.approx((harmonic_15 - 1) / 14, rel=1e-15)
    assert round(tt.chance_accuracy_causal(16, 2), 3) == 0.166
    assert tt.chance_accuracy_causal(2, 1) == 1.0
    # start: only the positions from start on, e.g. those beyond a training length of 16
    assert tt.chance_accuracy_causal(64, 2, start=16) == pytest.approx(sum(1 / t for t in range(16, 64)) / 48)
    assert tt.chance_accuracy_causal(16, 2, start=1) == tt.chance_accuracy_causal(16, 2)  # below the offset: no effect
    # fewer candidates than with bidirectional attention at every position, so a higher baseline
    for n in (3, 16, 64):
        assert tt.chance_accuracy_causal(n, 1) > tt.chance_accuracy_bidirectional(n)


def test_the_baselines_are_what_an_order_blind_guess_scores_on_the_task():
    """Naming a random token of the set the model sees (other than its own) hits the target at the baseline rate."""
    length, offset, n = 8, 2, 40_000
    tokens, targets = (a.numpy() for a in tt.offset_copy_batch(n, length, VOCAB, offset, seed=5))
    rng = np.random.default_rng(0)
    rows = np.arange(n)
    causal = tt.chance_accuracy_causal_by_position(length, offset)
    for t in range(offset, length):
        earlier = tokens[rows, rng.integers(0, t, n)]  # causal: one of the t tokens before t
        other = rng.integers(0, length - 1, n)
        anywhere = tokens[rows, other + (other >= t)]  # bidirectional: any position but t
        for hits, p in [(earlier, causal[t]), (anywhere, tt.chance_accuracy_bidirectional(length))]:
            rate = np.mean(hits == targets[:, t])
            assert abs(rate - p) < 5 * np.sqrt(p * (1 - p) / n), (t, rate, p)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: tt.chance_accuracy_causal(4, 4), "offset must be < length"),
        (lambda: tt.chance_accuracy_causal(4, 1, start=4), "start must be < length"),
        (lambda: tt.chance_accuracy_causal_by_position(3, 5), "offset must be < length"),
        (lambda: tt.chance_accuracy_bidirectional(1), "length"),
    ],
)
def test_baselines_bad_arguments(call, words):
    with pytest.raises(ValueError, match=words):
        call()


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(n_seq=0), ValueError, "n_seq"),
        (dict(length=2.5), TypeError, "length"),
        (dict(vocab_size=5), ValueError, "vocab_size must be >= length"),
        (dict(offset=0), ValueError, "offset"),
        (dict(offset=6), ValueError, "offset must be < length"),
        (dict(length=True), TypeError, "length"),
    ],
)
def test_batch_bad_arguments(kwargs, error, words):
    args = dict(n_seq=4, length=6, vocab_size=VOCAB, offset=1) | kwargs
    with pytest.raises(error, match=words):
        tt.offset_copy_batch(**args)


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------


def build(scheme, **kwargs):
    torch.manual_seed(0)
    if scheme == "shaw":
        kwargs.setdefault("max_distance", 6)
    return tt.TinyTransformer(VOCAB, D, scheme=scheme, max_len=32, **kwargs)


@pytest.mark.parametrize("scheme", tt.SCHEMES)
@pytest.mark.parametrize("seq", [1, 7, 32])
def test_every_scheme_builds_and_has_the_right_shape(scheme, seq):
    model = build(scheme)
    if seq > 1:
        tokens, _ = tt.offset_copy_batch(3, seq, VOCAB, 1, seed=0)
    else:
        tokens = torch.zeros(3, 1, dtype=torch.long)
    assert model(tokens).shape == (3, seq, VOCAB)


def test_position_modules_are_the_ones_from_posenc():
    assert isinstance(build("sinusoidal").position, posenc.SinusoidalPositionalEncoding)
    assert isinstance(build("learned").position, posenc.LearnedPositionalEmbedding)
    assert isinstance(build("none").position, torch.nn.Identity)
    hybrid = build("scaled_sinusoidal").position
    assert isinstance(hybrid, tt.ScaledSinusoidalEncoding)
    assert isinstance(hybrid.sinusoidal, posenc.SinusoidalPositionalEncoding)


def test_parameter_counts_differ_by_the_position_parameters():
    base = sum(p.numel() for p in build("none").parameters())
    assert sum(p.numel() for p in build("sinusoidal").parameters()) == base
    assert sum(p.numel() for p in build("learned").parameters()) == base + 32 * D
    assert sum(p.numel() for p in build("scaled_sinusoidal").parameters()) == base + 1
    assert sum(p.numel() for p in build("scaled_sinusoidal", per_channel=True).parameters()) == base + D


def test_scaled_sinusoidal_is_w_times_the_posenc_table():
    module = tt.ScaledSinusoidalEncoding(D, per_channel=True)
    with torch.no_grad():
        module.weight.copy_(torch.linspace(-2, 3, D))
    x = torch.randn(2, 50, D, dtype=torch.float64)
    pe = torch.from_numpy(posenc.sinusoidal(50, D))
    w = module.weight.detach().double()  # float32 parameter, exactly representable in float64
    assert torch.allclose(module(x), x + w * pe, rtol=0, atol=1e-12)
    scalar = tt.ScaledSinusoidalEncoding(D)
    assert scalar.weight.shape == (1,)
    assert torch.allclose(scalar(x), posenc.SinusoidalPositionalEncoding(D)(x))  # w starts at 1


def test_fixed_schemes_run_at_any_length_learned_stops_at_max_len():
    tokens = torch.arange(40).repeat(2, 1)[:, :40] % VOCAB
    long = torch.cat([tokens, tokens], dim=1)  # 80 positions
    for scheme in ("none", "sinusoidal", "scaled_sinusoidal"):
        assert build(scheme)(long).shape == (2, 80, VOCAB)
    with pytest.raises(ValueError, match="exceeds max_len=32"):
        build("learned")(long)


def test_no_encoding_is_permutation_equivariant():
    model = build("none").double()
    tokens, _ = tt.offset_copy_batch(5, 20, VOCAB, 1, seed=7)
    out = model(tokens)
    generator = torch.Generator().manual_seed(0)
    for _ in range(10):
        perm = torch.randperm(20, generator=generator)
        assert torch.allclose(model(tokens[:, perm]), out[:, perm], atol=1e-12)


@pytest.mark.parametrize("scheme", ["sinusoidal", "learned", "scaled_sinusoidal"])
def test_positions_break_equivariance(scheme):
    model = build(scheme).double()
    if scheme == "learned":
        with torch.no_grad():  # the std-0.02 initial table is too small to see clearly
            model.position.embedding.weight.normal_()
    tokens, _ = tt.offset_copy_batch(5, 20, VOCAB, 1, seed=7)
    perm = torch.randperm(20, generator=torch.Generator().manual_seed(0))
    assert not torch.allclose(model(tokens[:, perm]), model(tokens)[:, perm], atol=1e-3)


def test_causal_mask_hides_the_future():
    model = build("sinusoidal", causal=True)
    tokens, _ = tt.offset_copy_batch(2, 12, VOCAB, 1, seed=0)
    changed = tokens.clone()
    changed[:, 8:] = (changed[:, 8:] + 1) % VOCAB
    assert torch.allclose(model(tokens)[:, :8], model(changed)[:, :8], atol=1e-6)
    assert not torch.allclose(model(tokens)[:, 8:], model(changed)[:, 8:], atol=1e-3)


def test_attention_weights_are_kept_and_normalised():
    model = build("sinusoidal", n_layers=2)
    model(tt.offset_copy_batch(3, 9, VOCAB, 1, seed=0)[0])
    for block in model.blocks:
        w = block.attn.last_weights
        assert w.shape == (3, 2, 9, 9)
        assert torch.allclose(w.sum(-1), torch.ones(3, 2, 9))


def test_attention_hooks_are_applied():
    torch.manual_seed(0)
    attn = tt.SelfAttention(D, 2)
    x = torch.randn(2, 6, D)
    base = attn(x)
    bias = torch.zeros(6, 6)
    bias[:, 0] = -1e9  # nobody may attend to position 0
    attn(x, score_bias=bias)
    assert torch.all(attn.last_weights[..., 0] < 1e-6)
    same = attn(x, qk_transform=lambda q, k: (q, k))
    assert torch.allclose(base, same)


# --------------------------------------------------------------------------
# Training and evaluation
# --------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", tt.SCHEMES)
def test_a_few_steps_reduce_the_loss(scheme):
    model = build(scheme)
    losses = tt.train(model, length=12, offset=1, steps=30, seed=0)
    assert len(losses) == 30
    assert np.mean(losses[-5:]) < np.mean(losses[:5])


def test_training_is_reproducible():
    runs = []
    for _ in range(2):
        model = build("learned")
        runs.append(tt.train(model, length=12, offset=2, steps=5, seed=3))
    assert runs[0] == runs[1]


def test_learned_rows_beyond_the_training_length_stay_untouched():
    model = build("learned")
    before = model.position.embedding.weight.detach().clone()
    tt.train(model, length=12, offset=2, steps=10)
    after = model.position.embedding.weight.detach()
    assert torch.equal(after[12:], before[12:])
    assert not torch.equal(after[:12], before[:12])


def test_evaluate_returns_accuracy_and_per_position():
    model = build("sinusoidal")
    acc, per_position = tt.evaluate(model, length=10, offset=3, n_seq=64)
    assert 0.0 <= acc <= 1.0
    assert per_position.shape == (10,)
    assert np.all(np.isnan(per_position[:3]))
    assert np.isclose(np.mean(per_position[3:]), acc)


# --------------------------------------------------------------------------
# Bad arguments
# --------------------------------------------------------------------------


def test_unknown_scheme_names_the_allowed_values():
    with pytest.raises(ValueError) as info:
        tt.TinyTransformer(VOCAB, D, scheme="rotary-ish")
    message = str(info.value)
    assert "rotary-ish" in message
    assert all(s in message for s in tt.SCHEMES)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(scheme="learned"), ValueError, "needs max_len"),
        (dict(scheme="learned", max_len=0), ValueError, "max_len"),
        (dict(d_model=30, n_heads=4), ValueError, "divisible by n_heads"),
        (dict(vocab_size=0), ValueError, "vocab_size"),
        (dict(n_layers=1.5), TypeError, "n_layers"),
        (dict(d_model=-2), ValueError, "d_model"),
    ],
)
def test_bad_model_arguments(kwargs, error, words):
    args = dict(vocab_size=VOCAB, d_model=D) | kwargs
    with pytest.raises(error, match=words):
        tt.TinyTransformer(**args)


def test_bad_tokens():
    model = build("sinusoidal")
    with pytest.raises(ValueError, match="shape"):
        model(torch.zeros(4, dtype=torch.long))
    with pytest.raises(TypeError, match="int64"):
        model(torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r"0 \.\.\. 39"):
        model(torch.full((2, 4), VOCAB))


def test_scaled_sinusoidal_bad_input():
    with pytest.raises(ValueError, match=r"\(batch, seq, 8\)"):
        tt.ScaledSinusoidalEncoding(8)(torch.zeros(2, 3, 5))


# --------------------------------------------------------------------------
# Schemes inside attention: RoPE and ALiBi (chapter 08)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["rope", "alibi"])
def test_attention_schemes_add_nothing_to_the_input_and_no_parameters(scheme):
    model = build(scheme)
    assert isinstance(model.position, torch.nn.Identity)
    assert sum(p.numel() for p in model.parameters()) == sum(p.numel() for p in build("none").parameters())


def test_rope_hook_is_posenc_apply_rope():
    model = build("rope")
    rotate = model.attention_extras(9)["qk_transform"]
    q, k = torch.randn(2, 3, 2, 9, 16, dtype=torch.float64).unbind(0)
    q2, k2 = rotate(q, k)
    assert torch.allclose(q2, posenc.apply_rope(q, np.arange(9)), atol=1e-12)
    assert torch.allclose(k2, posenc.apply_rope(k, np.arange(9)), atol=1e-12)
    model.rope_scale, model.rope_base = 0.25, 500.0
    q3, _ = model.attention_extras(9)["qk_transform"](q, k)
    assert torch.allclose(q3, posenc.apply_rope(q, 0.25 * np.arange(9), 500.0), atol=1e-12)
    assert "rope_base=500" in repr(model) and "rope_scale=0.25" in repr(model)


def test_rope_model_uses_positions_and_scale_zero_removes_them():
    model = build("rope").double()
    tokens, _ = tt.offset_copy_batch(5, 20, VOCAB, 1, seed=7)
    perm = torch.randperm(20, generator=torch.Generator().manual_seed(0))
    assert not torch.allclose(model(tokens[:, perm]), model(tokens)[:, perm], atol=1e-3)
    model.rope_scale = 0.0  # every position 0: no rotation, so the model is blind to order
    assert torch.allclose(model(tokens[:, perm]), model(tokens)[:, perm], atol=1e-12)


def test_rope_scores_depend_on_offsets_only():
    """Shifting every position by the same amount leaves the whole model's output unchanged."""
    model = build("rope").double()
    tokens, _ = tt.offset_copy_batch(3, 15, VOCAB, 1, seed=2)
    out = model(tokens)

    def rotate(q, k):
        positions = np.arange(q.shape[-2]) + 1234
        return posenc.apply_rope(q, positions), posenc.apply_rope(k, positions)

    model.attention_extras = lambda seq: {"qk_transform": rotate}
    assert torch.allclose(model(tokens), out, atol=1e-9)


def test_alibi_bias_reaches_the_attention_weights():
    for causal in (True, False):
        model = build("alibi", causal=causal)
        with torch.no_grad():  # zero queries and keys: only the bias is left
            model.blocks[0].attn.qkv.weight.zero_()
            model.blocks[0].attn.qkv.bias.zero_()
        model(tt.offset_copy_batch(2, 11, VOCAB, 1, seed=0)[0])
        want = torch.from_numpy(posenc.alibi_bias(2, 11, causal=causal)).float().softmax(-1)
        assert torch.allclose(model.blocks[0].attn.last_weights, want.expand(2, 2, 11, 11), atol=1e-6)


def test_symmetric_alibi_cannot_tell_left_from_right():
    model = build("alibi", causal=False).double()
    tokens, _ = tt.offset_copy_batch(4, 17, VOCAB, 1, seed=5)
    assert torch.allclose(model(tokens.flip(1)), model(tokens).flip(1), atol=1e-12)
    perm = torch.randperm(17, generator=torch.Generator().manual_seed(0))
    assert not torch.allclose(model(tokens[:, perm]), model(tokens)[:, perm], atol=1e-3)


@pytest.mark.parametrize("scheme", ["rope", "alibi", "learned", "sinusoidal", "t5", "shaw"])
def test_causal_prefix_is_unaffected_by_longer_inputs(scheme):
    model = build(scheme, causal=True)
    tokens, _ = tt.offset_copy_batch(3, 32, VOCAB, 1, seed=1)
    assert torch.allclose(model(tokens)[:, :10], model(tokens[:, :10]), atol=1e-5)


@pytest.mark.parametrize("scheme", ["rope", "alibi", "t5", "shaw"])
def test_attention_schemes_run_far_beyond_max_len_in_float32_and_float64(scheme):
    long = torch.arange(200).remainder(VOCAB).reshape(2, 100)
    for model in (build(scheme, causal=True), build(scheme).double()):
        out = model(long)
        assert out.shape == (2, 100, VOCAB) and torch.isfinite(out).all()


def test_rope_bad_arguments():
    with pytest.raises(ValueError, match="even head width"):
        tt.TinyTransformer(VOCAB, 30, scheme="rope", n_heads=2)  # head width 15
    with pytest.raises(ValueError, match="base"):
        tt.TinyTransformer(VOCAB, D, scheme="rope", base=1.0)
    tt.TinyTransformer(VOCAB, 30, scheme="alibi", n_heads=2)  # ALiBi has no pairs: an odd head width is fine


def test_rope_layers_choose_the_blocks_that_rotate():
    torch.manual_seed(0)
    model = tt.TinyTransformer(20, 16, scheme="rope", n_layers=2, causal=True, rope_layers=[1])
    calls = []
    original = model.attention_extras

    def spy(seq):
        extras = original(seq)
        inner = extras["qk_transform"]
        extras["qk_transform"] = lambda q, k: (calls.append(1), inner(q, k))[1]
        return extras

    model.attention_extras = spy
    model(torch.zeros(1, 5, dtype=torch.long))
    assert calls == [1]  # one of the two blocks rotated
    with pytest.raises(ValueError, match="rope_layers"):
        tt.TinyTransformer(20, 16, scheme="rope", n_layers=2, rope_layers=[2])
    with pytest.raises(ValueError, match="rope_layers"):
        tt.TinyTransformer(20, 16, scheme="none", rope_layers=[0])


# --------------------------------------------------------------------------
# A rope block, as a model's config states it (chapter 12 extends a context with one)
# --------------------------------------------------------------------------


def test_rope_blocks_rotate_as_the_plain_settings_they_stand_for():
    """linear with factor s is rope_scale = 1/s; default with rope_theta b is rope_base = b."""
    model = build("rope", causal=True).double()
    tokens, _ = tt.offset_copy_batch(3, 24, VOCAB, 2, seed=4)
    for block, scale, base in (
        ({"rope_type": "linear", "factor": 4.0}, 0.25, 10000.0),
        ({"rope_theta": 500.0}, 1.0, 500.0),
        ({"rope_type": "default"}, 1.0, 10000.0),
    ):
        model.rope_parameters = None
        model.rope_scale, model.rope_base = scale, base
        plain = model(tokens)
        model.rope_scale, model.rope_base = 1.0, 10000.0
        model.rope_parameters = block
        assert torch.allclose(model(tokens), plain, atol=1e-10), block
    model.rope_parameters = {"rope_type": "linear", "factor": 4.0}
    interpolated = model(tokens)
    model.rope_parameters = None  # back to plain RoPE
    assert not torch.allclose(model(tokens), interpolated, atol=1e-3)


def test_rope_block_hook_is_posenc_rope_parameters_with_its_attention_factor():
    block = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}
    model = build("rope", rope_parameters=block)
    q, k = torch.randn(2, 3, 2, 9, 16, dtype=torch.float64).unbind(0)
    q2, k2 = model.attention_extras(9)["qk_transform"](q, k)
    inv_freq, factor = posenc.rope_parameters(16, 10000.0, "yarn", factor=4.0, original_max_position_embeddings=16)
    assert factor > 1  # YaRN's temperature: not the identity
    for mine, x in ((q2, q), (k2, k)):
        want = posenc.apply_rope(x, np.arange(9), inv_freq=inv_freq, attention_factor=factor)
        assert torch.allclose(mine, want, atol=1e-12)
    assert "rope_parameters={'rope_type': 'yarn'" in repr(model)


def test_length_dependent_rope_blocks_take_the_input_length():
    block = {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 8}
    model = build("rope", rope_parameters=block)
    for seq in (5, 8, 20):
        q = torch.randn(1, 2, seq, 16, dtype=torch.float64)
        mine, _ = model.attention_extras(seq)["qk_transform"](q, q)
        inv_freq, _ = posenc.rope_parameters(16, 10000.0, "dynamic", factor=2.0, max_position_embeddings=8, seq_len=seq)
        assert torch.allclose(mine, posenc.apply_rope(q, np.arange(seq), inv_freq=inv_freq), atol=1e-12)
        # within the trained length nothing changes; beyond it the base is raised
        assert torch.allclose(mine, posenc.apply_rope(q, np.arange(seq)), atol=1e-12) == (seq <= 8)


def test_rope_block_bad_values():
    model = build("rope")
    with pytest.raises(ValueError, match="rope_parameters.*rope_type"):
        model.rope_parameters = {"rope_type": "stretchy"}
    with pytest.raises(ValueError, match="rope_parameters.*factor"):
        model.rope_parameters = {"rope_type": "linear", "factor": 0.5}
    with pytest.raises(ValueError, match="rope_parameters must be None or a dict"):
        model.rope_parameters = "linear"
    with pytest.raises(ValueError, match="rope_parameters"):
        tt.TinyTransformer(VOCAB, D, scheme="rope", rope_parameters=4.0)
    with pytest.raises(ValueError, match="rope_parameters is for scheme='rope'"):
        tt.TinyTransformer(VOCAB, D, scheme="alibi", rope_parameters={"rope_type": "linear", "factor": 2.0})
    assert model.rope_parameters is None  # a refused block leaves the model as it was


def test_fine_tuning_keeps_the_rope_block_and_trains_with_gradients_turned_off():
    model = build("rope", causal=True, rope_parameters={"rope_type": "linear", "factor": 2.0})
    before = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():  # a notebook that only runs models has turned gradients off
        losses = tt.train(model, length=12, offset=1, steps=3)
        assert not torch.is_grad_enabled()  # and train leaves it off
    assert len(losses) == 3 and all(np.isfinite(losses))
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert model.rope_parameters == {"rope_type": "linear", "factor": 2.0}


# --------------------------------------------------------------------------
# Learned relative positions: T5's bias and Shaw et al.'s relative keys (chapter 09)
# --------------------------------------------------------------------------


def test_t5_and_shaw_add_nothing_to_the_input_and_count_their_parameters():
    base = sum(p.numel() for p in build("none").parameters())
    for kwargs, extra in [
        (dict(), 32 * 2),  # T5's default 32 buckets, 2 heads
        (dict(num_buckets=8, max_distance=16), 8 * 2),
        (dict(num_buckets=8, max_distance=16, n_layers=3), 8 * 2),  # one table shared by every layer, as in T5
    ]:
        model = build("t5", **kwargs)
        assert isinstance(model.position, torch.nn.Identity) and model.t5_table.shape == (extra // 2, 2)
        layers = sum(p.numel() for p in build("none", n_layers=kwargs.get("n_layers", 1)).parameters())
        assert sum(p.numel() for p in model.parameters()) == layers + extra
    for n_layers in (1, 3):  # one table per layer, shared by its heads: 2M + 1 vectors of width d_model / n_heads
        model = build("shaw", max_distance=6, n_layers=n_layers)
        assert isinstance(model.position, torch.nn.Identity)
        layers = sum(p.numel() for p in build("none", n_layers=n_layers).parameters())
        assert sum(p.numel() for p in model.parameters()) == layers + n_layers * 13 * (D // 2)
        assert all(block.attn.relative_keys.shape == (13, D // 2) for block in model.blocks)
    assert sum(p.numel() for p in build("none").parameters()) == base


@pytest.mark.parametrize("causal", [True, False])
def test_t5_bias_is_posenc_t5_bias_and_depends_on_the_offset_only(causal):
    model = build("t5", causal=causal, num_buckets=8, max_distance=16)
    bias = model.attention_extras(40)["score_bias"]
    assert bias.shape == (2, 40, 40) and bias.requires_grad  # the table's gradient flows through it
    want = posenc.t5_bias(model.t5_table.detach().numpy(), 40, bidirectional=not causal, num_buckets=8, max_distance=16)
    np.testing.assert_array_equal(bias.detach().numpy(), want)
    b = bias.detach()
    assert torch.equal(b[:, 1:, 1:], b[:, :-1, :-1])  # Toeplitz: a function of p - s
    offsets = torch.arange(40)[:, None] - torch.arange(40)[None, :]
    far = b[:, offsets >= 16]  # every key at least max_distance back shares the last bucket of its direction
    last_back = 7 if causal else 3  # bidirectional: buckets 0 ... 3 for keys behind, 4 ... 7 for keys ahead
    assert torch.equal(far, model.t5_table[last_back].detach()[:, None].expand_as(far))
    if causal:  # keys ahead share bucket 0 with the query itself (the mask hides them)
        assert torch.equal(b[:, offsets < 0], model.t5_table[0].detach()[:, None].expand(2, int((offsets < 0).sum())))


def test_t5_bias_reaches_the_attention_weights_and_the_mask_is_kept():
    model = build("t5", causal=True, num_buckets=8, max_distance=16)
    with torch.no_grad():  # zero queries and keys: only the bias is left
        model.blocks[0].attn.qkv.weight.zero_()
        model.blocks[0].attn.qkv.bias.zero_()
        model.t5_table.normal_()
    model(tt.offset_copy_batch(2, 20, VOCAB, 1, seed=0)[0])
    bias = torch.from_numpy(
        posenc.t5_bias(model.t5_table.detach().numpy(), 20, bidirectional=False, num_buckets=8, max_distance=16)
    )
    want = bias.masked_fill(torch.ones(20, 20, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
    weights = model.blocks[0].attn.last_weights
    assert torch.allclose(weights, want.expand(2, 2, 20, 20), atol=1e-6)
    assert torch.all(weights.triu(1) == 0)


def test_shaw_scores_add_the_relative_key_of_each_pair():
    """The weights equal softmax(q_p . (kappa_s + a[clip(s - p)]) / sqrt(d_head)), written out with an index matrix."""
    model = build("shaw", max_distance=3).double()
    tokens, _ = tt.offset_copy_batch(2, 11, VOCAB, 1, seed=4)
    model(tokens)
    attn = model.blocks[0].attn
    x = model.blocks[0].norm1(model.embed(tokens))
    q, k, _ = attn.qkv(x).view(2, 11, 3, 2, D // 2).permute(2, 0, 3, 1, 4)
    index = posenc.shaw_relative_positions(11, max_distance=3)
    a = attn.relative_keys[torch.from_numpy(index)]  # (query, key, d_head): the vector of each pair
    scores = (torch.einsum("bhpd,bhsd->bhps", q, k) + torch.einsum("bhpd,psd->bhps", q, a)) / (D // 2) ** 0.5
    assert torch.allclose(attn.last_weights, scores.softmax(-1), atol=1e-12)
    assert index.min() == 0 and index.max() == 6 and np.all(np.diag(index) == 3)


def test_shaw_relative_term_depends_on_the_offset_only():
    """One token repeated: q and kappa are the same everywhere, so a score differs from another only through a."""
    model = build("shaw", max_distance=4).double()
    model(torch.full((1, 30), 5, dtype=torch.long))
    log_weights = model.blocks[0].attn.last_weights[0].log()  # (head, query, key)
    # log w[p, s] - log w[p, p] = q . (a[clip(s - p)] - a[0]) / sqrt(d_head): the same for every p at a given s - p
    for j in range(-8, 9):
        p = np.arange(max(0, -j), min(30, 30 - j))
        diff = log_weights[:, p, p + j] - log_weights[:, p, p]
        assert torch.allclose(diff, diff[:, :1].expand_as(diff), atol=1e-12), j
    beyond = log_weights[:, 10, 15:] - log_weights[:, 10, 14:15]  # keys further than M ahead share one vector
    assert torch.allclose(beyond, torch.zeros_like(beyond), atol=1e-12)


def test_shaw_causal_mask_is_kept():
    model = build("shaw", causal=True, max_distance=4)
    model(tt.offset_copy_batch(2, 15, VOCAB, 1, seed=0)[0])
    weights = model.blocks[0].attn.last_weights
    assert torch.all(weights.triu(1) == 0) and torch.allclose(weights.sum(-1), torch.ones(2, 2, 15))


@pytest.mark.parametrize(
    "scheme, kwargs", [("t5", dict(num_buckets=8, max_distance=16)), ("shaw", {"max_distance": 8})]
)
def test_t5_and_shaw_learn_offset_copy(scheme, kwargs):
    torch.manual_seed(0)
    model = tt.TinyTransformer(64, D, scheme=scheme, causal=True, **kwargs)  # chapter 9's experiment, one seed
    tt.train(model, length=16, offset=2, steps=150, seed=0)
    accuracy, _ = tt.evaluate(model, length=16, offset=2, n_seq=128)
    assert accuracy > 0.95


def test_t5_and_shaw_repr_and_bad_arguments():
    assert "num_buckets=8, max_distance=16" in repr(build("t5", num_buckets=8, max_distance=16))
    assert "max_distance=6" in repr(build("shaw"))
    with pytest.raises(ValueError, match="needs max_distance"):
        tt.TinyTransformer(VOCAB, D, scheme="shaw")
    with pytest.raises(ValueError, match="num_buckets is for scheme='t5'"):
        tt.TinyTransformer(VOCAB, D, scheme="shaw", max_distance=4, num_buckets=8)
    for name in ("num_buckets", "max_distance"):
        with pytest.raises(ValueError, match=f"{name} is for scheme"):
            tt.TinyTransformer(VOCAB, D, scheme="alibi", **{name: 8})
    with pytest.raises(ValueError, match="num_buckets"):
        tt.TinyTransformer(VOCAB, D, scheme="t5", num_buckets=3)  # bidirectional: 1 bucket a direction
    with pytest.raises(ValueError, match="max_distance"):
        tt.TinyTransformer(VOCAB, D, scheme="t5", causal=True, num_buckets=8, max_distance=4)  # not above 4 exact
    with pytest.raises(ValueError, match="max_distance"):
        tt.TinyTransformer(VOCAB, D, scheme="shaw", max_distance=0)
