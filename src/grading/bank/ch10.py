"""Questions of chapter 10, RoPE in practice: how today's models configure it (exercises/10_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np

from grading.bank.common import fixed_then_random
from grading.feedback import matches_model
from grading.kinds import Array, Case, Choice, Function, Lazy, Numeric
from grading.reference import posenc

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append


# ---- Chapter 10: RoPE in practice ------------------------------------------


def _ch10_full_turns():
    return int(np.sum(posenc.wavelengths(128, 500000.0) <= 8192))


_add(
    Numeric(
        "10.1",
        "pairs with a full turn in the trained context",
        _ch10_full_turns,
        integer=True,
        mistakes=[
            (
                lambda: 64 - _ch10_full_turns(),
                "that counts the pairs that never complete a turn; the question asks for "
                "those whose wavelength 2π/ω_i is at most L.",
            ),
            (
                lambda: int(np.sum(1 / posenc.frequencies(128, 500000.0) <= 8192)),
                "you compared 1/ω_i with L; one full turn takes 2π/ω_i positions.",
            ),
            (
                lambda: int(np.sum(2 * np.pi * 500000.0 ** (4 * np.arange(64) / 128) <= 8192)),
                "your exponent is doubled: ω_i = base^(-2i/d) with i counting pairs.",
            ),
        ],
        states={"34.98": lambda: 64 * math.log(8192 / (2 * math.pi)) / math.log(500000.0)},
    )
)


def _ch10_yarn_factor():
    return 0.1 * math.log(16) + 1


_add(
    Numeric(
        "10.2",
        "YaRN attention factor",
        _ch10_yarn_factor,
        mistakes=[
            (
                lambda: _ch10_yarn_factor() ** 2,
                "that is its square, by which the logits grow; the factor that multiplies cos and sin is 0.1 ln s + 1.",
            ),
            (lambda: 0.1 * math.log10(16) + 1, "the logarithm is the natural one, ln s."),
            (lambda: 0.1 * math.log2(16) + 1, "the logarithm is the natural one, ln s, not log base 2."),
            (
                lambda: math.sqrt(1 + math.log(16) / math.log(4096)),
                "that is LongRoPE's attention factor; YaRN's is 0.1 ln s + 1.",
            ),
        ],
    )
)

_LLAMA3 = dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=64)


def _ch10_llama3():
    return posenc.rope_parameters(16, 10000.0, "llama3", **_LLAMA3)[0]


def _llama3_variant(swap_blend=False, fast_divided=False):
    w = posenc.frequencies(16)
    lam = 2 * np.pi / w
    high, low = lam < 64 / 4.0, lam > 64 / 1.0
    g = (64 / lam - 1.0) / 3.0
    if swap_blend:
        g = 1 - g
    out = np.where(low, w / 8, w)
    middle = ~high & ~low
    out[middle] = (1 - g[middle]) * w[middle] / 8 + g[middle] * w[middle]
    if fast_divided:
        out = np.where(high, w / 8, np.where(low, w, out))
    return out


_add(
    Array(
        "10.3",
        "Llama 3 frequencies of a small head",
        _ch10_llama3,
        atol=1e-9,
        mistakes=[
            (
                lambda: posenc.frequencies(16) / 8,
                "you divided every pair by the factor, as position interpolation does; "
                "pairs with a wavelength below L / high_freq_factor keep their frequency.",
            ),
            (
                lambda: _llama3_variant(swap_blend=True),
                "the blend runs the wrong way: g = (L/λ - low_freq_factor) / (high_freq_factor - low_freq_factor) "
                "is the share that keeps ω_i, so the pair with more turns keeps more.",
            ),
            (
                lambda: _llama3_variant(fast_divided=True),
                "the bands are swapped: the slow pairs (long wavelengths) are "
                "divided by the factor, the fast ones kept.",
            ),
            (
                lambda: posenc.frequencies(16),
                "those are the frequencies as trained; the slow pairs must be divided by 8.",
            ),
        ],
        known_mistakes=[
            (Lazy(lambda: posenc.frequencies(16)[:4]), "shape"),
        ],
    )
)


def _yarn_ref(head_dim, base, factor, original):
    return posenc.rope_parameters(head_dim, base, "yarn", factor=factor, original_max_position_embeddings=original)[0]


def _yarn_with(head_dim, base, factor, original, *, truncate=True, reverse=False):
    """YaRN's frequencies with one of two common mistakes (models of them, for feedback)."""
    ramp = posenc.yarn_ramp(head_dim, base, original, truncate=truncate)
    if reverse:
        ramp = 1 - ramp
    w = posenc.frequencies(head_dim, base)
    return (1 - ramp) * w + ramp * w / factor


def _yarn_cases(rng):
    fixed = [
        (128, 10000.0, 4.0, 4096),
        (64, 10000.0, 40.0, 4096),
        (128, 1e6, 4.0, 32768),
        (16, 500.0, 2.0, 64),
        (256, 5e5, 8.0, 8192),
        (4, 10000.0, 16.0, 2048),
        (128, 5e5, 8.0, 131072),
        (232, 1e7, 48.0, 120000),
    ]

    def draw(rng):
        d = 2 * int(rng.integers(2, 129))
        base = float(10 ** rng.uniform(2, 7))
        return d, base, float(rng.uniform(1, 64)), int(rng.integers(64, 131073))

    cases = []
    for d, base, factor, original in fixed_then_random(rng, 20, fixed, draw):
        cases.append(
            Case(
                (d, base, factor, original),
                f"head_dim = {d}, base = {base:,.6g}, factor = {factor:.6g}, original length = {original:,}",
            )
        )
    return cases


def yarn_10(head_dim, base, factor, original, *, truncate=True, reverse=False):
    """The question written out as a learner would (an alternative), and two of its mistakes."""

    def pair_at(turns):
        return head_dim * math.log(original / (2 * math.pi * turns)) / (2 * math.log(base))

    low, high = pair_at(32.0), pair_at(1.0)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, head_dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(head_dim // 2) - low) / (high - low), 0.0, 1.0)
    if reverse:
        ramp = 1 - ramp
    w = base ** (-2.0 * np.arange(head_dim // 2) / head_dim)
    return (1 - ramp) * w + ramp * w / factor


_add(
    Function(
        "10.4",
        "YaRN's inverse frequencies",
        _yarn_ref,
        _yarn_cases,
        expected=_yarn_ref,
        returns="numpy array of shape `(head_dim // 2,)`",
        atol=1e-12,
        own_code=True,
        mistakes=[
            (
                matches_model(lambda d, b, s, L: posenc.frequencies(d, b) / s),
                "you divided every pair by the factor (position interpolation); pairs with more than β_fast turns "
                "keep ω_i.",
            ),
            (
                matches_model(lambda d, b, s, L: _yarn_with(d, b, s, L, reverse=True)),
                "the ramp runs the wrong way: the fast pairs (many turns in L) keep ω_i, the slow ones get ω_i / s.",
            ),
            (
                matches_model(lambda d, b, s, L: _yarn_with(d, b, s, L, truncate=False)),
                "round the ramp's ends outwards to whole pairs (floor of the low end, ceil of the high end), as "
                "truncate does by default.",
            ),
        ],
        known_mistakes=[
            (lambda d, b, s, L: yarn_10(d, b, s, L).astype(np.float32), "float32"),
        ],
        alternatives={
            "written out": yarn_10,
            "rope_parameters": lambda d, b, s, L: posenc.rope_parameters(
                d, b, "yarn", factor=s, original_max_position_embeddings=L
            )[0],
        },
        covers={
            "factor above 32": lambda d, b, s, L: s > 32,
            "head_dim above 200": lambda d, b, s, L: d > 200,
            "original length above 100,000": lambda d, b, s, L: L > 100_000,
        },
    )
)


_add(
    Choice(
        "10.5",
        "partial rotation",
        "ABCD",
        "AB",
        {
            "C": "with partial rotation the r rotated channels get the full ladder of an r-channel RoPE, base^(-2i/r); "
            "keeping the head's own frequencies for the first pairs is proportional RoPE.",
            "D": "the pass-through channels are never rotated: their term q·κ ignores positions altogether.",
        },
        right={
            "A": "the rotated channels give q·T(p - s)κ and the pass-through channels q·κ: both depend on p - s at "
            "most.",
            "B": "96 · 0.25 = 24 channels rotate (12 pairs); the other 72 pass through unchanged.",
        },
        nudge=(
            "Split the score into the rotated channels and the pass-through ones, and ask what each part depends on."
        ),
        known_mistakes=[
            ("ABC", "not the right set"),
            ("ABD", "not the right set"),
            ("A", "not the right set"),
            ("ABCD", "every option"),
        ],
    )
)

_add(
    Choice(
        "10.6",
        "what a causal NoPE layer cannot see",
        "ABCD",
        "AB",
        {
            "C": "deleting token 0 takes a token out of the set the output at p averages over, so the output changes; "
            "with a marked first token, as in the chapter, the layer even reads the prefix's length, 1/(p+1).",
            "D": "that changes the query itself (the token at p), so the weights change too.",
        },
        right={
            "A": "without positions a causal layer sees its prefix as a set: any order of the earlier tokens gives the "
            "same weights and the same average.",
            "B": "the causal mask hides every token after p from the output at p.",
        },
        nudge=(
            "Without positions the output at p is a weighted average over a set of tokens: which set, and weighted by "
            "what?"
        ),
        known_mistakes=[
            ("ABC", "not the right set"),
            ("ABD", "not the right set"),
            ("A", "not the right set"),
            ("ABCD", "every option"),
        ],
    )
)


def _ch10_dynamic_base():
    return 10000.0 * (2.0 * 16384 / 4096 - 1.0) ** (128 / 126)


_add(
    Numeric(
        "10.7",
        "dynamic NTK base",
        _ch10_dynamic_base,
        mistakes=[
            (
                lambda: 10000.0 * 4.0 ** (128 / 126),
                "that ignores factor: the bracket is factor · n / L - (factor - 1).",
            ),
            (lambda: 10000.0 * 7.0 ** (126 / 128), "the exponent is upside down: d/(d-2), not (d-2)/d."),
            (lambda: 10000.0, "n = 16,384 is longer than L = 4,096, so the base does change."),
            (lambda: 10000.0 * 8.0 ** (128 / 126), "the bracket subtracts factor - 1: 2 · 4 - 1 = 7."),
        ],
    )
)


def _ntk_base():
    return 10000.0 * 4.0 ** (128 / 126)


_add(
    Numeric(
        "10.8",
        "NTK-aware base",
        _ntk_base,
        mistakes=[
            (
                lambda: 10000.0 * 4,
                "with base·s the last pair slows down by only s^((d-2)/d); the exponent d/(d-2) makes it exactly s.",
            ),
            (lambda: 10000.0 * 4.0 ** (126 / 128), "the exponent is upside down: d/(d-2), not (d-2)/d."),
            (lambda: 10000.0 / 4, "the base must grow: a larger base means slower pairs and longer wavelengths."),
        ],
    )
)

_add(
    Choice(
        "10.9",
        "interpolation and a raised base",
        "ABCD",
        "AB",
        {
            "C": "that is position interpolation; a raised base leaves the fastest pair as it is and slows the last "
            "one by s.",
            "D": "the interpolated model still attends to the angle it learned for k, which now belongs to the "
            "offset s·k: it copies the token s·k back. Interpolation is meant to be followed by fine-tuning.",
        },
        right={
            "A": "position interpolation divides every angle p·ω_i by s: every wavelength is s times longer.",
            "B": "pair 0 has ω_0 = base^0 = 1 whatever the base.",
        },
        nudge=(
            "Write pair i's wavelength 2π·base^(2i/d) for i = 0 and for the last i, under each method, and compare "
            "them with s."
        ),
        known_mistakes=[("C", "wavelength 2π·base^(2i/d)"), ("ABD", "not the right set"), ("ABCD", "every option")],
    )
)


_add(
    Numeric(
        "10.10",
        "position-interpolation factor",
        lambda: 4096 / 16384,
        mistakes=[
            (
                lambda: 16384 / 4096,
                "that stretches positions further out; interpolation squeezes the new positions "
                "into the trained range: multiply by L_train / L_new.",
            ),
            (lambda: 16384 - 4096, "the factor is a ratio of the two lengths, not their difference."),
            (
                lambda: 1 / 16384,
                "that is 1 / L_new, which would squeeze every position into [0, 1); the factor is L_train / L_new.",
            ),
        ],
    )
)
