"""What ``posenc``'s functions accept, and the checks a declaration alone cannot state.

Each public function of ``posenc`` declares its arguments with
``posenc_course.arguments.accepts``, the course's one way of checking
arguments, using the specs below for the arguments that recur (``d_model``,
``base``, ``layout``, ...). What depends on several arguments or on an array's
contents (a NaN among the positions, ``x``'s last dimension against
``d_model``) is checked here, by functions the formulas call in one line; they
also hand the argument back in the form the engine takes (an int64 or float64
array of positions, say).

Every bad argument raises the one-line ``ArgumentError`` that names the
function, the argument and what is allowed, as everywhere in the course.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch

from posenc_course import arguments
from posenc_course.arguments import Anything, Array, Bool, Int, Maybe, OneOf, Real, Spec

LAYOUTS = ("interleaved", "concatenated")
DTYPES = (np.float16, np.float32, np.float64)


class _Dtype(Spec):
    """A floating-point dtype of numpy's, given as a type, a dtype or its name."""

    text = "one of float16, float32, float64"

    def ok(self, value) -> bool:
        try:
            return np.dtype(value) in [np.dtype(t) for t in DTYPES]
        except (TypeError, ValueError):
            return False


# the arguments that recur, declared once
D_MODEL = Int(1)
BASE = Real(above=1, what="a finite number > 1")
LAYOUT = OneOf(*LAYOUTS)
DTYPE = _Dtype()
COUNT = Int(1)
LENGTH_OR_NONE = Maybe(COUNT, what="an integer >= 1 (or None: the same as q_len)")
POSITIONS = Anything("a count n >= 0 or a 1-D list of finite positions")
ROPE_INPUT = Anything("a numpy array or torch tensor of shape (..., seq, d)")
ROPE_POSITIONS = Anything("None or a 1-D list of finite positions, one per row of x")
INV_FREQ = Anything("None or a 1-D array of frequencies >= 0, one per rotated pair")
MATRIX = Array(2)
BIAS_TABLE = Anything("a (num_buckets, n_heads) array of real numbers")


def refuse(argument: str, allowed: str | None = None, value=None, *, message: str | None = None, function=None):
    """Raise the one-line ``ArgumentError`` for ``argument`` ("must be ``allowed``, not ``value``", or ``message``).

    Under torch.compile the same words come as a ``ValueError``: Dynamo cannot
    build an exception class with an ``__init__`` of its own, and would report
    that instead of the learner's mistake.
    """
    if torch.compiler.is_compiling():
        text = message or f"{argument} must be {allowed}."
        raise ValueError(f"{function}: {text}" if function else text)
    arguments.refuse(argument, allowed, value, message=message, function=function)


def _number_array(name: str, value, kinds: str, allowed: str) -> np.ndarray:
    """``value`` (a torch tensor, numpy array, nested list or number) as a numpy array of dtype kind in ``kinds``."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    try:
        arr = np.asarray(value)
    except Exception:  # ragged lists and the like
        refuse(name, allowed, value)
    if arr.dtype == bool or arr.dtype.kind not in kinds:
        refuse(name, allowed, value)
    return arr


def positions(value) -> np.ndarray:
    """Positions as a 1-D int64 array (a count ``n`` means ``0 ... n-1``) or a float64 one (fractional ones)."""
    if isinstance(value, bool):
        refuse("positions", POSITIONS.text, value)
    if isinstance(value, numbers.Integral):
        if value < 0:
            refuse("positions", POSITIONS.text, value)
        return np.arange(int(value), dtype=np.int64)
    arr = _number_array("positions", value, "iuf", POSITIONS.text)
    if arr.ndim != 1:
        refuse("positions", "a 1-D list of positions (one per row)", value)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            refuse("positions", message="positions must be finite: found NaN or infinity.")
        return arr.astype(np.float64)
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        # as int64 they would wrap around to negative positions: a silently wrong table
        refuse(
            "positions",
            message=f"integer positions must be below 2**63, not {int(arr.max())} (pass floats for larger "
            "positions; accuracy is documented for |p| < 2**24).",
        )
    return arr.astype(np.int64)


def module_input(x, d_model: int, module: str) -> None:
    """``x`` as a module's ``forward`` takes it: a floating torch tensor of shape (batch, seq, d_model)."""
    if not isinstance(x, torch.Tensor):
        refuse("x", "a torch tensor of shape (batch, seq, d_model)", x, function=module)
    if x.dim() != 3:
        refuse(
            "x",
            message=f"x must have shape (batch, seq, d_model) with 3 dimensions, not shape {tuple(x.shape)}.",
            function=module,
        )
    if x.shape[-1] != d_model:
        refuse(
            "x",
            message=f"x must have last dimension d_model={d_model}, the module's width, not {x.shape[-1]} "
            f"(x has shape {tuple(x.shape)}).",
            function=module,
        )
    if not x.is_floating_point():
        refuse("x", "a floating-point tensor", x, function=module)


def rope_input(x):
    """``(x, is_torch, seq, d)``: ``x`` a torch tensor, or a float numpy array, of shape (..., seq, d)."""
    is_torch = isinstance(x, torch.Tensor)
    if not is_torch:
        x = _number_array("x", x, "iuf", ROPE_INPUT.text)
        if x.dtype.kind != "f":
            x = x.astype(np.float64)
    if x.ndim < 2:
        refuse("x", message=f"x must have shape (..., seq, d) with at least 2 dimensions, not shape {tuple(x.shape)}.")
    return x, is_torch, x.shape[-2], int(x.shape[-1])  # int(): under torch.jit.trace a size is a tensor


def even_width(d: int, why: str) -> None:
    """RoPE's last dimension ``d`` must be even: ``why`` says what a pair is."""
    if d % 2:
        refuse("x", message=f"x must have an even last dimension d, not {d}: {why}.")


def rope_positions(value, seq: int) -> np.ndarray:
    """RoPE's ``positions`` (default ``0 ... seq-1``): one position per row of ``x``."""
    pos = positions(seq if value is None else value)
    if pos.shape[0] != seq:
        refuse("positions", message=f"positions has {pos.shape[0]} entries but x has seq={seq} rows: one per row.")
    return pos


def inv_freq(value) -> np.ndarray:
    """``inv_freq`` as a float64 array: a non-empty 1-D list of finite frequencies >= 0."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().double().numpy()
    try:
        inv = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        refuse("inv_freq", INV_FREQ.text, value)
    if inv.ndim != 1 or inv.shape[0] < 1 or not np.all(np.isfinite(inv)) or np.any(inv < 0):
        refuse("inv_freq", "a non-empty 1-D array of finite frequencies >= 0 (radians per position)", value)
    return inv


def rope_keywords(d: int, inv, rotary_dim) -> tuple:
    """``(rotary_dim, inv_freq or None)`` checked against a last dimension ``d``."""
    inv = None if inv is None else inv_freq(inv)
    if rotary_dim is None:
        rotary_dim = d if inv is None else 2 * inv.shape[0]
    if rotary_dim % 2 or not 2 <= rotary_dim <= d:
        refuse(
            "rotary_dim",
            f"an even integer with 2 <= rotary_dim <= d = {d} (inv_freq has one entry per rotated pair)",
            rotary_dim,
        )
    if inv is not None and inv.shape[0] != rotary_dim // 2:
        refuse(
            "inv_freq",
            message=f"inv_freq must have rotary_dim / 2 = {rotary_dim // 2} entries (one per rotated pair), "
            f"not {inv.shape[0]}.",
        )
    return int(rotary_dim), inv


def positive(name: str, value, *, at_least=None, integer: bool = False):
    """A parameter of a RoPE config: a float > 0 (or >= ``at_least``), an int >= 1 with ``integer``."""
    spec = Int(at_least or 1) if integer else Real(at_least) if at_least is not None else Real(above=0)
    if not spec.ok(value):
        refuse(name, spec.text, value)
    return int(value) if integer else float(value)


# Bounds on T5's settings, far beyond any model's (32 buckets up to 128): they keep the bucket starts' integer
# powers small, and max_distance exact in int64 and in the float estimate of each bucket's start.
T5_MAX_BUCKETS = 4096
T5_MAX_DISTANCE = 2**40


# T5's bucket settings, as t5_relative_position_bucket and t5_bias take them
T5_SETTINGS = dict(
    bidirectional=Bool(),
    num_buckets=Int(2, T5_MAX_BUCKETS, what="an integer from 4 to 4096 (from 2 when bidirectional=False)"),
    max_distance=Int(
        2,
        T5_MAX_DISTANCE,
        what="an integer from num_buckets // 4 + 1 to 2**40 (from num_buckets // 2 + 1 when bidirectional=False)",
    ),
)


def t5_buckets(bidirectional, num_buckets, max_distance) -> tuple:
    """``(n, e, max_distance)``: buckets per direction, exact buckets among them, and the checked distance."""
    least = 4 if bidirectional else 2  # so that each direction has at least one exact bucket
    if num_buckets < least:
        why = "half for each direction, half of those exact" if bidirectional else "half of them exact"
        refuse(
            "num_buckets",
            f"an integer from {least} to {T5_MAX_BUCKETS} when bidirectional={bool(bidirectional)} ({why})",
            num_buckets,
        )
    n = int(num_buckets) // 2 if bidirectional else int(num_buckets)
    exact = n // 2
    if max_distance <= exact:
        refuse(
            "max_distance",
            f"an integer from {exact + 1} to 2**40: more than the {exact} exact buckets (the logarithmic "
            "buckets span the distances from there to max_distance)",
            max_distance,
        )
    return n, exact, int(max_distance)


def offset(value) -> np.ndarray:
    """Offsets as an int64 array (any shape)."""
    arr = _number_array("offset", value, "iu", "an integer or an array of integers")
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        refuse("offset", message=f"offset must be below 2**63, not {int(arr.max())}.")
    return arr.astype(np.int64)


def bias_table(table, num_buckets: int):
    """A learned table of shape (num_buckets, n_heads): a floating torch tensor, or a float numpy array."""
    if isinstance(table, torch.Tensor):
        if not table.is_floating_point():
            refuse("table", "a tensor that holds floating-point numbers", table)
    else:
        table = _number_array("table", table, "iuf", f"an array of real numbers of shape ({num_buckets}, n_heads)")
        if table.dtype.kind != "f":
            table = table.astype(np.float64)
    if table.ndim != 2 or table.shape[0] != num_buckets or table.shape[1] < 1:
        shape = f"({num_buckets}, n_heads >= 1)"
        refuse("table", message=f"table must have shape (num_buckets, n_heads) = {shape}, not {tuple(table.shape)}.")
    return table


def matrix(name: str, value, rows: int | None = None) -> np.ndarray:
    """A 2-D float64 array; with ``rows``, one that has that many rows (a weight matrix that multiplies ``x``)."""
    allowed = "a 2-D array of real numbers" + (f" of shape ({rows}, d), matching x's last dimension" if rows else "")
    arr = _number_array(name, value, "iuf", allowed).astype(np.float64)
    if arr.ndim != 2 or arr.size == 0 or (rows is not None and arr.shape[0] != rows):
        refuse(name, allowed, value)
    return arr


def finite(name: str, arr: np.ndarray) -> None:
    if not np.all(np.isfinite(arr)):
        refuse(name, message=f"{name} must hold finite numbers: found NaN or infinity.")
