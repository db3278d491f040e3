"""Questions of chapter 11, positions at inference time: caches, padding and packing (exercises/11_*.ipynb)."""

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


# ---- One head of causal RoPE attention, as the references compute it ---------


def _softmax(scores):
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)


def _attend(q, k, v, q_positions, k_positions, visible):
    """softmax(R(q_positions) q · R(k_positions) k / √d) v, each query over its ``visible`` keys (float64)."""
    rq = posenc.apply_rope(np.asarray(q, dtype=np.float64), np.asarray(q_positions))
    rk = posenc.apply_rope(np.asarray(k, dtype=np.float64), np.asarray(k_positions))
    scores = rq @ rk.T / math.sqrt(rq.shape[-1])
    return _softmax(np.where(visible, scores, -np.inf)) @ np.asarray(v, dtype=np.float64)


def _causal(q, k, v):
    n = len(q)
    return _attend(q, k, v, np.arange(n), np.arange(n), np.tri(n, dtype=bool))


# ---- Chapter 11: positions at inference time ---------------------------------

_PROMPT, _GENERATED = 37, 5

_add(
    Numeric(
        "11.1",
        "the position of the next token",
        lambda: _PROMPT + _GENERATED,
        integer=True,
        mistakes=[
            (
                lambda: _PROMPT + _GENERATED + 1,
                "positions count from 0: the prompt's first token is at position 0, so the next token's position "
                "is the number of tokens already in the cache.",
            ),
            (
                lambda: _GENERATED,
                "that counts only the generated tokens; the prompt's tokens are in the cache too, before them.",
            ),
            (
                lambda: 2 * (_PROMPT + _GENERATED),
                "you added the cache's length to a position that already includes it: the offset counted twice.",
            ),
            (
                lambda: _PROMPT + _GENERATED - 1,
                "that is the position of the last token in the cache; the new token comes after it.",
            ),
            (lambda: _PROMPT, "that is the position of the first generated token; five have been generated since."),
        ],
    )
)


# 11.2: the cached decoding loop with one positions bug


def _decode_reference(q, k, v, prefill):
    """What a cache must not change: causal RoPE attention over all n tokens at once."""
    return _causal(q, k, v)


def _decoded(q, k, v, prefill, position=lambda t, prefill: t, reread=False):
    """The prompt prefilled at once, then one token per step at ``position(t, prefill)``; ``reread``: every
    cached key is rotated again, at its index, each time it is read. Models of the mistakes, for feedback."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    out = [_causal(q[:prefill], k[:prefill], v[:prefill])]
    stored = list(range(prefill))  # the position each cached key was rotated at
    for t in range(prefill, len(q)):
        p = position(t, prefill)
        stored.append(p)
        keys_at = np.array(stored) + (np.arange(len(stored)) if reread else 0)
        out.append(_attend(q[t : t + 1], k[: t + 1], v[: t + 1], [p], keys_at, np.ones((1, t + 1), dtype=bool)))
    return np.concatenate(out)


def _decode_cases(rng):
    fixed = [(1, 1, 4), (12, 1, 8), (12, 12, 8), (30, 7, 16), (9, 3, 2), (44, 25, 32), (5, 2, 6)]

    def draw(rng):
        n, d = int(rng.integers(2, 49)), 2 * int(rng.integers(1, 17))
        return n, int(rng.integers(1, n + 1)), d

    cases = []
    for n, prefill, d in fixed_then_random(rng, 20, fixed, draw):
        q, k = (1.5 * rng.normal(size=(n, d)) for _ in range(2))  # sharp attention: a wrong offset shows
        v = rng.normal(size=(n, d))
        cases.append(Case((q, k, v, prefill), f"n = {n} tokens of width d = {d} and a prompt of {prefill}"))
    return cases


def _softmax_rows(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def decode_loop(q, k, v, prefill, where=lambda t, cache: cache, reread=False):
    """The question's loop written as a learner writes it; ``where(t, len(k_cache))`` is the new token's position
    (right: the cache's length); ``reread``: the cache rotated again when it is read (a mistake)."""
    n, d = q.shape
    first = np.arange(prefill)
    k_cache, v_cache = posenc.apply_rope(k[:prefill], first), v[:prefill]
    scores = posenc.apply_rope(q[:prefill], first) @ k_cache.T / np.sqrt(d)
    scores[np.triu_indices(prefill, 1)] = -np.inf
    outputs = [_softmax_rows(scores) @ v_cache]
    for t in range(prefill, n):
        position = np.array([where(t, len(k_cache))])
        k_cache = np.concatenate([k_cache, posenc.apply_rope(k[t : t + 1], position)])
        v_cache = np.concatenate([v_cache, v[t : t + 1]])
        keys = posenc.apply_rope(k_cache, np.arange(len(k_cache))) if reread else k_cache
        outputs.append(_softmax_rows(posenc.apply_rope(q[t : t + 1], position) @ keys.T / np.sqrt(d)) @ v_cache)
    return np.concatenate(outputs)


def unrotated_cache(q, k, v, prefill):
    """A correct design: the cache holds keys before rotation, and the whole cache is rotated at every step."""
    n, d = q.shape
    outputs = []
    for upto in [prefill, *range(prefill + 1, n + 1)]:  # the cache's length after each step
        keys = posenc.apply_rope(k[:upto], np.arange(upto))
        rows = np.arange(upto) if upto == prefill else np.array([upto - 1])
        scores = posenc.apply_rope(q[rows], rows) @ keys.T / np.sqrt(d)
        scores = np.where(np.arange(upto)[None, :] <= rows[:, None], scores, -np.inf)
        outputs.append(_softmax_rows(scores) @ v[:upto])
    return np.concatenate(outputs)


def decode_torch(q, k, v, prefill):
    """The whole sequence at once, in torch: a cache changes nothing."""
    tq, tk, tv = (torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in (q, k, v))
    rq, rk = posenc.apply_rope(tq), posenc.apply_rope(tk)
    scores = (rq @ rk.T / math.sqrt(tq.shape[1])).masked_fill(~torch.ones(len(tq), len(tq)).tril().bool(), -torch.inf)
    return (torch.softmax(scores, -1) @ tv).numpy()


_add(
    Function(
        "11.2",
        "fix the cached decoding loop",
        _decode_reference,
        _decode_cases,
        expected=_decode_reference,
        returns="numpy array of shape `(n, d)`",
        atol=1e-9,
        mistakes=[
            (
                matches_model(lambda q, k, v, p: _decoded(q, k, v, p, position=lambda t, pf: 0)),
                "every new token was rotated at position 0, while the cached keys keep their positions: the query "
                "meets its past at negative offsets. A new token's position is the number of tokens already in the "
                "cache.",
            ),
            (
                matches_model(lambda q, k, v, p: _decoded(q, k, v, p, position=lambda t, pf: t - pf)),
                "the positions restart after the prompt: the generated tokens continue the prompt's numbering.",
            ),
            (
                matches_model(lambda q, k, v, p: _decoded(q, k, v, p, position=lambda t, pf: t + 1)),
                "one position too far: the prompt's first token is at 0, so a new token's position equals the "
                "number of tokens already in the cache.",
            ),
            (
                matches_model(lambda q, k, v, p: _decoded(q, k, v, p, position=lambda t, pf: 2 * t)),
                "the offset was counted twice: the cache's length added to a position that already includes it.",
            ),
            (
                matches_model(lambda q, k, v, p: _decoded(q, k, v, p, reread=True)),
                "the cached keys were rotated again when they were read; they are stored rotated, once.",
            ),
        ],
        alternatives={
            "the given loop, fixed": decode_loop,
            "no cache: all tokens at once": lambda q, k, v, p: _causal(q, k, v),
            "a cache of unrotated keys, rotated at every step": unrotated_cache,
            "torch": decode_torch,
        },
        covers={
            "a prompt of one token": lambda q, k, v, p: p == 1,
            "no token after the prompt": lambda q, k, v, p: p == len(q),
            "more than 40 tokens": lambda q, k, v, p: len(q) > 40,
        },
    )
)


# 11.3: the positions of a packed row

_PACKED = (4, 2, 3)

_add(
    Array(
        "11.3",
        "position_ids of a packed row",
        lambda: np.concatenate([np.arange(n) for n in _PACKED]),
        atol=0.0,
        mistakes=[
            (
                lambda: np.arange(sum(_PACKED)),
                "those run on through the row; in a packed row the positions restart at 0 in each document.",
            ),
            (lambda: np.concatenate([np.arange(1, n + 1) for n in _PACKED]), "each document starts at position 0."),
            (
                lambda: np.repeat(np.arange(len(_PACKED)), _PACKED),
                "those number the documents; the question asks for each token's position inside its document.",
            ),
        ],
        known_mistakes=[
            ([0, 1, 2, 3, 0, 1, 0, 1], "shape"),
        ],
    )
)


# 11.4: attention over a packed row, with one positions bug


def _packed(q, k, v, lengths):
    """Each document on its own: causal RoPE attention from position 0."""
    edges = np.cumsum([0, *lengths])
    return np.concatenate([_causal(q[a:b], k[a:b], v[a:b]) for a, b in zip(edges[:-1], edges[1:])])


def _packed_with(q, k, v, lengths, *, restart=True, block=True, causal=True):
    """A packed row with the positions and the mask as given (models of the mistakes)."""
    n = len(q)
    doc = np.repeat(np.arange(len(lengths)), lengths)
    positions = np.concatenate([np.arange(m) for m in lengths]) if restart else np.arange(n)
    visible = np.tri(n, dtype=bool) if causal else np.ones((n, n), dtype=bool)
    if block:
        visible = visible & (doc[:, None] == doc[None, :])
    return _attend(q, k, v, positions, positions, visible)


def _packed_cases(rng):
    fixed = [[7], [3, 4], [1, 1, 1], [5, 1, 6, 2], [12, 12], [2, 9, 1, 4, 3]]

    def draw(rng):
        return [int(m) for m in rng.integers(1, 13, size=int(rng.integers(1, 6)))]

    cases = []
    for lengths in fixed_then_random(rng, 16, fixed, draw):
        n, d = sum(lengths), 2 * int(rng.integers(1, 17))
        q, k = (1.5 * rng.normal(size=(n, d)) for _ in range(2))
        v = rng.normal(size=(n, d))
        cases.append(Case((q, k, v, lengths), f"documents of lengths {lengths} and width d = {d}"))
    return cases


def packed_loop(q, k, v, lengths, running=False):
    """A learner's correct answer: the given code with restarted positions (``running``: positions that run on
    through the row and a mask built from the lengths instead, also correct for RoPE)."""
    n, d = q.shape
    document = np.repeat(np.arange(len(lengths)), lengths)
    positions = np.arange(n) if running else np.concatenate([np.arange(m) for m in lengths])
    visible = np.tri(n, dtype=bool) & (document[:, None] == document[None, :])
    scores = posenc.apply_rope(q, positions) @ posenc.apply_rope(k, positions).T / np.sqrt(d)
    return _softmax_rows(np.where(visible, scores, -np.inf)) @ v


def packed_buggy(q, k, v, lengths, restart=False):
    """The question's code: the documents are found where the positions restart, and they never do."""
    n, d = q.shape
    positions = np.concatenate([np.arange(m) for m in lengths]) if restart else np.arange(n)
    document = np.cumsum(positions == 0) - 1
    visible = np.tri(n, dtype=bool) & (document[:, None] == document[None, :])
    scores = posenc.apply_rope(q, positions) @ posenc.apply_rope(k, positions).T / np.sqrt(d)
    return _softmax_rows(np.where(visible, scores, -np.inf)) @ v


def packed_per_document(q, k, v, lengths):
    out, start = [], 0
    for m in lengths:
        s = slice(start, start + m)
        rq, rk = posenc.apply_rope(q[s], np.arange(m)), posenc.apply_rope(k[s], np.arange(m))
        scores = np.where(np.tri(m, dtype=bool), rq @ rk.T / np.sqrt(q.shape[1]), -np.inf)
        out.append(_softmax_rows(scores) @ v[s])
        start += m
    return np.concatenate(out)


_LEAK_HINT = (
    "the later documents attend to the earlier ones: a token may see only the earlier tokens of its own "
    "document. Where do your documents start?"
)

_add(
    Function(
        "11.4",
        "fix the packed attention",
        _packed,
        _packed_cases,
        expected=_packed,
        returns="numpy array of shape `(sum(lengths), d)`",
        atol=1e-9,
        mistakes=[
            (matches_model(lambda q, k, v, m: _packed_with(q, k, v, m, restart=False, block=False)), _LEAK_HINT),
            (matches_model(lambda q, k, v, m: _packed_with(q, k, v, m, block=False)), _LEAK_HINT),
            (
                matches_model(lambda q, k, v, m: _packed_with(q, k, v, m, causal=False)),
                "inside its document a token still sees only the tokens before it: keep the mask causal.",
            ),
        ],
        alternatives={
            "the given code, fixed": lambda q, k, v, m: packed_buggy(q, k, v, m, restart=True),
            "restarted positions, mask from the lengths": packed_loop,
            "running positions, mask from the lengths": lambda q, k, v, m: packed_loop(q, k, v, m, running=True),
            "one document at a time": packed_per_document,
        },
        covers={
            "a single document": lambda q, k, v, m: len(m) == 1,
            "documents of one token": lambda q, k, v, m: 1 in m,
            "five documents": lambda q, k, v, m: len(m) == 5,
        },
    )
)


# 11.5: absolute positions for a padded batch, with one positions bug


def _padded(x, mask):
    """x + PE(position) at the real tokens, the position counting the row's real tokens before it."""
    out = np.array(x, dtype=np.float64)
    for row, real in zip(out, np.asarray(mask)):
        where = np.flatnonzero(real)
        row[where] += posenc.sinusoidal(len(where), out.shape[2])
    return out


def _padded_with(x, mask, *, columns=False, start=0, pads_too=False):
    """Models of the mistakes: positions = the columns, or counted from ``start``; ``pads_too``: PE added to the
    pads as well."""
    x, mask = np.asarray(x, dtype=np.float64), np.asarray(mask)
    batch, seq, d = x.shape
    positions = np.broadcast_to(np.arange(seq), (batch, seq)) if columns else np.cumsum(mask, axis=1) - 1 + start
    pe = posenc.sinusoidal(np.maximum(positions, 0).ravel(), d).reshape(batch, seq, d)
    return x + (pe if pads_too else pe * mask[..., None])


def _padding_cases(rng):
    fixed = [  # (rows, seq, d, sides): one entry per row, "left", "right" or "none"
        (2, 9, 8, ["none", "left"]),
        (3, 6, 5, ["left", "right", "none"]),
        (1, 12, 16, ["left"]),
        (4, 7, 1, ["right", "left", "left", "none"]),
        (2, 20, 33, ["left", "right"]),
    ]

    def draw(rng):
        rows, seq, d = int(rng.integers(1, 7)), int(rng.integers(2, 25)), int(rng.integers(1, 34))
        return rows, seq, d, [str(s) for s in rng.choice(["left", "right", "none"], size=rows)]

    cases = []
    for rows, seq, d, sides in fixed_then_random(rng, 16, fixed, draw):
        mask = np.zeros((rows, seq), dtype=np.int64)
        for row, side in zip(mask, sides):
            real = seq if side == "none" else int(rng.integers(1, seq))
            if side == "left":
                row[seq - real :] = 1
            else:
                row[:real] = 1
        x = rng.normal(size=(rows, seq, d))
        cases.append(
            Case((x, mask), f"{rows} rows of {seq} tokens, d_model = {d}, padding per row: {', '.join(sides)}")
        )
    return cases


def add_positions_cumsum(x, mask, start=-1, pads_too=False):
    """A learner's answer: positions from the mask; ``start=0`` forgets the -1, ``pads_too`` the mask."""
    batch, seq, d = x.shape
    positions = np.maximum(np.cumsum(mask, axis=1) + start, 0)
    pe = posenc.sinusoidal(positions.ravel(), d).reshape(batch, seq, d)
    return x + (pe if pads_too else pe * mask[..., None])


def add_positions_torch(x, mask):
    tx, tm = torch.from_numpy(np.asarray(x, dtype=np.float64)), torch.from_numpy(np.asarray(mask))
    positions = (tm.cumsum(1) - 1).clamp(min=0)
    pe = torch.from_numpy(posenc.sinusoidal(positions.flatten().numpy(), tx.shape[2])).view(tx.shape)
    return (tx + pe * tm[..., None]).numpy()


_add(
    Function(
        "11.5",
        "fix the positions of a padded batch",
        _padded,
        _padding_cases,
        expected=_padded,
        returns="numpy array of shape `(batch, seq, d_model)`",
        atol=1e-9,
        mistakes=[
            (
                matches_model(lambda x, m: _padded_with(x, m, columns=True)),
                "your positions are the columns of the batch: a left-padded row's first real token must be at "
                "position 0, whatever its column.",
            ),
            (
                matches_model(lambda x, m: _padded_with(x, m, start=1)),
                "your positions start at 1: the first real token of a row is at position 0.",
            ),
            (
                matches_model(lambda x, m: _padded_with(x, m, pads_too=True)),
                "the pad slots changed: return them as they are, without an encoding.",
            ),
        ],
        alternatives={
            "positions from the mask": add_positions_cumsum,
            "one row at a time": _padded,
            "torch": add_positions_torch,
        },
        covers={
            "a left-padded row": lambda x, m: bool(np.any((m[:, 0] == 0) & (m[:, -1] == 1))),
            "a row without padding": lambda x, m: bool(np.any(m.all(axis=1))),
            "odd d_model": lambda x, m: x.shape[2] % 2 == 1,
        },
    )
)


_add(
    Choice(
        "11.6",
        "padding and positions",
        "ABCD",
        "AD",
        {
            "B": "GPT-2's learned table gives other vectors at the shifted positions: without position_ids from the "
            "mask its logits for a left-padded prompt change.",
            "C": "dynamic NTK picks one base for the whole batch from its largest position, so a short prompt's "
            "logits depend on the longest prompt of its batch whatever position_ids say.",
        },
        right={
            "A": "left padding shifts all of the prompt's positions by the same amount, and RoPE scores see only "
            "offsets.",
            "D": "with a causal mask, pads after a token cannot reach it, and its position does not change.",
        },
        nudge=(
            "For each case ask two things: do the real tokens' positions change, and does the model see absolute "
            "positions or only offsets?"
        ),
        known_mistakes=[
            ("A", "not the right set"),
            ("ACD", "not the right set"),
            ("ABD", "not the right set"),
            ("ABCD", "every option"),
        ],
    )
)


# 11.7: the offsets a query meets in an evicting cache with positions in the cache

_KEPT = (0, 1, 6, 7, 8, 9, 10)  # 2 sinks, the window 6 ... 9, and the new token 10

_add(
    Array(
        "11.7",
        "offsets in a cache with attention sinks",
        lambda: (len(_KEPT) - 1) - np.arange(len(_KEPT)),
        atol=0.0,
        mistakes=[
            (
                lambda: _KEPT[-1] - np.array(_KEPT),
                "those are the offsets with the original positions; with positions in the cache the kept keys "
                "are numbered 0, 1, 2, ... in cache order, and the query gets the next number.",
            ),
            (
                lambda: np.arange(len(_KEPT)),
                "those are the keys' positions in the cache; an offset is the query's position minus the key's.",
            ),
            (
                lambda: np.arange(len(_KEPT)) - (len(_KEPT) - 1),
                "the sign: an offset is the query's position minus the key's, not the other way round.",
            ),
        ],
        known_mistakes=[
            ([5, 4, 3, 2, 1, 0], "shape"),
        ],
    )
)
