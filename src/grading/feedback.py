"""Feedback helpers: how answers are read (numbers, arrays) and how what is wrong is put in words."""

from __future__ import annotations

import inspect
import math
import numbers
import zlib

import numpy as np
import torch


def _short(exc, limit=160) -> str:
    text = str(exc).strip().splitlines()
    text = text[0] if text else ""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(x) -> str:
    """A short name for what the learner gave, for messages."""
    if x is None:
        return "None"
    if isinstance(x, str):
        return f"the string {x[:30]!r}"
    if isinstance(x, (np.ndarray, torch.Tensor)):
        kind = "numpy array" if isinstance(x, np.ndarray) else "torch tensor"
        return f"a {kind} of shape {tuple(x.shape)}"
    if isinstance(x, (int, float, complex, np.generic)):
        return f"the {type(x).__name__} {x!r}"
    if isinstance(x, type):
        return f"the class {x.__name__}"
    if inspect.isroutine(x):
        return "a function"
    name = type(x).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


def _index(idx) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def _close(a, b, rtol, atol=0.0) -> bool:
    return abs(a - b) <= atol + rtol * abs(b)


def _seed(qid: str) -> int:
    return zlib.crc32(qid.encode())


def _as_number(answer):
    """(float, None) or (None, message)."""
    if isinstance(answer, torch.Tensor):
        if answer.numel() != 1:
            return None, f"expected one number, got {_describe(answer)}."
        answer = answer.item()
    if isinstance(answer, np.ndarray):
        if answer.size != 1:
            return None, f"expected one number, got {_describe(answer)}."
        answer = answer.reshape(()).item()
    if isinstance(answer, (bool, np.bool_)):
        return None, f"expected a number, got the bool {answer}."
    if isinstance(answer, str):
        return None, f"expected a number, got {_describe(answer)}: write the number without quotes."
    if isinstance(answer, (list, tuple)):
        return None, f"expected one number, got a {type(answer).__name__} of {len(answer)} items."
    if isinstance(answer, numbers.Complex) and not isinstance(answer, numbers.Real):
        return None, "expected a real number, got a complex one."
    if not isinstance(answer, numbers.Real):
        return None, f"expected a number, got {_describe(answer)}."
    x = float(answer)
    if math.isnan(x):
        return None, "your answer is NaN (not a number): check the computation that produced it."
    if math.isinf(x):
        return None, "your answer is infinite: check for a division by zero or an overflow."
    return x, None


def _how_far(x, want) -> str:
    if want != 0 and x != 0 and (x > 0) != (want > 0):
        return "the sign is wrong."
    if want == 0 or x == 0:
        return "too high." if x > want else "too low."
    ratio = x / want
    if _close(ratio, 2.0, 0.01) or _close(ratio, 0.5, 0.01):
        return f"off by a factor of 2 (too {'high' if ratio > 1 else 'low'})."
    if 0 < abs(want) != 1 and _close(math.log(abs(x)) / math.log(abs(want)), 2.0, 0.01):
        return "that is the square of the right value: is the exponent doubled (2·(2i)/d instead of 2i/d)?"
    size = f"about {ratio:.3g} times the right value" if ratio > 1.5 or ratio < 0.67 else f"by {abs(ratio - 1):.1%}"
    return f"too {'high' if x > want else 'low'} ({size})."


def _as_array(answer):
    """(float64 array, None) or (None, message)."""
    if answer is None or isinstance(answer, (str, bytes, bool, dict)) or callable(answer):
        return None, f"expected an array of numbers, got {_describe(answer)}."
    if isinstance(answer, torch.Tensor):
        answer = answer.detach().cpu().numpy()
    try:
        arr = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        return None, f"could not read your answer as an array of numbers ({_short(exc)})."
    return arr, None


def _same(a, b) -> bool:
    """Is ``a`` (what the learner got) still equal to ``b`` (a pristine copy)?"""
    if isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)
    if isinstance(b, (tuple, list)):
        return isinstance(a, (tuple, list)) and len(a) == len(b) and all(map(_same, a, b))
    try:
        return bool(a == b)
    except Exception:
        return False


def _safely(test, *args) -> bool:
    try:
        return bool(test(*args))
    except Exception:
        return False


def _verify_array(out, want, *, dtype=None, atol=1e-8):
    """Message for the first problem of ``out`` against ``want`` (numpy), or None."""
    if isinstance(out, torch.Tensor):
        return "your function returned a torch tensor; return a numpy array."
    if not isinstance(out, np.ndarray):
        return f"your function returned {_describe(out)}; return a numpy array."
    if out.shape != want.shape:
        return f"expected shape {want.shape}, got {out.shape}."
    if out.dtype.kind not in "fiu":
        return f"expected an array of real numbers, got dtype {out.dtype}."
    if dtype is not None and out.dtype != dtype:
        return f"expected dtype {np.dtype(dtype)}, got {out.dtype}."
    if np.isnan(out).any():
        return f"element {_index(np.argwhere(np.isnan(out))[0])} is NaN."
    err = np.abs(out.astype(np.float64) - want)
    bad = err > atol
    if not bad.any():
        return None
    i = tuple(np.argwhere(bad)[0])
    msg = f"element {_index(i)} is {out[i]:.8g}, expected {want[i]:.8g}"
    if dtype is None and err.max() < 1e-5 and atol < 1e-6:
        msg += " (your values agree only to float32 precision: compute in float64)"
    return msg + "."


def _reference_verifier(reference, **options):
    return lambda out, case: _verify_array(out, np.asarray(reference(*case.args), dtype=np.float64), **options)


def _like(model, atol=1e-6):
    """A mistake predicate: the learner's output equals what the buggy ``model`` gives."""
    def test(out, case):
        other = np.asarray(model(*case.args), dtype=np.float64)
        return isinstance(out, np.ndarray) and out.shape == other.shape and np.allclose(out, other, atol=atol)
    return test
