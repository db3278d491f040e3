"""Questions of chapter 09, relative biases: ALiBi, T5 and a length experiment (exercises/09_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np
import torch

from grading.bank.common import fixed_then_random
from grading.feedback import matches_model
from grading.kinds import Array, Case, Choice, Function, Lazy, Numeric
from grading.reference import posenc

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append


# ---- Chapter 09: relative biases -------------------------------------------

_add(
    Numeric(
        "09.1",
        "ALiBi slope of head 3 of 16",
        lambda: posenc.alibi_slopes(16)[2],
        mistakes=[
            (lambda: 2.0**-3, "that is 2^(-h), the rule for 8 heads; for n heads the slopes are 2^(-8h/n)."),
            (
                lambda: posenc.alibi_slopes(16)[1],
                "heads are counted from h = 1 (the first slope is 2^(-8/n)), so head 3 has h = 3.",
            ),
            (lambda: posenc.alibi_slopes(16)[3], "that is head 4; head 3 has h = 3 in 2^(-8h/n)."),
            (lambda: 2.0 ** (-3 / 16), "the exponent is -8h/n: the factor 8 is missing."),
            (
                lambda: 2.0 ** (8 * 3 / 16),
                "the exponent has the wrong sign: the slopes are 2^(-8h/n) = (1/2)^(8h/n), below 1; "
                "you used 2 where 1/2 belongs.",
            ),
        ],
        states={"1.5": lambda: -math.log2(posenc.alibi_slopes(16)[2])},
    )
)


def _ch09_bias_row():
    return posenc.alibi_bias(4, 6)[1, 5]


def _alibi_row(slope):
    """The bias of the query at position 5 against keys 0 ... 5 for a head of this slope."""
    return -slope * (5 - np.arange(6))


# 4 heads: m_h = 2^(-8h/4) = 2^(-2h), so head 1 has 1/4, head 2 (asked) 1/16, head 3 1/64, head 4 1/256.
_add(
    Array(
        "09.2",
        "ALiBi bias of one query",
        _ch09_bias_row,
        atol=1e-6,
        mistakes=[
            (lambda: -_ch09_bias_row(), "the sign is wrong: ALiBi subtracts m·(p - s), a penalty for distant keys."),
            (
                lambda: _ch09_bias_row()[::-1],
                "the keys are in reverse order: the key at s = 0 is the farthest, the key at s = 5 the query itself.",
            ),
            (
                lambda: _alibi_row(2.0**-6),
                "that is head 3 (slope 2^(-8·3/4) = 2^(-6)): heads are numbered from h = 1, "
                "while numpy indices start at 0.",
            ),
            (
                lambda: _alibi_row(2.0**-2),
                "that slope, 2^(-2), belongs to head 1 of 4 heads (2^(-8·1/4)); it is also "
                "2^(-h), the rule for 8 heads, at h = 2. "
                "For n heads, head h has the slope 2^(-8h/n).",
            ),
            (
                lambda: _alibi_row(2.0**-8),
                "that is head 4 (slope 2^(-8·4/4) = 2^(-8)), the last and flattest head; "
                "for n heads, head h has the slope 2^(-8h/n).",
            ),
            (
                lambda: _alibi_row(1.0),
                "the slope is missing: that is the distance 5 - s alone (m = 1); multiply it by "
                "head 2's slope, 2^(-8h/n) with h = 2 and n = 4.",
            ),
        ],
        known_mistakes=[
            (Lazy(lambda: _ch09_bias_row()[1:]), "shape"),
            (Lazy(lambda: np.round(_ch09_bias_row(), 1)), "elements are wrong"),
        ],
    )
)


# ---- T5's buckets and Shaw's clipped relative positions --------------------------


def _t5_causal(k, num_buckets, max_distance):
    """The buckets as float64 (whole numbers): an answer of any real dtype is compared with them."""
    return posenc.t5_relative_position_bucket(
        k, bidirectional=False, num_buckets=num_buckets, max_distance=max_distance
    ).astype(np.float64)


def t5_bucket_model(k, num_buckets, max_distance, *, sign=1, exact=None, ahead="share", clamp=True, rounding="floor"):
    """T5's causal bucket written out with float64 logarithms (an alternative); the keywords model real mistakes.

    Returns a float64 array: the values are whole numbers, and a float array keeps a one-ulp change visible.
    """
    k = sign * np.asarray(k, dtype=np.int64)
    r = np.maximum(k, 0) if ahead == "share" else np.abs(k)
    e = num_buckets // 2 if exact is None else exact
    x = np.log(np.maximum(r, e) / e) / np.log(max_distance / e) * (num_buckets - e)  # 0 at r = e, as the rule says
    far = e + (np.floor(x) if rounding == "floor" else np.round(x))
    if clamp:
        far = np.minimum(far, num_buckets - 1)
    return np.where(r < e, r, far).astype(np.float64)


def t5_bucket_loop(k, num_buckets, max_distance):
    """The rule one offset at a time, with math.log, as a learner may write it; an int64 array."""
    k = np.asarray(k)
    exact = num_buckets // 2
    out = np.empty(k.shape, dtype=np.int64)
    for index, offset in np.ndenumerate(k):
        r = max(int(offset), 0)
        if r < exact:
            out[index] = r
        else:
            j = int(math.log(r / exact) / math.log(max_distance / exact) * (num_buckets - exact))
            out[index] = min(exact + j, num_buckets - 1)
    return out


def t5_bucket_exact(k, num_buckets, max_distance):
    """The rule with whole numbers only: bucket exact + j starts where r**(n - e) * e**j >= M**j * e**(n - e)."""
    k = np.asarray(k)
    n, e = num_buckets, num_buckets // 2
    starts, r = [], e
    for j in range(1, n - e):
        while r ** (n - e) * e**j < max_distance**j * e ** (n - e):
            r += 1
        starts.append(r)
    r = np.maximum(np.minimum(k, max_distance), 0)
    return np.where(r < e, r, e + np.searchsorted(np.array(starts, dtype=np.int64), r, side="right"))


def t5_bucket_torch(k, num_buckets, max_distance):
    """transformers' way (its sign flipped to the book's): torch, float32 logarithms, int64 result."""
    r = torch.clamp(torch.as_tensor(np.asarray(k), dtype=torch.int64), min=0)
    exact = num_buckets // 2
    large = exact + (torch.log(r.float() / exact) / math.log(max_distance / exact) * (num_buckets - exact)).to(
        torch.int64
    )
    large = torch.minimum(large, torch.full_like(large, num_buckets - 1))
    return torch.where(r < exact, r, large).numpy()


def _on_a_boundary(k, n, m):
    """Offsets whose logarithmic position is within 1e-4 of a whole number inside the ramp: float rounding of
    the logarithm (float32 included) could put them either side, so the test inputs leave them out."""
    e = n // 2
    r = np.maximum(np.asarray(k, dtype=np.int64), 0)
    x = np.log(np.maximum(r, e) / e) / np.log(m / e) * (n - e)
    return (r > e) & (x < n - e) & (np.abs(x - np.round(x)) < 1e-4)


def _bucket_cases(rng):
    fixed = [(32, 128), (8, 16), (2, 2), (9, 40), (64, 1000), (17, 27), (3, 5), (33, 500)]

    def draw(rng):
        n = int(rng.integers(2, 65))
        return n, int(rng.integers(n // 2 + 1, 2001))

    cases = []
    for c, (n, m) in enumerate(fixed_then_random(rng, 20, fixed, draw)):
        e = n // 2
        if c % 4 == 1:  # a whole matrix of offsets p - s, as a model builds it
            length = int(rng.integers(5, 60))
            k = np.arange(length)[:, None] - np.arange(length)[None, :]
            k = np.where(_on_a_boundary(k, n, m), 0, k)
        else:
            k = np.concatenate(
                [
                    [-(10**6), -50, -1, 0],
                    np.arange(min(e + 3, m + 1)),
                    rng.integers(e, m + 1, 20),
                    [m - 1, m, m + 1],
                    rng.integers(m, 10**6, 5),
                ]
            ).astype(np.int64)
            k = k[~_on_a_boundary(k, n, m)]
        label = f"num_buckets = {n}, max_distance = {m}, k of shape {k.shape} from {k.min():,} to {k.max():,}"
        cases.append(Case((k, n, m), label))
    return cases


def _t5_bucket_in_place(k, num_buckets, max_distance):
    np.maximum(k, 0, out=k)
    return t5_bucket_model(k, num_buckets, max_distance)


_add(
    Function(
        "09.3",
        "T5's causal bucket",
        _t5_causal,
        _bucket_cases,
        expected=_t5_causal,
        returns="numpy array of `k`'s shape",
        own_code=True,
        mistakes=[
            (
                matches_model(lambda k, n, m: t5_bucket_model(k, n, m, sign=-1)),
                "you bucketed -k, the key's position minus the query's (transformers' sign); the book's "
                "k = p - s is positive for keys behind the query, which get the buckets above 0.",
            ),
            (
                matches_model(lambda k, n, m: t5_bucket_model(k, n, m, ahead="abs")),
                "the causal rule uses max(k, 0): keys ahead of the query (k < 0) share bucket 0; you bucketed |k|.",
            ),
            (
                matches_model(lambda k, n, m: t5_bucket_model(k, n, m, clamp=False)),
                "long offsets must all share the last bucket, num_buckets - 1; yours run past it.",
            ),
            (
                matches_model(lambda k, n, m: t5_bucket_model(k, n, m, rounding="round")),
                "round the logarithmic part down (floor): a bucket runs from its start to the next one's.",
            ),
            (
                matches_model(lambda k, n, m: t5_bucket_model(k, n, m, exact=n // 4) if n >= 4 else None),
                "in the causal rule all num_buckets serve one direction, so the exact buckets are "
                "num_buckets // 2; halving twice is the bidirectional rule.",
            ),
        ],
        known_mistakes=[
            (lambda k, n, m: t5_bucket_model(k, n, m, exact=n // 4), "halving twice"),
            (_t5_bucket_in_place, "changed its input"),
            (lambda k, n, m: torch.from_numpy(t5_bucket_model(k, n, m)), "torch tensor"),
        ],
        alternatives={
            "float64 logarithms": t5_bucket_model,
            "one offset at a time": t5_bucket_loop,
            "whole numbers only": t5_bucket_exact,
            "torch, float32, as transformers": t5_bucket_torch,
            "posenc": lambda k, n, m: posenc.t5_relative_position_bucket(
                k, bidirectional=False, num_buckets=n, max_distance=m
            ),
        },
        covers={
            "offsets far beyond max_distance": lambda k, n, m: np.max(k) > 10 * m,
            "keys ahead (negative offsets)": lambda k, n, m: np.min(k) < 0,
            "odd num_buckets": lambda k, n, m: n % 2 == 1,
            "a matrix of offsets": lambda k, n, m: np.ndim(k) == 2,
        },
    )
)


def _ch09_bucket_ahead():
    return int(posenc.t5_relative_position_bucket(-50))


# T5's encoder: 16 buckets a direction, 8 exact; distance 50 opens the logarithmic bucket 8 + 5 (starts 46), and a
# key ahead adds 16.
_add(
    Numeric(
        "09.4",
        "T5 bucket of a key ahead",
        _ch09_bucket_ahead,
        integer=True,
        mistakes=[
            (
                lambda: int(posenc.t5_relative_position_bucket(50)),
                "that is the bucket of a key 50 tokens behind the query (k = 50); keys ahead (k < 0) use the "
                "second half of the buckets, num_buckets // 2 further on.",
            ),
            (
                lambda: int(posenc.t5_relative_position_bucket(50, bidirectional=False)),
                "that is the causal (decoder) rule, which spends all 32 buckets on keys behind; the encoder's "
                "is bidirectional: 16 buckets a direction, 8 of them exact.",
            ),
            (
                lambda: 0,
                "in the causal rule keys ahead share bucket 0, but an encoder is bidirectional: a key ahead has "
                "buckets of its own.",
            ),
            (
                lambda: _ch09_bucket_ahead() - 1,
                "one bucket too low: a distance on or past the start of a logarithmic bucket belongs to it.",
            ),
        ],
    )
)


def _ch09_distinct():
    return len(np.unique(posenc.t5_relative_position_bucket(60 - np.arange(100))))


_add(
    Numeric(
        "09.5",
        "distinct T5 biases one query sees",
        _ch09_distinct,
        integer=True,
        mistakes=[
            (lambda: 100, "that counts the keys; keys whose offsets share a bucket share its bias."),
            (
                lambda: 32,
                "not every bucket is reached: keys at most 60 behind and 39 ahead do not reach the last buckets.",
            ),
            (
                lambda: len(np.unique(posenc.t5_relative_position_bucket(np.arange(61)))),
                "that counts the keys behind the query (and the query itself) only; in an encoder the query "
                "also sees the 39 keys ahead, in buckets of their own.",
            ),
            (
                lambda: len(np.unique(posenc.t5_relative_position_bucket(60 - np.arange(100), bidirectional=False))),
                "that is the causal rule; the encoder's buckets are bidirectional (keys ahead have their own).",
            ),
        ],
    )
)


_add(
    Choice(
        "09.6",
        "what each relative score depends on",
        "ABCDE",
        "ABE",
        {
            "C": "Shaw's term is q_p · a: the offset picks the vector a, but the query's content q_p multiplies it, "
            "so two queries with the same offset to their keys get different terms.",
            "D": "without the mask ALiBi uses its symmetric bias -m|p - s|, which gives a key one token ahead the "
            "same term as one token behind; only T5's bidirectional buckets and Shaw's vectors (r = -1 and "
            "r = +1) tell them apart. (The signed -m(p - s) of the causal mask would tell them apart, but under "
            "the mask keys ahead are hidden anyway.)",
        },
        right={
            "A": "-m_h (p - s), and without the mask -m_h |p - s|, involves the head's slope and the offset, "
            "nothing else.",
            "B": "with 32 bidirectional buckets up to 128, the last bucket for keys behind holds every distance "
            "from 91 on: 200 and 300 share its number.",
            "E": "each term is a function of p - s alone (T5's through its bucket, Shaw's through clip(s - p)), and "
            "q_p · κ_s carries no position.",
        },
        nudge="For each scheme, write the term added to q_p · κ_s and list what it reads.",
        known_mistakes=[("ABCE", "not the right set"), ("AB", "not the right set"), ("ABCDE", "every option")],
    )
)


def _ch09_shaw_row():
    return posenc.shaw_relative_positions(7, max_distance=3)[2]


_add(
    Array(
        "09.7",
        "Shaw's clipped indices of one query",
        _ch09_shaw_row,
        atol=0,
        mistakes=[
            (
                lambda: np.clip(2 - np.arange(7), -3, 3) + 3,
                "the sign is reversed: Shaw's relative position is the key's minus the query's, s - p "
                "(the opposite of the book's k).",
            ),
            (
                lambda: np.clip(np.arange(7) - 2, -3, 3),
                "the table's row 0 holds relative position -M: add M to clip(s - p, -M, M).",
            ),
            (
                lambda: np.arange(7) - 2 + 3,
                "the relative position is clipped to -M ... M before M is added: keys further than M away share "
                "an end row.",
            ),
        ],
        known_mistakes=[
            (np.array([1, 2, 3, 4, 5, 6]), "shape"),
        ],
    )
)
