"""Questions of chapter 13, positions while serving: 16 bits, the base and the values (exercises/13_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np
import torch

from grading.bank.ch11 import _causal, _softmax_rows
from grading.bank.common import fixed_then_random
from grading.feedback import matches_model
from grading.kinds import Case, Choice, Function, Numeric
from grading.reference import posenc

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append


# ---- Chapter 13: positions while serving -------------------------------------

# 13.1: the first position whose angle, formed in 16 bits, is off by more than a radian


def _first_angle_off(dtype, more_than=1.0, strict=True):
    """The first position p >= 0 at which p stored in ``dtype`` is off by more than ``more_than``: the error of
    the fastest pair's angle p * 1, in radians (``strict=False``: by at least that much)."""
    p = torch.arange(0, 2**16, dtype=torch.float64)
    error = (p.to(dtype).double() - p).abs()
    off = error > more_than if strict else error >= more_than
    return int(p[off][0].item())


_add(
    Numeric(
        "13.1",
        "first bfloat16 angle off by more than a radian",
        lambda: _first_angle_off(torch.bfloat16),
        integer=True,
        mistakes=[
            (
                lambda: _first_angle_off(torch.bfloat16, 0.0),
                "that is the first position bfloat16 cannot hold; there the angle is off by one radian at most. "
                "The question asks for more than one.",
            ),
            (
                lambda: _first_angle_off(torch.float16),
                "that is float16's answer (11 significant bits); bfloat16 keeps only 8.",
            ),
        ],
        known_mistakes=[(513, "too low"), (514.5, "whole number")],
    )
)

# 13.2: how much longer a bfloat16 key gets after many turns by one position

_TURNS, _HEAD = 1000, 128


def _gains(dtype, head=_HEAD, squared=False):
    """sqrt(cos^2 + sin^2) of each pair's angle for one position, cos and sin rounded to ``dtype``."""
    table = torch.from_numpy(posenc.sinusoidal([1], head)[0])
    sin, cos = table[0::2].to(dtype).double(), table[1::2].to(dtype).double()
    power = cos**2 + sin**2
    return power if squared else power.sqrt()


_add(
    Numeric(
        "13.2",
        "growth of a key turned 1000 times in bfloat16",
        lambda: _gains(torch.bfloat16).max().item() ** _TURNS,
        mistakes=[
            (
                lambda: _gains(torch.float16).max().item() ** _TURNS,
                "that is the growth in float16; the cache of the question is in bfloat16.",
            ),
            (
                lambda: _gains(torch.bfloat16, squared=True).max().item() ** _TURNS,
                "that is the growth of the squared length, cos² + sin² per turn; the length grows by its square root.",
            ),
            (
                lambda: _gains(torch.bfloat16).max().item(),
                "that is the growth of a single turn; the key is turned 1000 times.",
            ),
            (
                lambda: _gains(torch.bfloat16).min().item() ** _TURNS,
                "that pair shrinks; the question asks for the pair that grows the most.",
            ),
        ],
        states={"1000": lambda: _TURNS, "4,096": lambda: 4096, "2,084": lambda: _gains(torch.bfloat16).max() ** 4096},
        known_mistakes=[
            (1.2595, "float16"),
            (41.74, "squared length"),
            (1.00187, "single turn"),
            (6.0, "more digits"),
        ],
    )
)

# 13.3: a base from the longest sequence and a margin

_LONGEST, _MARGIN, _WIDTH = 32_768, 50, 64


def _base_for(length, margin, d=_WIDTH, exponent=None, two_pi=True):
    """The base whose slowest pair has a wavelength of ``margin * length``: 2 pi base^((d-2)/d) = margin * length
    (``exponent`` and ``two_pi`` model the mistakes)."""
    exponent = d / (d - 2) if exponent is None else exponent
    return (margin * length / (2 * math.pi if two_pi else 1.0)) ** exponent


_add(
    Numeric(
        "13.3",
        "a base for 50 times 32,768",
        lambda: _base_for(_LONGEST, _MARGIN),
        mistakes=[
            (
                lambda: _base_for(_LONGEST, _MARGIN, exponent=1.0),
                "that base makes 2π·base equal to the wavelength you want; the slowest pair's wavelength is "
                "2π·base^((d-2)/d), a little shorter. Solve that for the base.",
            ),
            (
                lambda: _base_for(_LONGEST, _MARGIN, two_pi=False),
                "a wavelength is 2π divided by the frequency: the 2π is missing.",
            ),
            (
                lambda: _base_for(_LONGEST, _MARGIN, exponent=(_WIDTH - 2) / _WIDTH),
                "the exponent is upside down: from λ = 2π·base^((d-2)/d), base = (λ/2π)^(d/(d-2)).",
            ),
            (
                lambda: _base_for(_LONGEST, 1),
                "that puts the slowest wavelength at the sequence's length itself; the question asks for 50 times it.",
            ),
        ],
        states={"32,768": lambda: _LONGEST, "50": lambda: _MARGIN},
    )
)


# 13.4: which ways of forming cos and sin in bfloat16 keep scores independent of the position

_PLACE = 50_000  # the key's position in the question

_add(
    Choice(
        "13.4",
        "cos and sin in bfloat16",
        "ABCD",
        "AB",
        {
            "C": "bfloat16 holds only 8 significant bits: near 50,000 it stores positions in steps of 256, so the "
            "angles of every fast pair are noise.",
            "D": "float16 stores positions near 50,000 in steps of 32: the position is off by up to 16 before "
            "any angle is formed.",
        },
        right={
            "A": "float32 angles are off by about the position times float32's rounding; at 50,000 that is still "
            "below bfloat16's rounding of cos and sin (the chapter's figure: up to 100,000).",
            "B": "angles correct to the last bit of float64, rounded once: the error is one rounding of cos and "
            "sin, at every position.",
        },
        nudge="For each way, ask where the position itself is rounded, and how coarsely near 50,000.",
        known_mistakes=[("ABC", "not the right set"), ("A", "not the right set"), ("ABCD", "every option")],
        states={
            "256": lambda: 2.0 ** (math.floor(math.log2(50_000)) - 7),
            "32": lambda: 2.0 ** (math.floor(math.log2(50_000)) - 10),
            "16": lambda: 2.0 ** (math.floor(math.log2(50_000)) - 11),
            "50,000": lambda: _PLACE,
            "10^{5}": lambda: 10**5,
        },
    )
)


# 13.5: which heads give the same outputs when every position shifts by k

_add(
    Choice(
        "13.5",
        "outputs under a shift",
        "ABCDE",
        "ACE",
        {
            "B": "each value is turned by its absolute position, so a shift by k turns the whole output by R(k).",
            "D": "the encoding added to the input is the absolute position's: shifted, each token gets another "
            "vector and the output changes.",
        },
        right={
            "A": "the scores depend only on offsets and the values carry no position: the output is the same.",
            "C": "turning the output back by the query's position leaves R(s - t) on each value: offsets only.",
            "E": "ALiBi's bias depends only on the distance between query and key.",
        },
        nudge="Write one output as a sum over the keys and see which of its parts depend on absolute positions.",
        known_mistakes=[("AC", "not the right set"), ("ABCE", "not the right set"), ("ABCDE", "every option")],
    )
)


# 13.6: a head that rotates its values


def _shifted_head(q, k, v, start, *, rotate_values=False, values_at_zero=False, rope=True):
    """Causal RoPE attention at positions start ... start + n - 1 (models of the mistakes: values rotated at
    their positions, or at 0 ... n - 1; no rotation at all)."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    n, d = q.shape
    p = np.arange(start, start + n)
    rq, rk = (posenc.apply_rope(q, p), posenc.apply_rope(k, p)) if rope else (q, k)
    if rotate_values:
        v = posenc.apply_rope(v, np.arange(n) if values_at_zero else p)
    scores = np.where(np.tri(n, dtype=bool), rq @ rk.T / math.sqrt(d), -np.inf)
    return _softmax_rows(scores) @ v


def _head_reference(q, k, v, start):
    """A shift changes nothing: causal RoPE attention from position 0."""
    return _causal(q, k, v)


def _head_cases(rng):
    fixed = [(1, 2, 0), (5, 4, 1), (12, 16, 7), (9, 8, 100_000), (30, 32, 1000), (3, 6, 0), (40, 2, 12_345)]

    def draw(rng):
        return int(rng.integers(1, 41)), 2 * int(rng.integers(1, 17)), int(rng.integers(0, 10**5))

    cases = []
    for n, d, start in fixed_then_random(rng, 16, fixed, draw):
        q, k = (1.5 * rng.normal(size=(n, d)) for _ in range(2))
        v = rng.normal(size=(n, d))
        cases.append(Case((q, k, v, start), f"n = {n} tokens of width d = {d}, first position {start}"))
    return cases


def head_buggy(q, k, v, start, fixed=False, turn_back=False):
    """The question's code (``fixed``: without the values' rotation; ``turn_back``: values rotated and the
    output turned back by each query's position, invariant to shifts but not RoPE's output: a mistake)."""
    n, d = q.shape
    positions = np.arange(start, start + n)
    rq = posenc.apply_rope(q, positions)
    rk = posenc.apply_rope(k, positions)
    values = v if fixed else posenc.apply_rope(v, positions)
    scores = rq @ rk.T / np.sqrt(d)
    scores[np.triu_indices(n, 1)] = -np.inf
    out = _softmax_rows(scores) @ values
    return posenc.apply_rope(out, -positions) if turn_back else out


def head_torch(q, k, v, start):
    tq, tk, tv = (torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in (q, k, v))
    p = np.arange(start, start + len(tq))
    rq, rk = posenc.apply_rope(tq, p), posenc.apply_rope(tk, p)
    mask = torch.ones(len(tq), len(tq), dtype=torch.bool).tril()
    scores = (rq @ rk.T / math.sqrt(tq.shape[1])).masked_fill(~mask, -torch.inf)
    return (torch.softmax(scores, -1) @ tv).numpy()


_add(
    Function(
        "13.6",
        "fix the head that rotates its values",
        _head_reference,
        _head_cases,
        expected=_head_reference,
        returns="numpy array of shape `(n, d)`",
        atol=1e-9,
        mistakes=[
            (
                matches_model(lambda q, k, v, s: _shifted_head(q, k, v, s, rotate_values=True)),
                "your values are still rotated at their positions: the output then turns with the absolute "
                "position. RoPE rotates only queries and keys.",
            ),
            (
                matches_model(lambda q, k, v, s: _shifted_head(q, k, v, s, rotate_values=True, values_at_zero=True)),
                "your values are rotated (at positions counted from 0): RoPE leaves the values as they are.",
            ),
            (
                matches_model(lambda q, k, v, s: head_buggy(q, k, v, s, turn_back=True)),
                "your values are rotated and the output turned back: that output no longer depends on absolute "
                "positions, but each value now arrives turned by its offset, R(s - t). RoPE leaves the values "
                "as they are.",
            ),
            (
                matches_model(lambda q, k, v, s: _shifted_head(q, k, v, s, rope=False)),
                "your queries and keys are not rotated: the head sees no positions at all.",
            ),
        ],
        alternatives={
            "the given code, fixed": lambda q, k, v, s: head_buggy(q, k, v, s, fixed=True),
            "positions from 0": lambda q, k, v, s: head_buggy(q, k, v, 0, fixed=True),
            "torch": head_torch,
        },
        covers={
            "a single token": lambda q, k, v, s: len(q) == 1,
            "a first position of 0": lambda q, k, v, s: s == 0,
            "a first position of 100,000": lambda q, k, v, s: s == 100_000,
        },
    )
)


# 13.7: where float32 angles first diverge from the exact ones


def _first_diverging(head=128, base=10000.0, tol=1e-2, round_frequencies=True):
    """The first position at which some pair's angle p * w, formed in float32 from float32 positions and
    frequencies (``round_frequencies=False``: float64 frequencies, the product rounded to float32), is off the
    exact angle by more than ``tol`` radians."""
    w = posenc.frequencies(head, base)
    for start in range(0, 2**22, 2**16):
        p = np.arange(start, start + 2**16)
        if round_frequencies:
            angle = p.astype(np.float32)[:, None] * w.astype(np.float32)[None]
        else:
            angle = (p[:, None] * w[None]).astype(np.float32)
        error = np.abs(angle.astype(np.float64) - p[:, None] * w[None]).max(axis=1)
        hit = np.flatnonzero(error > tol)
        if len(hit):
            return int(p[hit[0]])
    raise AssertionError("no position below 2**22 diverges")


_add(
    Numeric(
        "13.7",
        "first position where float32 angles are off by more than 0.01",
        _first_diverging,
        integer=True,
        mistakes=[
            (
                lambda: _first_diverging(round_frequencies=False),
                "that is where the product alone, rounded once, goes wrong; the frequencies are stored in float32 "
                "too, and their rounding grows with the position as well.",
            ),
            (lambda: _first_diverging(tol=1e-3), "that is the first position off by more than 0.001 radian."),
            (lambda: _first_diverging(head=64), "that is the answer for a head of width 64; the question's has 128."),
        ],
        known_mistakes=[(150000, "too low")],
        states={
            "0.01": lambda: 1e-2,
            "0.001": lambda: 1e-3,
            "64": lambda: 64,
            "65,536": lambda: 2**16,
            "151,363": _first_diverging,
            "10^{5}": lambda: 10**5,
        },
    )
)
