"""Questions of chapter 12, RoPE in real checkpoints: conversion, configs and serving (exercises/12_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np
import torch

from grading.bank.common import fixed_then_random
from grading.feedback import matches_model
from grading.kinds import Array, Case, Choice, Function, Numeric
from grading.reference import posenc

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append

# ---- 12.1: which rows a converted key projection takes ----------------------

# a key projection of 2 heads of 8 channels (16 rows); the queries have 4 heads
_HEADS, _KV_HEADS, _HEAD = 4, 2, 8


def _rows(n_heads, head, inverse=False):
    """The source row of each row of a projection of ``n_heads`` heads of ``head`` channels, interleaved ->
    half-split within each head (``inverse``: half-split -> interleaved)."""
    order = posenc.layout_permutation(head)
    if inverse:
        order = np.argsort(order)
    return np.concatenate([h * head + order for h in range(n_heads)])


_add(
    Array(
        "12.1",
        "the rows of a converted key projection",
        lambda: _rows(_KV_HEADS, _HEAD),
        atol=0.0,
        mistakes=[
            (
                lambda: _rows(1, _KV_HEADS * _HEAD),
                "that permutes the whole projection as one head: the rows of the two heads mix. The "
                "permutation acts within each head.",
            ),
            (
                lambda: _rows(_HEADS, _KV_HEADS * _HEAD // _HEADS),
                "the keys were cut into the queries' number of heads; under grouped-query attention they have "
                "their own, fewer heads.",
            ),
            (
                lambda: _rows(_KV_HEADS, _HEAD, inverse=True),
                "that is the other direction: half-split rows back to interleaved ones. Read the half-split rows "
                "from the interleaved checkpoint.",
            ),
            (lambda: np.arange(_KV_HEADS * _HEAD), "those are the rows unconverted: every row in its place."),
        ],
        known_mistakes=[
            ([0, 2, 4, 6, 1, 3, 5, 7], "shape"),
        ],
    )
)


# ---- 12.2: convert a fused q/k projection for grouped-query attention ------


def _convert_fused(w, n_heads, n_kv_heads, *, k_heads=None, whole=False, inverse=False, keys=True):
    """The rows of a fused [W_q; W_k] projection, interleaved -> half-split, each within its heads. Models of
    the mistakes: ``k_heads`` (the keys cut into that many heads), ``whole`` (one permutation over each
    projection), ``inverse`` (the other direction), ``keys=False`` (the keys left as they are)."""
    w = np.asarray(w, dtype=np.float64)
    head = w.shape[0] // (n_heads + n_kv_heads)
    q, k = w[: n_heads * head], w[n_heads * head :]
    kh = n_kv_heads if k_heads is None else k_heads
    q_rows = _rows(1, len(q), inverse) if whole else _rows(n_heads, head, inverse)
    k_rows = _rows(1, len(k), inverse) if whole else _rows(kh, len(k) // kh, inverse)
    return np.concatenate([q[q_rows], k[k_rows] if keys else k])


def _fused_cases(rng):
    # head sizes a multiple of 2 * (heads / kv): the keys cut into the queries' head count still make pairs (the
    # first case: of 4 channels, so that mistake differs from leaving the keys as they are)
    fixed = [
        (4, 2, 8, 3),
        (8, 2, 8, 5),
        (4, 2, 4, 3),
        (4, 1, 8, 2),
        (2, 2, 4, 4),
        (6, 3, 16, 8),
        (32, 8, 8, 1),
        (2, 2, 2, 3),
    ]

    def draw(rng):
        kv = int(rng.integers(1, 5))
        heads = kv * int(rng.integers(1, 5))
        ratio = heads // kv  # the keys cut into the queries' count: pairs of 2 channels or more
        head = 4 * ratio * int(rng.integers(1, 3)) if ratio > 1 else 2 * int(rng.integers(1, 9))
        return heads, kv, head, int(rng.integers(1, 9))

    cases = []
    for heads, kv, head, cols in fixed_then_random(rng, 16, fixed, draw):
        w = rng.normal(size=((heads + kv) * head, cols))
        cases.append(
            Case((w, heads, kv), f"{heads} query heads and {kv} key-value heads of {head} channels, {cols} inputs")
        )
    return cases


def fused_fixed(w, n_heads, n_kv_heads):
    head = w.shape[0] // (n_heads + n_kv_heads)
    order = posenc.layout_permutation(head)
    q = w[: n_heads * head].reshape(n_heads, head, -1)[:, order]
    k = w[n_heads * head :].reshape(n_kv_heads, head, -1)[:, order]
    return np.concatenate([q.reshape(-1, w.shape[1]), k.reshape(-1, w.shape[1])])


def fused_loops(w, n_heads, n_kv_heads):
    """Head by head, the even rows then the odd ones."""
    head = w.shape[0] // (n_heads + n_kv_heads)
    out = []
    for h in range(n_heads + n_kv_heads):
        block = w[h * head : (h + 1) * head]
        out += [block[0::2], block[1::2]]
    return np.concatenate(out)


def fused_torch(w, n_heads, n_kv_heads):
    t = torch.from_numpy(np.asarray(w, dtype=np.float64))
    head = t.shape[0] // (n_heads + n_kv_heads)
    heads = t.view(n_heads + n_kv_heads, head // 2, 2, -1)
    return heads.transpose(1, 2).reshape(t.shape).numpy()


_add(
    Function(
        "12.2",
        "fix the conversion of a fused q/k projection",
        lambda w, h, kv: _convert_fused(w, h, kv),
        _fused_cases,
        expected=lambda w, h, kv: _convert_fused(w, h, kv),
        returns="numpy array of the shape of `w`",
        atol=0.0,
        mistakes=[
            (
                matches_model(lambda w, h, kv: _convert_fused(w, h, kv, k_heads=h)),
                "the keys were cut into the queries' number of heads: under grouped-query attention the key "
                "projection has n_kv_heads heads, each as wide as a query head.",
            ),
            (
                matches_model(lambda w, h, kv: _convert_fused(w, h, kv, whole=True)),
                "one permutation over each whole projection mixes the rows of different heads: permute within "
                "each head.",
            ),
            (
                matches_model(lambda w, h, kv: _convert_fused(w, h, kv, inverse=True)),
                "that is the other direction, half-split to interleaved: the checkpoint is interleaved.",
            ),
            (
                matches_model(lambda w, h, kv: _convert_fused(w, h, kv, keys=False)),
                "the queries are converted and the keys are not: both are rotated, so both are permuted.",
            ),
        ],
        alternatives={
            "the given code, fixed": fused_fixed,
            "head by head, even rows then odd": fused_loops,
            "torch, as a view": fused_torch,
        },
        covers={
            "as many key-value heads as query heads": lambda w, h, kv: h == kv,
            "one key-value head": lambda w, h, kv: kv == 1,
            "heads of two channels": lambda w, h, kv: w.shape[0] // (h + kv) == 2,
        },
    )
)


# ---- 12.3: a config loader that reads both library versions ----------------


def _inv_freq(config):
    """posenc's frequencies for a config dict written by version 4 (rope_theta, rope_scaling with ``type`` or
    ``rope_type``) or version 5 (rope_parameters) of the library."""
    block = dict(config.get("rope_parameters") or config.get("rope_scaling") or {})
    rule = block.pop("rope_type", None) or block.pop("type", None) or "default"
    block.pop("type", None)
    base = block.pop("rope_theta", config.get("rope_theta", 10_000.0))
    head = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    return posenc.rope_parameters(head, base, rule, **block)[0]


def _loader_cases(rng):
    cases = []
    blocks = [
        {"rope_type": "linear", "factor": 4.0},
        {"type": "linear", "factor": 2.0},
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64,
        },
        {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 128},
        {"rope_type": "default"},
        {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 256},
    ]
    for i in range(18):
        block = dict(blocks[i % len(blocks)])
        base = [1e4, 5e5, 1e6][int(rng.integers(0, 3))]
        head = 2 * int(rng.integers(4, 33))
        shape = {"head_dim": head} if i % 3 == 0 else {"hidden_size": head * 4, "num_attention_heads": 4}
        if i % 2 == 0:  # version 5: the base inside the block
            config = shape | {"rope_parameters": {"rope_theta": base} | block}
            version = "rope_parameters"
        else:  # version 4: the base beside the block
            config = shape | {"rope_theta": base, "rope_scaling": None if block == {"rope_type": "default"} else block}
            version = "rope_theta and rope_scaling"
        if i == 5:
            config.pop("rope_theta", None)  # no base stated: the library's default
        rule = block.get("rope_type", block.get("type"))
        cases.append(Case((config,), f"a config with {version}, rule {rule}, heads of {head} channels"))
    return cases


def _loader_with(config, *, legacy_type=True, base_inside=True, base_beside=True, head_default=False):
    block = dict(config.get("rope_parameters") or config.get("rope_scaling") or {})
    rule = block.pop("rope_type", None) or (block.pop("type", None) if legacy_type else None) or "default"
    block.pop("type", None)
    base = block.pop("rope_theta", None) if base_inside else None
    block.pop("rope_theta", None)
    base = base or (config.get("rope_theta", 10_000.0) if base_beside else 10_000.0)
    head = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    if head_default:
        head = config.get("hidden_size", head * 4) // config.get("num_attention_heads", 4)
    if rule == "default":
        block = {}
    return posenc.rope_parameters(head, base, rule, **block)[0]


_add(
    Function(
        "12.3",
        "fix a config loader",
        _inv_freq,
        _loader_cases,
        expected=_inv_freq,
        returns="numpy array of `head_dim // 2` frequencies",
        atol=1e-12,
        mistakes=[
            (
                matches_model(lambda c: _loader_with(c, legacy_type=False)),
                "a block written by version 4 of the library names its rule with the key type; yours fell back "
                "to no scaling there.",
            ),
            (
                matches_model(lambda c: _loader_with(c, base_inside=False)),
                "in a rope_parameters block the base is the block's rope_theta; yours used another.",
            ),
            (
                matches_model(lambda c: _loader_with(c, base_beside=False)),
                "a version-4 config states its base as rope_theta beside the scaling block; yours used the "
                "default there.",
            ),
        ],
        alternatives={
            "the given code, fixed": lambda c: _loader_with(c),
        },
        covers={
            "a version-4 block with type": lambda c: "type" in (c.get("rope_scaling") or {}),
            "a config without a base": lambda c: "rope_theta" not in c and "rope_parameters" not in c,
            "a head size from hidden_size": lambda c: "head_dim" not in c,
        },
    )
)


# ---- 12.4: from a symptom to its cause ---------------------------------------

_add(
    Choice(
        "12.4",
        "short prompts fine, long ones degrade",
        "ABCD",
        "C",
        {
            "A": "q and k weights left in the other layout break the model at every position: the pairs no longer "
            "match, however short the prompt.",
            "B": "a base of 10,000 instead of the trained one changes the fast pairs' angles from position 1 on: "
            "every prompt is off.",
            "D": "YaRN's attention factor scales every score, so every prompt changes, however short.",
        },
        right={
            "C": "Llama 3's rule leaves the fast pairs alone and only slows the slow ones: their angles drift apart "
            "as p times the frequency difference, small at small p.",
        },
        nudge="For each cause ask which pairs' angles change, and whether the change grows with the position.",
        known_mistakes=[("A", "other layout"), ("B", "every prompt"), ("D", "attention factor"), ("AC", "one")],
        states={"10,000": lambda: 10_000, "500,000": lambda: 500_000},
    )
)


# ---- 12.5: where the angles first diverge ------------------------------------

_HEAD_DIM, _BASE, _FACTOR, _ORIGINAL, _ATOL = 64, 10_000.0, 4.0, 4096, 0.05


def _diverge_at(atol=_ATOL, off_by_one=0, smallest=False):
    """The first integer position where some pair's angle differs by more than ``atol`` between the llama3 rule
    and no scaling (same base)."""
    scaled = posenc.rope_parameters(
        _HEAD_DIM,
        _BASE,
        "llama3",
        factor=_FACTOR,
        low_freq_factor=1.0,
        high_freq_factor=4.0,
        original_max_position_embeddings=_ORIGINAL,
    )[0]
    gap = np.abs(posenc.frequencies(_HEAD_DIM, _BASE) - scaled)
    gap = gap[gap > 0]
    g = gap.min() if smallest else gap.max()
    return math.floor(atol / g) + 1 - off_by_one


_add(
    Numeric(
        "12.5",
        "where a deleted scaling block first shows",
        _diverge_at,
        integer=True,
        mistakes=[
            (
                lambda: _diverge_at(off_by_one=1),
                "that is the last position within the tolerance; the question asks for the first beyond it.",
            ),
            (
                lambda: _diverge_at(smallest=True),
                "that is where the pair with the smallest change diverges; the "
                "first divergence comes from the pair whose frequency changed most.",
            ),
        ],
        known_mistakes=[
            (1, "too low"),
        ],
        states={"10,000": lambda: _BASE, "4,096": lambda: _ORIGINAL, "0.05": lambda: _ATOL},
    )
)


# ---- 12.6: length-dependent rules and a KV cache ----------------------------

_add(
    Choice(
        "12.6",
        "which caches hold keys rotated under other frequencies",
        "ABCD",
        "BC",
        {
            "A": "YaRN is static: its frequencies and attention factor are the same at every length, so every "
            "cached key was rotated as a new one would be.",
            "D": "with the factor set chosen once, at start-up, every key of every sequence is rotated with the "
            "same factors.",
        },
        right={
            "B": "the tokens after the switch are rotated with the long factors, the cached ones were rotated with "
            "the short ones.",
            "C": "each step past the trained length raises the base, and the keys already cached keep the base "
            "they were rotated with.",
        },
        nudge="Ask, for each setup, whether the frequencies can change between two tokens of one sequence.",
        known_mistakes=[("B", "not the right set"), ("ABC", "not the right set"), ("BCD", "not the right set")],
        states={"10,000": lambda: 10_000},
    )
)
