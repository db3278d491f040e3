"""posenc_course.arguments, and every public callable of posenc_course called with bad arguments.

The sweep at the bottom finds the public callables by itself (a module's ``__all__``, or the
public names it defines), so a new function or class is covered the day it is added: it needs
an entry in GOOD (arguments that work), and then each of its arguments is replaced in turn by
values a learner might pass by mistake. Each call must either work or raise the one-line
ArgumentError that names the argument; no other exception may escape.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import pickle
import pkgutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import matplotlib as mpl
import matplotlib.figure
import numpy as np
import pytest
import torch
from torch import nn

import posenc
import posenc_course
from posenc_course import arguments, bug_zoo, choices, explorers, quizzes, toy_transformer as tt
from posenc_course.arguments import (
    ArgumentError,
    Bool,
    Dict,
    Either,
    Function,
    InstanceOf,
    Int,
    Items,
    Maybe,
    OneOf,
    Real,
    Text,
    accepts,
    refuse,
)
from tests.support.argument_sweep import outcome

SRC = Path(posenc_course.__file__).parents[1]


# --------------------------------------------------------------------------
# The error
# --------------------------------------------------------------------------


def test_the_error_is_both_value_and_type_error_and_pickles():
    error = ArgumentError("d_model must be an integer >= 1, not 'x'.", "d_model", "f")
    assert isinstance(error, ValueError) and isinstance(error, TypeError)
    assert str(error) == "f: d_model must be an integer >= 1, not 'x'."
    again = pickle.loads(pickle.dumps(error))
    assert (str(again), again.argument, again.function) == (str(error), "d_model", "f")
    assert error._render_traceback_() == ["ArgumentError: f: d_model must be an integer >= 1, not 'x'."]


def test_sentences_that_start_with_a_verb_follow_the_name():
    assert str(ArgumentError("needs d_model: an integer.", "d_model", "f")) == "f needs d_model: an integer."
    assert str(ArgumentError("takes no arguments.", None, "f")) == "f takes no arguments."


@pytest.mark.parametrize(
    "value, text",
    [
        ("x", "'x'"),
        (None, "None"),
        (3.5, "3.5"),
        ([1, 2], "[1, 2]"),
        ("y" * 100, "'" + "y" * 37 + "...'"),
        (list(range(100)), "a list of 100 items"),
        (np.zeros((3, 4)), "a float64 array of shape (3, 4)"),
        (torch.zeros(2, 3, dtype=torch.float16), "a torch.float16 tensor of shape (2, 3)"),
        (object(), "an object"),
    ],
)
def test_values_are_shown_short_and_on_one_line(value, text):
    assert arguments.shown(value) == text


# --------------------------------------------------------------------------
# Specs
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, good, bad, text",
    [
        (Int(1, 4096), [1, 4096, np.int64(7)], [0, 4097, 2.0, True, "3", None], "an integer from 1 to 4,096"),
        (Int(2, even=True), [2, 10], [3, 0], "an even integer >= 2"),
        (Real(above=1), [1.5, 2, np.float32(3)], [1, 0.5, float("inf"), float("nan"), True, "2"], "a number > 1"),
        (Real(0, 7.2), [0, 7.2], [-0.1, 7.3], "a number from 0 to 7.2"),
        (Bool(), [True, np.bool_(False)], [1, None, "yes"], "True or False"),
        (Text(r"[a-z]+"), ["abc"], ["", "a b", 1], "a non-empty string"),
        (OneOf("a", "b"), ["a"], ["c", None, np.array(["a"])], "one of 'a', 'b'"),
        (OneOf(1, 2), [1], [True, 1.0], "one of 1, 2"),
        (Either(Int(0, 3), OneOf("x")), [0, "x"], [4, "y"], "an integer from 0 to 3 or one of 'x'"),
        (Maybe(Int(1)), [None, 1], [0], "None or an integer >= 1"),
        (InstanceOf(nn.Module), [nn.Linear(1, 1)], [None], "a Module"),
        (Function(), [len], [None, 1], "a function"),
        (Items(Int(0), min_len=1), [[0], (1, 2), range(3)], [[], "ab", [-1], iter([1]), 5], None),
        (Dict(Function(), min_len=1), [{"a": len}], [{}, {"a": 1}, [len]], None),
        (
            arguments.Array(2),
            [[[1.0]], np.zeros((2, 2)), torch.zeros(2, 2, dtype=torch.bfloat16)],
            [np.zeros(3), np.zeros((0, 2)), [[1], [1, 2]], [["a"]], None],
            "a 2-D array of real numbers",
        ),
        (
            arguments.Tensor(3, floating=True),
            [torch.zeros(1, 2, 3)],
            [torch.zeros(1, 2), torch.zeros(1, 1, 1, dtype=int), np.zeros((1, 2, 3))],
            None,
        ),
        (
            arguments.Positions(),
            [0, 5, [0.5, -3], np.arange(4), torch.arange(3)],
            [-1, [[1]], [np.nan], "3", None, 2.5],
            "a count n >= 0 or a 1-D list of finite positions",
        ),
    ],
)
def test_specs_accept_and_refuse(spec, good, bad, text):
    assert all(spec.ok(value) for value in good), [value for value in good if not spec.ok(value)]
    assert not any(spec.ok(value) for value in bad), [value for value in bad if spec.ok(value)]
    if text is not None:
        assert spec.text == text


# --------------------------------------------------------------------------
# The decorator
# --------------------------------------------------------------------------


@accepts(d_model=Int(1, 4096), base=Real(above=1), layout=OneOf("interleaved", "concatenated"))
def example(d_model: int, base: float = 10000.0, *, layout: str = "interleaved") -> str:
    """An example's docstring."""
    if layout == "concatenated" and d_model % 2:
        refuse("d_model", "an even integer for the concatenated layout", d_model)
    return f"{d_model} {base} {layout}"


@accepts(width=Int(1))
class Example(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.linear = nn.Linear(width, width)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: example(), "example needs d_model: an integer from 1 to 4,096."),
        (lambda: example("x"), "example: d_model must be an integer from 1 to 4,096, not 'x'."),
        (lambda: example(8, 1), "example: base must be a number > 1, not 1."),
        (
            lambda: example(8, layout="sideways"),
            "example: layout must be one of 'interleaved', 'concatenated', not 'sideways'.",
        ),
        (
            lambda: example(7, layout="concatenated"),
            "example: d_model must be an even integer for the concatenated layout, not 7.",
        ),
        (
            lambda: example(8, 2.0, "interleaved"),
            "example takes at most 2 positional arguments (d_model, base), not 3; give layout by name.",
        ),
        (
            lambda: example(8, colour="red"),
            "example has no argument 'colour'; its arguments are d_model, base, layout.",
        ),
        (lambda: example(8, d_model=8), "example got d_model twice, by position and by name."),
        (lambda: Example(), "Example needs width: an integer >= 1."),
        (lambda: Example(0), "Example: width must be an integer >= 1, not 0."),
    ],
)
def test_bad_calls_get_one_line(call, message):
    with pytest.raises(ArgumentError) as info:
        call()
    assert str(info.value) == message
    # the traceback starts at the call: nothing of the course's code below it but the checking wrapper
    frames = [f.name for f in __import__("traceback").extract_tb(info.tb)]
    assert frames[-1] == "checked", frames


def test_a_checked_function_keeps_its_name_signature_and_help():
    assert example(8) == "8 10000.0 interleaved"
    assert example.__name__ == "example" and example.__doc__ == "An example's docstring."
    assert (
        str(inspect.signature(example)) == "(d_model: 'int', base: 'float' = 10000.0, *, layout: 'str' = "
        "'interleaved') -> 'str'"
    )
    assert list(inspect.signature(Example).parameters) == ["width"]
    assert example.__accepts__["d_model"].text == "an integer from 1 to 4,096"


def test_a_checked_class_stays_a_class_that_pickles_and_copies():
    module = Example(3)
    assert isinstance(module, nn.Module) and Example.__name__ == "Example"
    assert pickle.loads(pickle.dumps(module)).linear.in_features == 3
    assert copy.deepcopy(module).linear.out_features == 3


def test_specs_must_match_the_parameters_and_defaults():
    with pytest.raises(TypeError, match=r"specs \['b'\] do not match the parameters \['a'\]"):
        accepts(b=Int())(lambda a: a)
    with pytest.raises(TypeError, match="the default a=0 is not an integer >= 1"):
        accepts(a=Int(1))(lambda a=0: a)


def test_an_inner_function_error_is_told_as_the_outer_call():
    @accepts(d_model=Int(1))
    def outer(d_model):
        return example(d_model, layout="concatenated")

    with pytest.raises(ArgumentError, match=r"^outer: d_model must be an even integer"):
        outer(7)


def test_ipython_shows_one_line_and_no_traceback():
    """What a learner sees in Jupyter: IPython prints the line _render_traceback_ gives, no frames (the course's
    helpers, and posenc's functions, a module's constructor and its forward)."""
    script = textwrap.dedent("""
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_cell("from posenc_course.quizzes import check_yourself")
        result = shell.run_cell("check_yourself('99')")
        assert type(result.error_in_exec).__name__ == "ArgumentError"
        shell.run_cell("from posenc_course.toy_transformer import train\\ntrain()")
        shell.run_cell("import posenc, torch")
        shell.run_cell("posenc.sinusoidal(5, 'x')")
        shell.run_cell("posenc.SinusoidalPositionalEncoding(8, dropout=1)")
        shell.run_cell("posenc.SinusoidalPositionalEncoding(8)(torch.zeros(2, 3, 9))")
    """)
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(SRC)},
        check=True,
    ).stdout
    assert out.splitlines() == [
        f"ArgumentError: check_yourself: chapter must be one of {', '.join(map(repr, quizzes.QUIZZES))} (the chapters "
        "with a quiz), not '99'.",
        "ArgumentError: train needs model: a TinyTransformer.",
        "ArgumentError: sinusoidal: d_model must be an integer >= 1, not 'x'.",
        "ArgumentError: SinusoidalPositionalEncoding: dropout must be a probability in [0, 1), not 1.",
        "ArgumentError: SinusoidalPositionalEncoding: x must have last dimension d_model=8, the module's width, "
        "not 9 (x has shape (2, 3, 9)).",
    ]


@pytest.mark.slow
def test_a_notebook_cell_shows_one_line(tmp_path):
    """Through a real kernel (nbclient): the error output's traceback is the one line."""
    import nbclient
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("from posenc_course.explorers import FormulaExplorer\nFormulaExplorer(d_model='x')")
    ]
    nbclient.NotebookClient(
        nb, timeout=120, allow_errors=True, kernel_name="python3", resources={"metadata": {"path": str(SRC)}}
    ).execute()
    (output,) = nb.cells[0].outputs
    assert output.output_type == "error" and output.ename == "ArgumentError"
    assert output.traceback == ["ArgumentError: FormulaExplorer: d_model must be an integer from 2 to 256, not 'x'."]
    json.dumps(output)  # a plain output, nothing that needs the course to read


# --------------------------------------------------------------------------
# Explorers: a constructor's ranges are its sliders' ranges
# --------------------------------------------------------------------------

EXPLORERS = [
    cls
    for cls in vars(explorers).values()
    if isinstance(cls, type) and issubclass(cls, explorers.Explorer) and cls.kind
]


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_explorer_arguments_are_its_slider_ranges(cls):
    specs = cls.__init__.__accepts__
    for name, control in cls().controls.items():
        log = control.__class__.__name__ == "FloatLogSlider"
        if control.__class__.__name__ == "SelectionSlider":  # a slider of names: the argument is their index
            lo, hi = 0, len(control.options) - 1
        else:
            lo, hi = (10.0**control.min, 10.0**control.max) if log else (control.min, control.max)
        if name == "position":  # PrecisionExplorer takes the position as its exponent
            name, lo, hi = "log_position", control.min, control.max
        spec = specs[name]
        if name == "i":  # the pair index: its slider's top follows d_model, the argument is clamped to it
            continue
        number = spec if isinstance(spec, (Int, Real)) else next(s for s in spec.specs if isinstance(s, Int))
        assert (number.lo, number.hi) == pytest.approx((lo, hi)), (cls.__name__, name)


# --------------------------------------------------------------------------
# The sweep: every public callable, called with nothing and with bad arguments
# --------------------------------------------------------------------------


def _tiny():
    torch.manual_seed(0)
    return tt.TinyTransformer(10, 8)


def _llama_config():
    """A tiny transformers config for rope_audit (the optional extra "models": skipped without it)."""
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    return transformers.LlamaConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        vocab_size=8,
        max_position_embeddings=16,
        pad_token_id=0,
        bos_token_id=None,
        eos_token_id=None,
    )


_TABLE = posenc.sinusoidal(8, 8)
_QUESTION = quizzes.QUIZZES["01"][0]
GOOD = {  # arguments that work, as a function: some calls change what they are given
    "explorers.formula_data": lambda: dict(pos=17, i=3, d_model=9, base=500.0),
    "explorers.base_data": lambda: dict(base=1e4, d_model=64, length=100),
    "explorers.offset_pairs": lambda: dict(d_model=16),
    "explorers.offset_data": lambda: dict(k=7, d_model=16, base=1e4),
    "explorers.rope_scaling_data": lambda: dict(base=1e4, scale=4, d_model=128, length=2048),
    "explorers.rope_rules_data": lambda: dict(base=5e5, d_head=128, length=8192, target=32768, rule=2),
    "explorers.precision_data": lambda: dict(position=100, base=1e4, d_model=16),
    "explorers.attention_setup": lambda: dict(d=16),
    "explorers.attention_data": lambda: dict(query=11, scheme="rope", base=1e4, d=16, tokens=None),
    "explorers.Explorer": dict,
    "explorers.FormulaExplorer": dict,
    "explorers.BaseExplorer": dict,
    "explorers.OffsetExplorer": dict,
    "explorers.RopeScalingExplorer": dict,
    "explorers.RopeRulesExplorer": dict,
    "explorers.PrecisionExplorer": dict,
    "explorers.AttentionExplorer": dict,
    "choices.Choice": lambda: dict(text="a", correct=True, why="b"),
    "choices.ChoiceQuestion": lambda: dict(
        prompt="Which?", choices=(choices.Choice("a", True, "x"), choices.Choice("b", True, "y")), nudge="Think."
    ),
    "quizzes.Choice": lambda: dict(text="a", correct=True, why="b"),
    "quizzes.Question": lambda: dict(
        prompt="Which?", choices=(quizzes.Choice("a", True, "x"), quizzes.Choice("b", False, "y"))
    ),
    "quizzes.Quiz": lambda: dict(key="k", questions=[_QUESTION], title="T"),
    "quizzes.check_yourself": lambda: dict(chapter="01"),
    "quizzes.render": lambda: dict(key="k", questions=[_QUESTION]),
    "tables.Table": lambda: dict(rows=[(1, 2.5)], headers=["a", "b"], caption="c", formats=[None, ".1f"], align="lr"),
    "tables.show": lambda: dict(rows=[(1, 2.5)], headers=["a", "b"], caption="c", formats=[None, ".1f"], align="lr"),
    "plotting.min_font_pt": lambda: dict(width_in=6.4),
    "plotting.legible": lambda: dict(fig=matplotlib.figure.Figure(figsize=(2, 1))),
    "plotting.layout_problems": lambda: dict(fig=matplotlib.figure.Figure(figsize=(2, 1))),
    "plotting.apply_style": dict,
    "timing.alternate": lambda: dict(contenders={"a": lambda: None}, repeats=1, warmup=0),
    "toy_transformer.offset_copy_batch": lambda: dict(n_seq=2, length=6, vocab_size=10, offset=1, seed=0),
    "toy_transformer.chance_accuracy_bidirectional": lambda: dict(length=5),
    "toy_transformer.chance_accuracy_causal": lambda: dict(length=5, offset=2, start=3),
    "toy_transformer.chance_accuracy_causal_by_position": lambda: dict(length=5, offset=2),
    "toy_transformer.ScaledSinusoidalEncoding": lambda: dict(d_model=8, base=100.0, per_channel=True, init=0.5),
    "toy_transformer.SelfAttention": lambda: dict(d_model=8, n_heads=2),
    "toy_transformer.Block": lambda: dict(d_model=8, n_heads=2, d_ff=16),
    "toy_transformer.TinyTransformer": lambda: dict(
        vocab_size=10,
        d_model=8,
        scheme="rope",
        n_layers=2,
        n_heads=2,
        d_ff=16,
        max_len=None,
        causal=True,
        per_channel=False,
        base=100.0,
        rope_layers=[1],
    ),
    "toy_transformer.train": lambda: dict(model=_tiny(), length=6, offset=1, steps=1, batch_size=2, lr=1e-3, seed=0),
    "toy_transformer.evaluate": lambda: dict(model=_tiny(), length=6, offset=1, n_seq=2, seed=0),
    "bug_zoo.doubled_frequencies": lambda: dict(d_model=8, base=100.0),
    "bug_zoo.doubled_exponent": lambda: dict(n=8, d_model=8, base=100.0),
    "bug_zoo.recipe_frequencies": lambda: dict(d_model=8, base=100.0, dtype=torch.float32),
    "bug_zoo.tutorial_recipe": lambda: dict(n=8, d_model=8, base=100.0, dtype=torch.float32),
    "bug_zoo.recipe_angles_table": lambda: dict(positions=[0, 5], d_model=7, base=100.0, dtype=torch.float32),
    "bug_zoo.recipe_fixed": lambda: dict(n=8, d_model=8, base=100.0),
    "bug_zoo.cosine_own_frequency": lambda: dict(n=8, d_model=8, base=100.0),
    "bug_zoo.seq_first_table": lambda: dict(max_len=8, d_model=8),
    "bug_zoo.add_along_batch": lambda: dict(x=torch.zeros(2, 4, 8), pe=bug_zoo.seq_first_table(8, 8)),
    "bug_zoo.add_along_seq": lambda: dict(x=torch.zeros(2, 4, 8), pe=bug_zoo.seq_first_table(8, 8)),
    "bug_zoo.ParameterTable": lambda: dict(max_len=8, d_model=8),
    "bug_zoo.init_all_parameters": lambda: dict(model=nn.Linear(2, 2), std=0.1),
    "bug_zoo.HalfAngleEncoding": lambda: dict(d_model=8, base=100.0),
    "bug_zoo.low_precision_table": lambda: dict(positions=[0, 1, 2], d_model=8, base=100.0, dtype=torch.float16),
    "bug_zoo.gram": lambda: dict(table=_TABLE),
    "bug_zoo.toeplitz_defect": lambda: dict(table=_TABLE),
    "bug_zoo.rotation_residual": lambda: dict(table=_TABLE, k=1, base=10000.0),
    "bug_zoo.best_linear_residual": lambda: dict(table=_TABLE, k=1),
    "bug_zoo.duplicate_rows": lambda: dict(table=_TABLE),
    "bug_zoo.angles_in_dtype": lambda: dict(positions=[0, 1], d_model=8, base=100.0, dtype=torch.bfloat16),
    "bug_zoo.phase_error": lambda: dict(positions=[0, 1], d_model=8, base=100.0, dtype=torch.float16),
    "bug_zoo.variant_table": lambda: dict(positions=8, d_model=8, variant="fairseq", base=100.0),
    "bug_zoo.identify_variant": lambda: dict(table=bug_zoo.variant_table(8, 8, "cos_first"), base=10000.0, atol=1e-4),
    "bug_zoo.mystery_table": lambda: dict(number=1, n=8, d_model=8),
    "rope_audit.check_rotary": lambda: dict(
        model_or_config=_llama_config(),
        positions=8,
        dtypes=(torch.float32,),
        atol=1e-4,
        rtol=1e-5,
        reference_config=_llama_config(),
    ),
    "rope_audit.interleaved_to_half_split": lambda: dict(weight=torch.zeros(8, 4), n_heads=2, rotary_dim=2),
    "rope_audit.half_split_to_interleaved": lambda: dict(weight=torch.zeros(8), n_heads=2, rotary_dim=None),
    "rope_audit.convert_qk": lambda: dict(
        config=_llama_config(), q=torch.zeros(16, 16), k=torch.zeros(8, 16), to="interleaved"
    ),
    "prose.says": lambda: dict(text="5.4·10⁸", value=2**29),
    "prose.number": lambda: dict(text="60,611"),
}

# What a learner passes by mistake: None, an unknown id or name, a number where a count or a name
# goes, something of no use at all, an empty list, a negative number
BAD = [None, "no such id!", 3.5, object(), [], -1]
NOT_SWEPT = {"arguments"}  # the machinery itself, tested above


def public_callables() -> dict:
    """{"module.name": callable} for every public function and class of every posenc_course module."""
    found = {}
    for info in pkgutil.iter_modules(posenc_course.__path__):
        if info.name.startswith("_") or info.name in NOT_SWEPT:
            continue
        module = importlib.import_module(f"posenc_course.{info.name}")
        names = getattr(module, "__all__", None) or [
            name
            for name, obj in vars(module).items()
            if not name.startswith("_") and getattr(obj, "__module__", None) == module.__name__
        ]
        for name in names:
            obj = getattr(module, name)
            if callable(obj) and (inspect.isfunction(obj) or inspect.isclass(obj)):
                found[f"{info.name}.{name}"] = obj
    return found


PUBLIC = public_callables()


def test_every_public_callable_is_swept_and_declares_its_arguments():
    assert set(PUBLIC) == set(GOOD), {
        "not in GOOD": sorted(set(PUBLIC) - set(GOOD)),
        "no longer public": sorted(set(GOOD) - set(PUBLIC)),
    }
    undeclared = [
        name
        for name, obj in PUBLIC.items()
        if not hasattr(obj.__init__ if inspect.isclass(obj) else obj, "__accepts__") and name != "explorers.Explorer"
    ]  # the base class takes no arguments of its own
    assert not undeclared


def _parameters(obj) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(obj).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


@pytest.mark.parametrize("name", sorted(GOOD))
def test_bad_arguments_get_one_line_naming_them(name, capsys):
    obj = PUBLIC[name]
    params = _parameters(obj)
    problems = []
    with mpl.rc_context():  # apply_style changes matplotlib's settings: keep them to this test
        good = GOOD[name]()
        assert outcome(lambda: obj(**good), None) is None, "the GOOD arguments must work"
        required = [p.name for p in params if p.default is p.empty]
        problem = outcome(lambda: obj(), required[0] if required else None)
        if problem:
            problems.append(f"{name}(): {problem}")
        for p in params:
            for bad in BAD:
                kwargs = {**GOOD[name](), p.name: bad}
                start = time.perf_counter()
                problem = outcome(lambda: obj(**kwargs), p.name)  # noqa: B023 - called at once
                if problem:
                    problems.append(f"{name}({p.name}={arguments.shown(bad)}): {problem}")
                elif time.perf_counter() - start > 5:
                    problems.append(f"{name}({p.name}={arguments.shown(bad)}): slow to answer")
    capsys.readouterr()  # show() displays its table
    assert not problems, "\n".join(problems)
