"""Every public function and class of posenc called with bad arguments: the course's one-line error.

As tests/test_arguments.py does for posenc_course: the callables are found by themselves (``posenc.__all__``), so
a new one is covered the day it is added. It needs an entry in GOOD (arguments that work); then each of its
arguments is replaced in turn by values a learner might pass by mistake. Each call must either work or raise the
one-line ArgumentError that names the function and the argument; no other exception may escape.
"""

from __future__ import annotations

import inspect
import traceback
from pathlib import Path

import numpy as np
import pytest
import torch

import posenc
from posenc_course import arguments
from posenc_course.arguments import ArgumentError
from tests.support.argument_sweep import outcome

SRC = Path(posenc.__file__).parents[1]

GOOD = {  # arguments that work
    "frequencies": lambda: dict(d_model=8, base=100.0),
    "wavelengths": lambda: dict(d_model=8, base=100.0),
    "sinusoidal": lambda: dict(positions=4, d_model=8, base=100.0, layout="concatenated", dtype=np.float32),
    "layout_permutation": lambda: dict(d_model=7),
    "pair_regimes": lambda: dict(d_model=8, length=100, base=100.0, threshold=0.5),
    "rotation": lambda: dict(k=3, d_model=8, base=100.0, layout="concatenated"),
    "SinusoidalPositionalEncoding": lambda: dict(d_model=8, base=100.0, layout="interleaved", dropout=0.1),
    "LearnedPositionalEmbedding": lambda: dict(max_len=16, d_model=8),
    "apply_rope": lambda: dict(
        x=np.ones((3, 8)),
        positions=[0, 1, 2],
        base=100.0,
        layout="concatenated",
        inv_freq=[1.0, 0.1],
        rotary_dim=4,
        attention_factor=1.5,
    ),
    "apply_rope_complex": lambda: dict(x=torch.ones(2, 3, 8), positions=[0, 1, 2], base=100.0, layout="interleaved"),
    "apply_rope_axes": lambda: dict(
        x=np.ones((3, 8)),
        positions=[[0, 0], [0, 1], [1, 0]],
        sections=[1, 1],
        base=100.0,
        inv_freq=None,
        layout="concatenated",
        attention_factor=1.0,
    ),
    "ROPE_TYPES": None,  # a tuple, not a callable
    "rope_parameters": lambda: dict(head_dim=16, base=100.0, rope_type="linear", factor=2.0),
    "rotary_dim": lambda: dict(head_dim=16, partial_rotary_factor=0.5),
    "yarn_ramp": lambda: dict(
        head_dim=16,
        base=100.0,
        original_max_position_embeddings=64,
        beta_fast=16.0,
        beta_slow=1.0,
        truncate=False,
        partial_rotary_factor=1.0,
    ),
    "axial_frequencies": lambda: dict(head_dim=16, n_axes=2, base=100.0),
    "resize_grid": lambda: dict(grid=np.ones((2, 2, 3)), height=3, width=4),
    "alibi_slopes": lambda: dict(n_heads=6),
    "alibi_bias": lambda: dict(n_heads=2, q_len=3, k_len=5, causal=False),
    "t5_relative_position_bucket": lambda: dict(offset=[-3, 0, 40], bidirectional=True, num_buckets=8, max_distance=16),
    "t5_bias": lambda: dict(
        table=np.ones((8, 2)), q_len=3, k_len=4, bidirectional=False, num_buckets=8, max_distance=16
    ),
    "shaw_relative_positions": lambda: dict(q_len=3, k_len=4, max_distance=2),
    "attention_weights": lambda: dict(
        x=np.ones((3, 4)), w_q=np.ones((4, 2)), w_k=np.ones((4, 2)), bias=np.zeros((3, 3)), causal=True
    ),
    "self_attention": lambda: dict(
        x=np.ones((3, 4)),
        w_q=np.ones((4, 2)),
        w_k=np.ones((4, 2)),
        w_v=np.ones((4, 5)),
        bias=None,
        causal=False,
    ),
}
CALLABLES = sorted(name for name, good in GOOD.items() if good is not None)

# What a learner passes by mistake: None, a word, a fraction where a count goes, something of no use at all,
# an empty list, a negative number
BAD = [None, "no such id!", 3.5, object(), [], -1]


def test_every_public_name_is_swept_and_declares_its_arguments():
    assert set(posenc.__all__) == set(GOOD), {
        "not in GOOD": sorted(set(posenc.__all__) - set(GOOD)),
        "no longer public": sorted(set(GOOD) - set(posenc.__all__)),
    }
    for name in CALLABLES:
        obj = getattr(posenc, name)
        assert hasattr(obj.__init__ if inspect.isclass(obj) else obj, "__accepts__"), name


@pytest.mark.parametrize("name", CALLABLES)
def test_bad_arguments_get_one_line_naming_them(name):
    obj = getattr(posenc, name)
    params = [p for p in inspect.signature(obj).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert outcome(lambda: obj(**GOOD[name]()), None, name) is None, "the GOOD arguments must work"
    problems = []
    required = [p.name for p in params if p.default is p.empty]
    problem = outcome(lambda: obj(), required[0] if required else None, name)
    if problem:
        problems.append(f"{name}(): {problem}")
    for p in params:
        for bad in BAD:
            kwargs = {**GOOD[name](), p.name: bad}
            problem = outcome(lambda: obj(**kwargs), p.name, name)  # noqa: B023 - called at once
            if problem:
                problems.append(f"{name}({p.name}={arguments.shown(bad)}): {problem}")
    assert not problems, "\n".join(problems)


def test_the_traceback_ends_at_the_call():
    """Outside IPython too, nothing of posenc's code shows below the learner's call but the checking wrapper."""
    for call in (lambda: posenc.sinusoidal(5, "x"), lambda: posenc.sinusoidal([[1.0]], 8)):
        with pytest.raises(ArgumentError) as info:
            call()
        frames = [f.name for f in traceback.extract_tb(info.tb)]
        assert frames[-1] == "checked", frames


def test_a_config_parameter_is_told_as_rope_parameters():
    """A rule's helpers (rotary_dim, yarn_ramp) check the config's parameters: the learner called rope_parameters."""
    with pytest.raises(ArgumentError, match=r"^rope_parameters: partial_rotary_factor must be a number in \(0, 1\]"):
        posenc.rope_parameters(64, rope_type="linear", factor=2.0, partial_rotary_factor=2.0)
    with pytest.raises(ArgumentError, match=r"^rope_parameters: beta_fast must be a number > 0, not -1"):
        posenc.rope_parameters(64, rope_type="yarn", factor=2.0, original_max_position_embeddings=64, beta_fast=-1)
    with pytest.raises(ArgumentError, match=r"^rope_parameters: rope_type 'linear' takes no parameter \['beta'\]"):
        posenc.rope_parameters(64, rope_type="linear", factor=2.0, beta=1)


def test_the_private_copy_raises_the_same_error_class():
    """The grader's copy of posenc checks with the same machinery: its errors are the course's ArgumentError."""
    from grading.reference import posenc as private

    with pytest.raises(ArgumentError, match="^frequencies: d_model"):
        private.frequencies(0)
