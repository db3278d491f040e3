"""A tiny Transformer and an order-sensitive toy task, for experiments that
compare positional schemes on a CPU in seconds.

The task, *offset copy*: every sequence is ``length`` distinct tokens drawn
at random from ``vocab_size``; the target at position ``t`` is the token at
position ``t - offset`` (positions ``t < offset`` have no target and are
ignored). Since the tokens are distinct, the token alone says nothing about
where it sits: only position information can solve the task. What a model
blind to order can still reach depends on the attention mask, so there are
two no-order baselines, each derived once in its function's docstring:
:func:`chance_accuracy_bidirectional` (``1 / (length - 1)``, chapter 5) and
:func:`chance_accuracy_causal` (``1 / t`` at position ``t``, averaged;
chapters 8 to 10).

The model, :class:`TinyTransformer`, takes a positional ``scheme``:

* ``"none"``              no position information at all;
* ``"sinusoidal"``        ``x + PE`` with :class:`posenc.SinusoidalPositionalEncoding`;
* ``"learned"``           ``x + E[:seq]`` with :class:`posenc.LearnedPositionalEmbedding`
                          (needs ``max_len``);
* ``"scaled_sinusoidal"`` ``x + w * PE`` with a learned scalar ``w``, or one
                          weight per channel (:class:`ScaledSinusoidalEncoding`);
* ``"rope"``              nothing added to the input; every layer rotates its
                          queries and keys with :func:`posenc.apply_rope`;
* ``"alibi"``             nothing added to the input; every layer adds
                          :func:`posenc.alibi_bias` to its attention scores;
* ``"t5"``                nothing added to the input; every layer adds T5's
                          learned bias, one number per head and bucket of
                          :func:`posenc.t5_relative_position_bucket`
                          (:func:`posenc.t5_bias`), to its scores;
* ``"shaw"``              nothing added to the input; every layer adds a
                          learned vector per clipped relative position
                          (:func:`posenc.shaw_relative_positions`) to its
                          keys: the score is ``q_p . (kappa_s + a_clip(s-p))``.

Schemes that act inside attention (RoPE rotates queries and keys, ALiBi and
T5 add a bias to the scores, Shaw's adds a vector to the keys) plug into
:class:`SelfAttention` through its ``qk_transform``, ``score_bias`` and
``relative_index`` arguments, which :class:`TinyTransformer` passes down from
:meth:`TinyTransformer.attention_extras`.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

import posenc
from posenc_course.arguments import Bool, Dict, InstanceOf, Int, Items, Maybe, OneOf, Real, accepts, refuse

__all__ = [
    "SCHEMES",
    "IGNORE",
    "EVAL_SEED",
    "offset_copy_batch",
    "chance_accuracy_bidirectional",
    "chance_accuracy_causal",
    "chance_accuracy_causal_by_position",
    "ScaledSinusoidalEncoding",
    "SelfAttention",
    "Block",
    "TinyTransformer",
    "train",
    "evaluate",
]

SCHEMES = ("none", "sinusoidal", "learned", "scaled_sinusoidal", "rope", "alibi", "t5", "shaw")
IGNORE = -100  # target value for positions without a target (F.cross_entropy's ignore_index)
EVAL_SEED = 1_000_000_007  # evaluation batches; training seeds stay far below it


COUNT = Int(1)
SEED = Int(0, 2**63 - 1)
BASE = Real(above=1)
ROPE_BLOCK = "None or a dict such as {'rope_type': 'linear', 'factor': 4.0}"


def _task_fits(length, vocab_size, offset) -> None:
    """The offset-copy task's own limits, which involve two arguments at once."""
    if vocab_size < length:
        refuse(
            "vocab_size",
            message=f"vocab_size must be >= length to draw distinct tokens, got "
            f"vocab_size={vocab_size} and length={length}.",
        )
    if offset >= length:
        refuse("offset", message=f"offset must be < length, got offset={offset} and length={length}.")


# --------------------------------------------------------------------------
# The task
# --------------------------------------------------------------------------


@accepts(n_seq=COUNT, length=COUNT, vocab_size=COUNT, offset=COUNT, seed=SEED)
def offset_copy_batch(n_seq, length, vocab_size, offset=1, *, seed=0):
    """A deterministic batch of the offset-copy task.

    Returns ``(tokens, targets)``, two int64 tensors of shape ``(n_seq, length)``.
    Each row of ``tokens`` holds ``length`` distinct tokens from
    ``0 ... vocab_size - 1``; ``targets[:, t] = tokens[:, t - offset]`` for
    ``t >= offset`` and :data:`IGNORE` before that. The same arguments always
    give the same batch (numpy's ``default_rng(seed)``).
    """
    n_seq, length, vocab_size, offset = int(n_seq), int(length), int(vocab_size), int(offset)
    _task_fits(length, vocab_size, offset)
    rng = np.random.default_rng(seed)
    # Rank random keys: the first `length` columns of a random permutation per row.
    tokens = np.argsort(rng.random((n_seq, vocab_size)), axis=1)[:, :length]
    targets = np.full_like(tokens, IGNORE)
    targets[:, offset:] = tokens[:, :-offset]
    return torch.from_numpy(tokens).long(), torch.from_numpy(targets).long()


@accepts(length=Int(2))
def chance_accuracy_bidirectional(length: int) -> float:
    """The no-order baseline of offset copy under bidirectional attention: ``1 / (length - 1)``.

    A model that cannot see order, with every position attending to every
    other, computes its prediction at position ``t`` from its own token and
    the unordered set of all ``length`` tokens. The target, the token at
    ``t - offset``, is one of the other ``length - 1`` tokens. The tokens are
    distinct and drawn at random, so once the model knows the set, every
    assignment of those tokens to positions is equally likely: each of the
    ``length - 1`` candidates is the target with probability
    ``1 / (length - 1)``, and no rule does better than naming one of them.
    The bound is the same at every position with a target, so it is also the
    mean accuracy, whatever the offset.
    """
    return 1.0 / (int(length) - 1)


chance_accuracy = chance_accuracy_bidirectional  # the shorter name, so that code written with it still runs


def _causal_fits(length: int, offset: int, start: int) -> None:
    if offset >= length:
        refuse("offset", message=f"offset must be < length, got offset={offset} and length={length}.")
    if start >= length:
        refuse("start", message=f"start must be < length, got start={start} and length={length}.")


@accepts(length=Int(2), offset=COUNT)
def chance_accuracy_causal_by_position(length: int, offset: int = 1) -> np.ndarray:
    """The no-order baseline of offset copy under a causal mask, position by position.

    Returns a float array of shape ``(length,)``: ``1 / t`` at every position
    ``t >= offset`` and NaN before (no target), laid out like the
    ``per_position`` array of :func:`evaluate`.

    Derivation: with the causal mask, position ``t`` attends to positions
    ``0 ... t``. A model that sees each prefix as an unordered set knows its
    own token and the set of the ``t`` tokens before it, and the target (the
    token at ``t - offset``) is one of those ``t``. The tokens are distinct
    and drawn at random, so given that set each of the ``t`` is the target
    with probability ``1 / t``, and no rule does better than naming one.

    The bound holds for a model whose output at ``t`` depends on its prefix
    only as a set, such as one causal attention layer without positions.
    Stacked causal layers can work positions out from the mask itself (a
    uniform average over a prefix carries ``1 / (t + 1)``), so for them it is
    a reference line, not a ceiling (chapter 10 trains one past it).
    """
    length, offset = int(length), int(offset)
    _causal_fits(length, offset, 0)
    out = np.full(length, np.nan)
    out[offset:] = 1.0 / np.arange(offset, length)
    return out


@accepts(length=Int(2), offset=COUNT, start=Int(0))
def chance_accuracy_causal(length: int, offset: int = 1, *, start: int = 0) -> float:
    """The no-order baseline of offset copy under a causal mask, averaged over positions.

    The mean of :func:`chance_accuracy_causal_by_position` (``1 / t`` at
    position ``t``; its docstring derives it) over the positions that have a
    target, ``t = offset ... length - 1``::

        (1 / (length - offset)) * sum(1 / t for t in range(offset, length))

    which is the expected accuracy of the best order-blind model, since
    every such position counts once in :func:`evaluate`'s accuracy. With
    ``start``, only positions ``t >= max(start, offset)`` count: e.g.
    ``start = L`` gives the baseline on the positions beyond a training
    length ``L``. It is a ceiling only for a model that sees each prefix as
    a set (one causal layer without positions), a reference line for deeper
    ones.
    """
    _causal_fits(int(length), int(offset), int(start))
    by_position = chance_accuracy_causal_by_position(length, offset)
    return float(np.mean(by_position[max(int(start), int(offset)) :]))  # from the first position with a target


# --------------------------------------------------------------------------
# The positional scheme that posenc does not have: x + w * PE
# --------------------------------------------------------------------------


@accepts(d_model=COUNT, base=BASE, per_channel=Bool(), init=Real())
class ScaledSinusoidalEncoding(nn.Module):
    """``x -> x + w * PE[:seq]``: a fixed sinusoidal table with a learned scale.

    ``w`` is one scalar (``per_channel=False``, 1 parameter) or one weight per
    channel (``per_channel=True``, ``d_model`` parameters), initialised to
    ``init``. The table itself comes from
    :class:`posenc.SinusoidalPositionalEncoding` and is never trained, so the
    module works at any length.
    """

    def __init__(self, d_model, base=10000.0, *, per_channel=False, init=1.0):
        super().__init__()
        self.sinusoidal = posenc.SinusoidalPositionalEncoding(d_model, base)
        self.d_model = self.sinusoidal.d_model
        self.per_channel = bool(per_channel)
        self.weight = nn.Parameter(torch.full((self.d_model if self.per_channel else 1,), float(init)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != self.d_model:
            refuse("x", f"a tensor of shape (batch, seq, {self.d_model})", x, function="ScaledSinusoidalEncoding")
        pe = self.sinusoidal.table(x.shape[1], x.dtype).to(device=x.device, dtype=x.dtype)
        return x + self.weight.to(x.dtype) * pe

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, per_channel={self.per_channel}"


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------


@accepts(d_model=COUNT, n_heads=COUNT, n_relative=Int(0))
class SelfAttention(nn.Module):
    """Multi-head self-attention, written out so that schemes can hook in.

    ``forward(x, causal=False, qk_transform=None, score_bias=None, relative_index=None)``:
    ``qk_transform(q, k)`` (if given) returns new queries and keys of shape
    ``(batch, heads, seq, d_head)`` (RoPE); ``score_bias`` (if given) is added
    to the scores, shape broadcastable to ``(batch, heads, seq, seq)`` (ALiBi,
    T5). With ``n_relative > 0`` the layer owns ``relative_keys``, a learned
    table of ``n_relative`` vectors of width ``d_head`` shared by its heads
    (Shaw et al.), and ``relative_index`` (an int64 tensor of shape
    ``(seq, seq)``) names the row whose vector is added to the key of each
    (query, key) pair: the score of query ``p`` and key ``s`` becomes
    ``q_p . (kappa_s + relative_keys[relative_index[p, s]]) / sqrt(d_head)``.
    The attention weights of the last call are kept in ``last_weights``.
    """

    def __init__(self, d_model: int, n_heads: int, *, n_relative: int = 0):
        super().__init__()
        if d_model % n_heads:
            refuse(
                "n_heads", message=f"d_model must be divisible by n_heads, got d_model={d_model}, n_heads={n_heads}."
            )
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        if n_relative:
            # std 1/sqrt(d_head): q . a starts at the scale of q . kappa
            self.relative_keys = nn.Parameter(torch.randn(n_relative, self.d_head) / math.sqrt(self.d_head))
        self.last_weights = None

    def forward(self, x, *, causal=False, qk_transform=None, score_bias=None, relative_index=None):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)
        if qk_transform is not None:
            q, k = qk_transform(q, k)
        if relative_index is None:
            scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)
        else:
            # q . a for every query and every row of the table, then each pair picks its row: (b, h, n, n)
            relative = (q @ self.relative_keys.T).gather(-1, relative_index.expand(b, self.n_heads, n, n))
            scores = (q @ k.transpose(-1, -2) + relative) / math.sqrt(self.d_head)
        if score_bias is not None:
            scores = scores + score_bias
        if causal:
            future = torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        weights = scores.softmax(dim=-1)
        self.last_weights = weights.detach()
        return self.out((weights @ v).transpose(1, 2).reshape(b, n, d))


@accepts(d_model=COUNT, n_heads=COUNT, d_ff=COUNT, n_relative=Int(0))
class Block(nn.Module):
    """Pre-norm Transformer block: ``x + attn(LN(x))``, then ``x + MLP(LN(x))``.

    ``n_relative``: the number of relative key vectors of its attention (Shaw et al.; 0: none).
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, *, n_relative: int = 0):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, n_heads, n_relative=n_relative)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x, **attention_kwargs):
        x = x + self.attn(self.norm1(x), **attention_kwargs)
        return x + self.mlp(self.norm2(x))


@accepts(
    vocab_size=COUNT,
    d_model=COUNT,
    scheme=OneOf(*SCHEMES),
    n_layers=COUNT,
    n_heads=COUNT,
    d_ff=Maybe(COUNT),
    max_len=Maybe(COUNT),
    causal=Bool(),
    per_channel=Bool(),
    base=BASE,
    rope_layers=Maybe(Items(Int(0), what="a list of block indices")),
    num_buckets=Maybe(Int(2, 4096)),
    max_distance=Maybe(COUNT),
    rope_parameters=Maybe(Dict(), what=ROPE_BLOCK),
)
class TinyTransformer(nn.Module):
    """Token embedding, a positional scheme, ``n_layers`` blocks, a linear read-out.

    ``forward(tokens)`` maps int64 tokens of shape ``(batch, seq)`` to logits
    of shape ``(batch, seq, vocab_size)``. ``scheme`` is one of
    :data:`SCHEMES`; ``"learned"`` needs ``max_len`` (the number of rows of
    its table, a hard limit on ``seq``); ``per_channel`` chooses the scalar or
    per-channel weight of ``"scaled_sinusoidal"``. Without positions and
    without the causal mask the model is permutation equivariant.

    ``"rope"`` rotates each head's queries and keys (``d_model / n_heads``
    must be even) at positions ``rope_scale * (0, 1, ..., seq-1)`` with
    frequencies from ``rope_base`` (default: ``base``); both are plain
    attributes that may be changed after training, e.g. ``rope_scale = L / n``
    for position interpolation. ``rope_parameters`` (``"rope"`` only, also a
    plain attribute) is a rope block as a model's config states it, e.g.
    ``{"rope_type": "linear", "factor": 4.0}``: when it is set, every layer
    rotates with the frequencies and attention factor that
    :func:`posenc.rope_parameters` gives for it (``rope_type`` defaults to
    ``"default"``, ``rope_theta`` to ``rope_base``; the length-dependent
    ``"dynamic"`` and ``"longrope"`` get ``seq_len`` from the input, as the
    library's models do on a whole sequence). ``None`` (the default) is plain
    RoPE with ``rope_base``. ``"alibi"`` adds ``posenc.alibi_bias`` for
    ``n_heads`` heads: ``-m_h (i - j)`` with the causal mask, ``-m_h |i - j|``
    without it. With ``"rope"``, ``rope_layers`` (indices of blocks, default all)
    chooses the blocks that rotate; the others see no positions at all (NoPE
    layers, interleaved with RoPE layers as some current models do).

    ``"t5"`` learns one number per bucket and head, ``t5_table`` of shape
    ``(num_buckets, n_heads)`` (default 32 buckets up to ``max_distance``
    128, T5's), shared by every layer as in T5, and adds
    ``posenc.t5_bias(t5_table, seq, ...)`` to the scores: causal buckets with
    the causal mask, bidirectional ones without it. ``"shaw"`` gives each
    layer a table of ``2 * max_distance + 1`` vectors of width
    ``d_model / n_heads``, shared by the layer's heads, for the relative
    positions ``-max_distance ... max_distance`` (``max_distance`` is
    required); each (query, key) pair adds its row of
    ``posenc.shaw_relative_positions`` to the key. With the causal mask the
    rows for keys ahead of the query are never used. Shaw et al. also add
    such vectors to the values; this model adds them to the keys only.
    """

    def __init__(
        self,
        vocab_size,
        d_model=32,
        *,
        scheme="sinusoidal",
        n_layers=1,
        n_heads=2,
        d_ff=None,
        max_len=None,
        causal=False,
        per_channel=False,
        base=10000.0,
        rope_layers=None,
        num_buckets=None,
        max_distance=None,
        rope_parameters=None,
    ):
        super().__init__()
        self.vocab_size, self.d_model = int(vocab_size), int(d_model)
        n_layers, n_heads = int(n_layers), int(n_heads)
        if self.d_model % n_heads:
            refuse(
                "n_heads", message=f"d_model must be divisible by n_heads, got d_model={d_model}, n_heads={n_heads}."
            )
        d_ff = 4 * self.d_model if d_ff is None else int(d_ff)
        if scheme == "rope" and (self.d_model // n_heads) % 2:
            refuse(
                "n_heads",
                message=f"scheme='rope' rotates channel pairs and needs an even head width "
                f"d_model / n_heads, got d_model={d_model}, n_heads={n_heads}.",
            )
        if scheme == "learned":
            if max_len is None:
                refuse("max_len", message="scheme='learned' needs max_len, the number of positions in its table.")
            max_len = int(max_len)
        self.scheme = scheme
        self.max_len = max_len
        self.causal = bool(causal)
        self.n_heads = n_heads
        self.rope_base = base
        self.rope_scale = 1.0
        self._rope_parameters = None
        self.rope_parameters = rope_parameters
        if rope_layers is None:
            rope_layers = range(n_layers)
        elif scheme != "rope":
            refuse("rope_layers", message=f"rope_layers is for scheme='rope', got scheme={scheme!r}.")
        rope_layers = tuple(sorted(set(rope_layers)))
        if any(not 0 <= i < n_layers for i in rope_layers):
            refuse("rope_layers", f"block indices in 0 ... {n_layers - 1}", rope_layers)
        self.rope_layers = rope_layers
        self.num_buckets, self.max_distance = _relative_settings(scheme, num_buckets, max_distance, self.causal)

        self.embed = nn.Embedding(self.vocab_size, self.d_model)
        if scheme in ("none", "rope", "alibi", "t5", "shaw"):
            self.position = nn.Identity()  # rope, alibi, t5 and shaw act inside attention
        elif scheme == "sinusoidal":
            self.position = posenc.SinusoidalPositionalEncoding(self.d_model, base)
        elif scheme == "learned":
            self.position = posenc.LearnedPositionalEmbedding(max_len, self.d_model)
        else:  # "scaled_sinusoidal"
            self.position = ScaledSinusoidalEncoding(self.d_model, base, per_channel=per_channel)
        n_relative = 2 * self.max_distance + 1 if scheme == "shaw" else 0
        self.blocks = nn.ModuleList(Block(self.d_model, n_heads, d_ff, n_relative=n_relative) for _ in range(n_layers))
        self.norm = nn.LayerNorm(self.d_model)
        self.head = nn.Linear(self.d_model, self.vocab_size)
        if scheme == "t5":
            # T5's initialisation of its relative_attention_bias: normal, std 1/sqrt(d_model)
            self.t5_table = nn.Parameter(torch.randn(self.num_buckets, n_heads) / math.sqrt(self.d_model))

    @property
    def rope_parameters(self):
        """The rope block every layer rotates with (a dict), or None for plain RoPE with ``rope_base``."""
        return self._rope_parameters

    @rope_parameters.setter
    def rope_parameters(self, block):
        if block is not None:
            if self.scheme != "rope":
                refuse("rope_parameters", message=f"rope_parameters is for scheme='rope', got scheme={self.scheme!r}.")
            if not hasattr(block, "keys"):
                refuse("rope_parameters", ROPE_BLOCK, block)
            block = dict(block)
            self._rope_frequencies(block, 1)  # posenc's checks of the block, now rather than at the first input
        self._rope_parameters = block

    def _rope_frequencies(self, block: dict, seq: int) -> tuple:
        """``(inv_freq, attention_factor)`` of a rope block for an input of ``seq`` positions."""
        params = dict(block)
        rope_type = params.pop("rope_type", "default")
        base = params.pop("rope_theta", self.rope_base)
        if rope_type in ("dynamic", "longrope"):
            params.setdefault("seq_len", seq)  # length-dependent rules: the whole input's length
        try:
            return posenc.rope_parameters(self.d_model // self.n_heads, base, rope_type, **params)
        except (TypeError, ValueError) as error:
            refuse("rope_parameters", message=f"rope_parameters {block} is not a rope block posenc knows: {error}")

    def attention_extras(self, seq: int) -> dict:
        """Keyword arguments for :class:`SelfAttention` (none for additive schemes)."""
        if self.scheme == "rope":
            positions = np.arange(seq) if self.rope_scale == 1 else self.rope_scale * np.arange(seq, dtype=np.float64)
            if self._rope_parameters is not None:
                inv_freq, factor = self._rope_frequencies(self._rope_parameters, seq)

                def rotate(q, k):
                    return tuple(
                        posenc.apply_rope(t, positions, inv_freq=inv_freq, attention_factor=factor) for t in (q, k)
                    )

                return {"qk_transform": rotate}
            base = self.rope_base

            def rotate(q, k):
                return posenc.apply_rope(q, positions, base), posenc.apply_rope(k, positions, base)

            return {"qk_transform": rotate}
        if self.scheme == "alibi":
            bias = posenc.alibi_bias(self.n_heads, seq, causal=self.causal)
            return {"score_bias": torch.from_numpy(bias).to(self.embed.weight.dtype)}
        if self.scheme == "t5":
            bias = posenc.t5_bias(
                self.t5_table,
                seq,
                bidirectional=not self.causal,
                num_buckets=self.num_buckets,
                max_distance=self.max_distance,
            )
            return {"score_bias": bias}  # a tensor that keeps the table's gradient
        if self.scheme == "shaw":
            index = posenc.shaw_relative_positions(seq, max_distance=self.max_distance)
            return {"relative_index": torch.from_numpy(index).to(self.embed.weight.device)}
        return {}

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2:
            refuse("tokens", "an int64 tensor of shape (batch, seq)", tokens, function="TinyTransformer")
        if tokens.dtype != torch.long:
            refuse("tokens", "a tensor of dtype torch.int64", tokens, function="TinyTransformer")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            refuse(
                "tokens",
                message=f"tokens must lie in 0 ... {self.vocab_size - 1}, got values in "
                f"{int(tokens.min())} ... {int(tokens.max())}.",
                function="TinyTransformer",
            )
        if self.scheme == "learned" and tokens.shape[1] > self.max_len:
            refuse(
                "tokens",
                message=f"tokens has seq={tokens.shape[1]} positions, which exceeds max_len="
                f"{self.max_len} of the learned table.",
                function="TinyTransformer",
            )
        x = self.position(self.embed(tokens))
        extras = self.attention_extras(tokens.shape[1])
        for index, block in enumerate(self.blocks):
            nope = self.scheme == "rope" and index not in self.rope_layers
            x = block(x, causal=self.causal, **({} if nope else extras))
        return self.head(self.norm(x))

    def extra_repr(self) -> str:
        extra = f", rope_base={self.rope_base:g}, rope_scale={self.rope_scale:g}" if self.scheme == "rope" else ""
        if self._rope_parameters is not None:
            extra += f", rope_parameters={self._rope_parameters}"
        if self.scheme == "t5":
            extra = f", num_buckets={self.num_buckets}, max_distance={self.max_distance}"
        elif self.scheme == "shaw":
            extra = f", max_distance={self.max_distance}"
        return f"scheme={self.scheme!r}, causal={self.causal}{extra}"


def _relative_settings(scheme, num_buckets, max_distance, causal):
    """(num_buckets, max_distance) of a t5 or shaw model, with T5's defaults; refuses them for other schemes."""
    if scheme not in ("t5", "shaw"):
        for name, value in (("num_buckets", num_buckets), ("max_distance", max_distance)):
            if value is not None:
                refuse(name, message=f"{name} is for scheme='t5' or 'shaw', got scheme={scheme!r}.")
        return None, None
    if scheme == "shaw":
        if num_buckets is not None:
            refuse("num_buckets", message="num_buckets is for scheme='t5', got scheme='shaw'.")
        if max_distance is None:
            refuse("max_distance", message="scheme='shaw' needs max_distance, the offset at which it clips.")
        return None, int(max_distance)
    num_buckets = 32 if num_buckets is None else int(num_buckets)
    max_distance = 128 if max_distance is None else int(max_distance)
    try:  # posenc's own check of the two, which depends on the direction
        posenc.t5_relative_position_bucket(
            0, bidirectional=not causal, num_buckets=num_buckets, max_distance=max_distance
        )
    except ValueError as error:
        refuse("num_buckets" if "num_buckets" in str(error) else "max_distance", message=str(error))
    return num_buckets, max_distance


# --------------------------------------------------------------------------
# Training and evaluation
# --------------------------------------------------------------------------

MODEL = InstanceOf(TinyTransformer, "a TinyTransformer")


@accepts(model=MODEL, length=COUNT, offset=COUNT, steps=COUNT, batch_size=COUNT, lr=Real(above=0), seed=SEED)
def train(model, *, length, offset=1, steps=200, batch_size=32, lr=1e-2, seed=0):
    """Train ``model`` on offset copy at one ``length`` with Adam; return the losses.

    Batch ``s`` is ``offset_copy_batch(..., seed=seed * 100_003 + s)``, so a
    run is reproducible given ``torch.manual_seed`` before building the model.
    Plain Adam (no weight decay): parameters that get no gradient, such as the
    rows of a learned table beyond ``length``, keep their initial values.

    On a trained model it fine-tunes: a fresh optimiser, the model's weights
    and its positional settings (``rope_scale``, ``rope_parameters``) as they
    are. It trains also where the caller turned gradients off
    (``torch.set_grad_enabled(False)``, as an inference notebook does).
    """
    _task_fits(length, model.vocab_size, offset)
    _fits_table(model, length)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    with torch.enable_grad():
        for step in range(steps):
            tokens, targets = offset_copy_batch(
                batch_size, length, model.vocab_size, offset, seed=seed * 100_003 + step
            )
            logits = model(tokens)
            loss = F.cross_entropy(logits.reshape(-1, model.vocab_size), targets.reshape(-1), ignore_index=IGNORE)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(loss.item())
    model.eval()
    return losses


def _fits_table(model, length) -> None:
    if model.scheme == "learned" and length > model.max_len:
        refuse(
            "length", message=f"length={length} exceeds max_len={model.max_len}, the rows of the model's learned table."
        )


@accepts(model=MODEL, length=COUNT, offset=COUNT, n_seq=COUNT, seed=SEED)
@torch.no_grad()
def evaluate(model, *, length, offset=1, n_seq=256, seed=EVAL_SEED):
    """Accuracy of ``model`` on a fresh offset-copy batch of ``length``.

    The default ``seed`` is :data:`EVAL_SEED`, never used by :func:`train`
    (for training seeds below 10,000), so evaluation data is always fresh.
    Returns ``(accuracy, per_position)``: the share of correct predictions
    over all positions that have a target, and a float array of length
    ``length`` with the accuracy at each position (NaN where there is no target).
    """
    _task_fits(length, model.vocab_size, offset)
    _fits_table(model, length)
    model.eval()
    tokens, targets = offset_copy_batch(n_seq, length, model.vocab_size, offset, seed=seed)
    correct = (model(tokens).argmax(-1) == targets).float()
    valid = targets != IGNORE
    per_position = np.full(length, np.nan)
    per_position[offset:] = correct[:, offset:].mean(0).numpy()
    return correct[valid].mean().item(), per_position
