"""Questions of chapter 05, learned versus fixed (exercises/05_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from grading.bank.common import (
    CONCAT_HINT,
    COSINE_HINT,
    DEGREES_HINT,
    FLOAT32_HINT,
    SWAP_HINT,
    _degrees,
    _float32_angles,
    _table,
)
from grading.bank.learner_code import float32_table, swapped_table, torch_table, tutorial_table
from grading.feedback import describe, index_text
from grading.kinds import Case, Choice, Function, Lazy, Numeric
from grading.reference import posenc

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append


_add(
    Choice(
        "05.1",
        "why learned tables stop at max_len",
        "ABCD",
        "AB",
        {
            "C": "then every later position gets the same vector, and the model can no longer tell them apart.",
            "D": "nn.Embedding takes any number of rows; the limit is the max_len the model was built and trained "
            "with.",
        },
        right={
            "A": "an embedding table is a lookup: there is no row max_len to look up.",
            "B": "nothing ties row 600 to rows 0 ... 511: there is no rule to extend.",
        },
        nudge=(
            "A learned table is a lookup of rows trained one by one: ask what exists, and what any rule would have "
            "to say, at a position past max_len."
        ),
        known_mistakes=[("C", "past max_len"), ("ABD", "not the right set"), ("ABCD", "every option")],
    )
)

_add(
    Choice(
        "05.2",
        "600 tokens into a 512-position model",
        "ABCD",
        "ABC",
        {
            "D": "each row was trained on its own; nothing defines a vector for position 512 or later.",
        },
        right={
            "A": "a lookup past the table fails: posenc's layer raises ValueError, nn.Embedding IndexError on the CPU.",
            "B": "some code cuts the input to max_len tokens, silently dropping the rest.",
            "C": "clamping gives every position from 511 on the same vector: their order is lost.",
        },
        nudge=(
            "Each statement describes code around the model: ask whether someone could have written that code, and "
            "what the learned table itself can and cannot provide."
        ),
        known_mistakes=[("D", "code around the model"), ("AB", "not the right set"), ("ABCD", "every option")],
    )
)


_CH05_OFF_BY_ONE = (
    "off by one: positions and rows are numbered from 0. Write down the first and the last position that has "
    "no row, then count them."
)


def _ch05_uncovered():
    table = posenc.LearnedPositionalEmbedding(1024, 8)
    return 1500 - table.embedding.num_embeddings


_add(
    Numeric(
        "05.3",
        "positions without a learned row",
        _ch05_uncovered,
        integer=True,
        mistakes=[
            (
                lambda: _ch05_uncovered() - 1,
                _CH05_OFF_BY_ONE,
            ),
            (
                lambda: _ch05_uncovered() + 1,
                _CH05_OFF_BY_ONE,
            ),
            (lambda: 0, "every position from 1024 on has no row in the table."),
        ],
    )
)


def _ch05_params():
    return sum(p.numel() for p in posenc.LearnedPositionalEmbedding(512, 768).parameters() if p.requires_grad)


_add(
    Numeric(
        "05.4",
        "parameters of a learned table",
        _ch05_params,
        integer=True,
        mistakes=[
            (lambda: 512 + 768, "the table has one row of d_model numbers per position: multiply."),
            (lambda: 0, "that is the sinusoidal encoding's count; the learned table is trained."),
            (lambda: 2 * 512 * 768, "one table, not two."),
        ],
    )
)

_add(
    Choice(
        "05.5",
        "sinusoidal or a learned table",
        "ABCD",
        "A",
        {
            "B": "the formula is defined at every position, "
            "but models trained on short sequences extrapolate poorly in practice.",
            "C": "most current open LLMs use rotary embeddings (RoPE); BERT and GPT-2 used learned tables.",
            "D": "a learned position vector is a row lookup, no matrix product.",
        },
        right={
            "A": "fixed: no parameters, any length, nothing adapts; learned: adapts, about as good inside the trained "
            "range in the original Transformer's comparison, but costs parameters and stops at max_len.",
        },
        known_mistakes=[("B", "extrapolate"), ("C", "RoPE"), ("AD", "exactly one")],
    )
)

_add(
    Choice(
        "05.6",
        "a learned weight on PE",
        "ABCD",
        "ABD",
        {
            "C": "w·PE(p) still depends on p only through PE(p).",
        },
        right={
            "A": "a scalar commutes with T(k): w·PE(p + k) = T(k)·(w·PE(p)).",
            "B": "D·T(k)·D⁻¹ is still one fixed matrix per offset, the same at every p.",
            "D": "a channel multiplied by 0 is 0 at every position: it carries no information.",
        },
        nudge=(
            "Write the scaled encoding as D·PE with D = diag(w) and ask, statement by statement, what stays linear "
            "in PE and what a zero weight does."
        ),
        known_mistakes=[("C", "diag(w)"), ("AB", "not the right set"), ("ABCD", "every option")],
    )
)


class _TokenPositionEmbedding(nn.Module):
    """Reference for 05.7: sqrt(d)-scaled token embedding plus the sinusoidal encoding."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, d_model)
        self.positions = posenc.SinusoidalPositionalEncoding(d_model)
        self.scale = math.sqrt(d_model)

    def forward(self, tokens):
        return self.positions(self.tokens(tokens) * self.scale)


def _layer_cases(rng):
    """Random sizes; sequences up to 10,000 tokens: past the 5,000 rows of the tutorial's table, and long enough
    that float32 angles (about p·6e-8 radians off) are seen."""
    cases = []
    for k in range(14):
        if k >= 12:  # the long ones, with small d_model: honest loops over positions stay fast
            vocab, d, seq = int(rng.integers(2, 1000)), [8, 5][k - 12], [6000, 10000][k - 12]
            tokens = torch.from_numpy(rng.integers(0, vocab, size=(1, seq)))
            cases.append(
                Case(
                    (vocab, d, tokens),
                    f"vocab_size = {vocab}, d_model = {d}, tokens of shape (1, {seq})",
                    note="a fixed encoding has no length limit: build the table for the actual seq",
                )
            )
            continue
        vocab = int(rng.integers(2, 1000))
        d = [16, 7, 1, 2, 64, 33][k] if k < 6 else int(rng.integers(1, 70))
        batch = int(rng.integers(1, 4))
        seq = [15, 1, 600, 2500][k % 4] if k < 8 else int(rng.integers(1, 3000))
        tokens = torch.from_numpy(rng.integers(0, vocab, size=(batch, seq)))
        cases.append(
            Case(
                (vocab, d, tokens),
                f"vocab_size = {vocab}, d_model = {d}, tokens of shape ({batch}, {seq})",
                note="a fixed encoding has no length limit: build the table for the actual seq"
                if seq > 512
                else (f"d_model = {d} is odd" if d % 2 else ""),
            )
        )
    return cases


def _call_layer(cls, vocab, d, tokens):
    torch.manual_seed(0)
    module = cls(vocab, d)
    if not isinstance(module, nn.Module):
        return module, None
    module.eval()
    with torch.no_grad():
        return module, module(tokens)


def _verify_layer(result, case, *, atol, rtol, dtype):
    module, out = result
    vocab, d, tokens = case.args
    if not isinstance(module, nn.Module):
        return f"calling your class should create a torch.nn.Module, got {describe(module)}."
    tables = [m for m in module.modules() if isinstance(m, nn.Embedding) and tuple(m.weight.shape) == (vocab, d)]
    if len(tables) != 1:
        return f"expected one nn.Embedding(vocab_size, d_model) for the tokens, found {len(tables)}."
    extra = sum(p.numel() for p in module.parameters() if p.requires_grad) - vocab * d
    if extra:
        return (
            f"your module has {extra} trainable parameters besides the token embedding: the positional "
            "encoding must be fixed (computed, or a buffer), not learned."
        )
    if not isinstance(out, torch.Tensor):
        return f"forward returned {describe(out)}; return a torch tensor."
    if tuple(out.shape) != (*tokens.shape, d):
        return f"forward should return shape {(*tokens.shape, d)}, got {tuple(out.shape)}."
    if out.dtype != getattr(torch, dtype.name):
        return f"expected dtype {dtype.name}, got {out.dtype}."
    got = out.double().numpy()
    if np.isnan(got).any():
        return f"element {index_text(np.argwhere(np.isnan(got))[0])} is NaN."
    embedded = tables[0].weight.detach().double().numpy()[tokens.numpy()]
    want = embedded * math.sqrt(d) + posenc.sinusoidal(tokens.shape[1], d)
    bad = np.abs(got - want) > atol + rtol * np.abs(want)
    if bad.any():
        b, p, c = np.argwhere(bad)[0]
        return f"wrong value at batch {b}, position {p}, channel {c}: {got[b, p, c]:.6g}, expected {want[b, p, c]:.6g}."
    return None


_LAYER_ATOL, _LAYER_RTOL = 1e-5, 1e-6  # float32 results of accurate angles; float32 angles are off by 5e-4 at p = 10^4


def _layer_mistake(kind):
    """05.7's mistake ``kind`` as a predicate on the learner's (module, output): the models need the learner's own
    token table. Like a ``feedback.Model``, it names the mistake only where it explains the failure: the model's
    output is wrong for this case (beyond the question's tolerance) and the learner's is within the tolerance of
    it (or, for float32 angles, shows its signature)."""

    def test(result, case):
        module, out = result
        vocab, d, tokens = case.args
        table = next(m for m in module.modules() if isinstance(m, nn.Embedding) and tuple(m.weight.shape) == (vocab, d))
        tok = table.weight.detach().double().numpy()[tokens.numpy()]
        pe = posenc.sinusoidal(tokens.shape[1], d)
        want, got = tok * math.sqrt(d) + pe, out.double().numpy()

        def wrong(model):  # is the model's output wrong here, beyond the tolerance?
            return bool(np.any(np.abs(model - want) > _LAYER_ATOL + _LAYER_RTOL * np.abs(want)))

        if kind == "clamped":  # from some position on, every row gets the same encoding
            part = got - tok * math.sqrt(d)
            bad = np.flatnonzero(np.abs(part - pe).max(axis=(0, 2)) > 1e-3)
            return (
                bad.size > 0 and bad[0] > 0 and np.allclose(part[:, bad[0] :], part[:, bad[0] - 1 : bad[0]], atol=1e-3)
            )
        positions = np.arange(tokens.shape[1])
        if kind == "float32 angles":  # the error of the encoding part grows with the position
            err = np.abs(got - want).max(axis=(0, 2))
            return (
                wrong(tok * math.sqrt(d) + _float32_angles(positions, d))
                and err.max() > 2e-5
                and bool(np.all(err <= 2e-5 + 1e-6 * positions))
            )
        table = {
            "unscaled": pe,
            "only tokens": 0.0,
            "concatenated": lambda: _table(positions, d, layout="concatenated"),
            "swapped": lambda: _table(positions, d, swap=True),
            "sine only": lambda: _table(positions, d, cosine="sin"),
            "cosine zero": lambda: _table(positions, d, cosine="zero"),
            "degrees": lambda: _table(positions, d, _degrees(posenc.frequencies(d))),
        }[kind]
        model = (tok if kind == "unscaled" else tok * math.sqrt(d)) + (table() if callable(table) else table)
        return wrong(model) and bool(np.all(np.abs(got - model) <= _LAYER_ATOL + _LAYER_RTOL * np.abs(model)))

    return test


# A learner's layers, right and wrong (05.7's known mistakes and alternatives)


class LearnedTable(nn.Module):
    """The common tutorial layer: token embedding + learned position table."""

    def __init__(self, vocab_size, d_model, max_len=128):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(max_len, d_model)

    def forward(self, x):
        positions = torch.arange(x.shape[1]).unsqueeze(0).expand_as(x)
        return self.token_embedding(x) + self.position_embedding(positions)


class FixedMaxLen(nn.Module):
    """Sinusoidal buffer of max_len rows, as in the tutorial class: fails past max_len."""

    def __init__(self, vocab_size, d_model, max_len=512):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.scale = math.sqrt(d_model)
        self.register_buffer("pe", torch.from_numpy(posenc.sinusoidal(max_len, d_model, dtype=np.float32)))

    def forward(self, tokens):
        return self.tok(tokens) * self.scale + self.pe[: tokens.shape[1]]


class MaxLen5000(FixedMaxLen):
    """The tutorial's table length: accurate rows, but only 5,000 of them."""

    def __init__(self, vocab_size, d_model, max_len=5000):
        super().__init__(vocab_size, d_model, max_len)


class TutorialFloat32(nn.Module):
    """The tutorial recipe built for the actual length: no limit, but angles in float32."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.d = d_model

    def forward(self, tokens):
        table = torch.from_numpy(float32_table(np.arange(tokens.shape[1]), self.d)).float()
        return self.tok(tokens) * math.sqrt(self.d) + table


class SwappedLayer(TutorialFloat32):
    def forward(self, tokens):
        table = torch.from_numpy(swapped_table(np.arange(tokens.shape[1]), self.d)).float()
        return self.tok(tokens) * math.sqrt(self.d) + table


class SineTwiceLayer(TutorialFloat32):
    """The cosine channels hold the sine again."""

    def forward(self, tokens):
        table = torch.from_numpy(_table(np.arange(tokens.shape[1]), self.d, cosine="sin")).float()
        return self.tok(tokens) * math.sqrt(self.d) + table


class DegreesLayer(TutorialFloat32):
    """The angles p·ω converted as if they were degrees."""

    def forward(self, tokens):
        omega = _degrees(posenc.frequencies(self.d))
        table = torch.from_numpy(_table(np.arange(tokens.shape[1]), self.d, omega)).float()
        return self.tok(tokens) * math.sqrt(self.d) + table


class Clamped(FixedMaxLen):
    """Past max_len, reuse the last row: silently wrong."""

    def forward(self, tokens):
        idx = torch.arange(tokens.shape[1]).clamp(max=self.pe.shape[0] - 1)
        return self.tok(tokens) * self.scale + self.pe[idx]


class Unscaled(FixedMaxLen):
    def forward(self, tokens):
        table = posenc.sinusoidal(tokens.shape[1], self.tok.embedding_dim, dtype=np.float32)
        return self.tok(tokens) + torch.from_numpy(table)


class Concatenated(FixedMaxLen):
    def forward(self, tokens):
        pe = posenc.sinusoidal(tokens.shape[1], self.tok.embedding_dim, layout="concatenated", dtype=np.float32)
        return self.tok(tokens) * self.scale + torch.from_numpy(pe)


class TutorialOddBreaks(nn.Module):
    """Builds the table on the fly with the tutorial recipe: no length limit, but odd d_model fails."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.d = d_model

    def forward(self, tokens):
        pe = torch.from_numpy(tutorial_table(np.arange(tokens.shape[1]), self.d)).float()
        return self.tok(tokens) * math.sqrt(self.d) + pe


class ReturnsNumpy(FixedMaxLen):
    def forward(self, tokens):
        return (self.tok(tokens) * self.scale).detach().numpy()


class MutatesTokens(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.d = d_model

    def forward(self, tokens):
        tokens.clamp_(max=0)
        pe = torch.from_numpy(posenc.sinusoidal(tokens.shape[1], self.d, dtype=np.float32))
        return self.tok(tokens) * math.sqrt(self.d) + pe


class CachedLayer(nn.Module):
    """Right: a float32 table cached and rebuilt whenever a longer input arrives."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.d = d_model
        self.register_buffer("table", torch.zeros(0, d_model), persistent=False)

    def forward(self, tokens):
        if tokens.shape[1] > self.table.shape[0]:
            self.table = torch.from_numpy(posenc.sinusoidal(2 * tokens.shape[1], self.d, dtype=np.float32))
        return self.embed(tokens) * math.sqrt(self.d) + self.table[: tokens.shape[1]]


class TorchOpsLayer(nn.Module):
    """Right: written with torch operations only (angles in float64)."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.d = d_model

    def forward(self, tokens):
        pe = torch.from_numpy(torch_table(np.arange(tokens.shape[1]), self.d)).float()
        return self.tok(tokens) * self.d**0.5 + pe


class PosencLayer(nn.Module):
    """Right: posenc's own layer for the positions."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok, self.d = nn.Embedding(vocab_size, d_model), d_model
        self.pe = posenc.SinusoidalPositionalEncoding(d_model)

    def forward(self, tokens):
        return self.pe(self.tok(tokens) * math.sqrt(self.d))


_add(
    Function(
        "05.7",
        "token + position embedding layer",
        _TokenPositionEmbedding,
        _layer_cases,
        verify=_verify_layer,
        returns="torch tensor of shape `(batch, seq, d_model)`",
        atol=_LAYER_ATOL,
        rtol=_LAYER_RTOL,
        dtype=np.float32,
        call=_call_layer,
        mistakes=[
            (_layer_mistake("unscaled"), "scale the token embeddings by sqrt(d_model) before adding the positions."),
            (_layer_mistake("concatenated"), CONCAT_HINT),
            (_layer_mistake("only tokens"), "the positional encoding is missing."),
            (
                _layer_mistake("clamped"),
                "from some position on, every position gets the same vector: are positions clamped "
                "to a max_len? A fixed encoding needs no length limit.",
            ),
            (_layer_mistake("swapped"), SWAP_HINT),
            (
                _layer_mistake("float32 angles"),
                FLOAT32_HINT + " posenc.sinusoidal(seq, d_model, dtype=np.float32) does.",
            ),
            (_layer_mistake("sine only"), COSINE_HINT),
            (_layer_mistake("cosine zero"), COSINE_HINT),
            (_layer_mistake("degrees"), DEGREES_HINT),
        ],
        known_mistakes=[
            (LearnedTable, "trainable parameters"),
            (FixedMaxLen, "no length limit"),
            (Clamped, "clamped"),
            (Unscaled, "sqrt(d_model)"),
            (Concatenated, "concatenated"),
            (TutorialOddBreaks, "odd"),
            (ReturnsNumpy, "torch tensor"),
            (MutatesTokens, "changed its input"),
            (MaxLen5000, "no length limit"),
            (TutorialFloat32, "float32"),
            (SwappedLayer, "swapped"),
            (SineTwiceLayer, COSINE_HINT),
            (DegreesLayer, DEGREES_HINT),
            (Lazy(lambda: MaxLen5000(10, 4)), "pass the class itself"),
        ],
        alternatives={"cached table": CachedLayer, "torch operations": TorchOpsLayer, "posenc module": PosencLayer},
        covers={
            "seq above 1000": lambda tokens, d: tokens.shape[1] > 1000,
            "odd d_model": lambda tokens, d: d % 2 == 1,
        },
    )
)
