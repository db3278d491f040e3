"""The question bank says what it grades, and grades what it says.

Every question's text in solutions/ and exercises/ carries the sentence
``question.requirement()`` ("**Accepted:** ... within ... of the exact value"),
written there by ``make_exercises`` from the question's declaration; the grader accepts answers just
inside that tolerance and rejects answers just outside it, in the stated dtype
only. The test inputs cover what the texts promise, and the hints of 08.6 say
the right numbers. Each question declares its own test data (known mistakes,
alternative answers, promised coverage), from which tools/grading_battery.py
builds its tries.
"""

import ast
import math
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

import posenc
from grading import QUESTIONS, check
from grading.bank import common
from grading.kinds import Array, Choice, Function, Numeric
from tools import make_exercises
from tools.grading_battery import known_mistakes, mistake_tries, own_code_answer

pytestmark = pytest.mark.usefixtures("fresh_progress")  # every test: progress of its own

ROOT = Path(__file__).resolve().parent.parent
NON_CHOICE = [q for q, question in QUESTIONS.items() if question.kind != "choice"]
FUNCTIONS = [q for q, question in QUESTIONS.items() if question.kind == "function"]


def verdict(qid, answer, capsys):
    ok = check(qid, answer)
    return bool(ok), capsys.readouterr().out


# --------------------------------------------------------------------------
# The text states the tolerance, dtype and shape the grader uses
# --------------------------------------------------------------------------


def question_text(folder, qid):
    """The markdown a learner reads for ``qid``: from its "## Question" heading to its check cell,
    without solution regions, whitespace collapsed."""
    path = next((ROOT / folder).glob(f"{qid[:2]}_*.ipynb"))
    cells = nbformat.read(path, as_version=4).cells
    start = next(
        n for n, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith(f"## Question {qid}")
    )
    end = next(n for n, c in enumerate(cells) if c.cell_type == "code" and f'check("{qid}"' in c.source)
    assert start < end, qid
    text = "\n".join(make_exercises.strip_markdown(c.source) for c in cells[start:end] if c.cell_type == "markdown")
    return " ".join(text.split())


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_the_text_states_what_the_grader_accepts(qid, folder):
    text, question = question_text(folder, qid), QUESTIONS[qid]
    if question.kind == "choice":
        single = len(question.correct) == 1
        assert bool(re.search(r"Choose (one|the one true statement)\.", text)) == single, text
        assert single or "Choose all that apply." in text or ("Choose two." in text and len(question.correct) == 2)
        return
    line = question.requirement()
    assert line.startswith("**Accepted:** ")
    assert line in text, f"{qid}: the text lacks\n  {line}\n{text}"
    # no other tolerance anywhere in the question that could contradict the stated one
    stated = re.findall(r"within (\$[^$]+\$|[\d.]+ %)", line)
    assert set(re.findall(r"within (\$[^$]+\$|[\d.]+ %)", text)) <= set(stated), text


MULTI_SELECT = [q for q, question in QUESTIONS.items() if question.kind == "choice" and len(question.correct) > 1]


@pytest.mark.parametrize("qid", MULTI_SELECT)
def test_a_multi_select_stem_asks_which_statements_are_true_not_which_explain(qid):
    """A key may hold statements that are true without explaining anything (a consequence of the fact, say);
    a stem asking which statements explain the fact would count them wrong. Such stems ask which are true."""
    stem = question_text("solutions", qid).split("**A.**")[0]
    assert not re.search(r"\bexplain|\baccount for", stem, re.I), stem


@pytest.mark.parametrize("given", [{}, {"expected": abs, "verify": lambda out, case, **tol: None}])
def test_a_function_question_declares_exactly_one_check(given):
    from grading.kinds import Function

    with pytest.raises(ValueError, match="10.9: give exactly one of expected"):
        Function("10.9", "t", abs, lambda rng: [], returns="number", **given)


def test_a_relative_tolerance_needs_a_check_of_its_own():
    from grading.kinds import Function

    with pytest.raises(ValueError, match="10.9: the array check takes an absolute tolerance only"):
        Function("10.9", "t", abs, lambda rng: [], returns="number", expected=abs, rtol=1e-3)


# --------------------------------------------------------------------------
# ... and the grader accepts just inside that tolerance, and rejects just outside
# --------------------------------------------------------------------------

NUMERIC = [q for q in NON_CHOICE if QUESTIONS[q].kind == "numeric"]
ARRAYS = [q for q in NON_CHOICE if QUESTIONS[q].kind == "array"]


@pytest.mark.parametrize("qid", NUMERIC)
def test_numeric_tolerance_is_the_stated_one(qid, capsys):
    want, tol = float(QUESTIONS[qid].reference()), QUESTIONS[qid].tolerance()
    if tol["integer"]:
        inside, outside = [int(want), float(want)], [want + 1, want - 1, want + 0.5]
    else:
        r = tol["rtol"]
        inside, outside = [want * (1 + r / 2), want * (1 - r / 2)], [want * (1 + 2 * r), want * (1 - 2 * r)]
    for answer in inside:
        ok, out = verdict(qid, answer, capsys)
        assert ok, out
    for answer in outside:
        ok, out = verdict(qid, answer, capsys)
        assert not ok, f"{answer!r} accepted: {out}"


def _allowed(want, tol):
    return tol["atol"] + tol["rtol"] * np.abs(want)


@pytest.mark.parametrize("qid", ARRAYS)
def test_array_tolerance_is_the_stated_one(qid, capsys):
    want = np.asarray(QUESTIONS[qid].reference(), dtype=np.float64)
    allowed = _allowed(want, QUESTIONS[qid].tolerance())
    signs = np.where(np.arange(want.size).reshape(want.shape) % 2, -1.0, 1.0)
    ok, out = verdict(qid, want + 0.5 * signs * allowed, capsys)
    assert ok, out
    for index in np.ndindex(want.shape):  # one element just outside, wherever it is
        answer = want.copy()
        answer[index] += 2 * allowed[index] + 1e-12
        ok, out = verdict(qid, answer, capsys)
        assert not ok, f"element {index} off by twice the tolerance was accepted: {out}"


def _perturbed(qid, change):
    """A learner's function: a correct answer (own code where the question asks for it), with ``change(out)``
    applied to each result."""
    reference = own_code_answer(qid)
    if isinstance(reference, type):  # a class: perturb what forward returns

        class Perturbed(reference):
            def forward(self, tokens):
                return torch.from_numpy(change(super().forward(tokens).numpy()))

        return Perturbed

    def answer(*args, **kwargs):
        return change(np.asarray(reference(*args, **kwargs)))

    return answer


def _shift(delta, where=None):
    """Add ``delta`` (a function of the exact values) to every element, or to element [0, ...] only."""

    def change(out):
        exact = out.astype(np.float64)
        moved = exact + (delta(exact) if where is None else 0)
        if where is not None:
            moved.flat[0] += delta(exact).flat[0]
        return moved.astype(out.dtype)

    return change


@pytest.mark.parametrize("qid", FUNCTIONS)
def test_function_tolerance_and_dtype_are_the_stated_ones(qid, capsys):
    tol = QUESTIONS[qid].tolerance()
    dtype = tol["dtype"] or np.dtype(np.float64)
    eps = np.finfo(dtype).eps
    ok, out = verdict(qid, own_code_answer(qid), capsys)
    assert ok, out
    if tol["atol"] > 4 * eps:  # room to move inside the tolerance after rounding to the dtype
        ok, out = verdict(qid, _perturbed(qid, _shift(lambda v: 0.4 * _allowed(v, tol))), capsys)
        assert ok, out
    if tol["atol"] or tol["rtol"]:
        outside = _shift(lambda v: 3 * _allowed(v, tol) + 2 * eps * np.maximum(1, np.abs(v)), where=0)
    else:  # exact: the next representable number is already wrong

        def outside(out):
            out = out.copy()
            out.flat[0] = np.nextafter(out.flat[0], np.inf)
            return out

    ok, out = verdict(qid, _perturbed(qid, outside), capsys)
    assert not ok, f"one element just outside the tolerance was accepted: {out}"
    if tol["dtype"] is not None:  # the stated dtype and no other, even when the values are closer
        other = np.float32 if dtype == np.float64 else np.float64
        ok, out = verdict(qid, _perturbed(qid, lambda out: out.astype(other)), capsys)
        assert not ok and dtype.name in out, out  # the message names the dtype asked for
    elif 0 < tol["atol"] < 1e-7:  # "float64 precision: float32 is not enough"
        ok, out = verdict(qid, _perturbed(qid, lambda out: out.astype(np.float32)), capsys)
        assert not ok, out


# --------------------------------------------------------------------------
# The test inputs cover what the texts promise: each question's ``covers``, made into wrong answers by the battery
# (tests/test_grading.py); what the texts state: each question's ``states`` (tests/test_numbers_in_prose.py)
# --------------------------------------------------------------------------


def test_0103_check_stays_fast(capsys):
    import time

    start = time.perf_counter()
    ok, out = verdict("01.3", QUESTIONS["01.3"].reference(), capsys)
    assert ok, out
    assert time.perf_counter() - start < 2.0


# --------------------------------------------------------------------------
# 05.5: the keyed option says of the learned table what its source measured
# --------------------------------------------------------------------------


def test_0505_the_keyed_option_states_the_cited_comparison_not_a_better_table():
    """Vaswani et al. (2017), Table 3, row E: a learned table 25.7 BLEU, the sinusoidal base model 25.8, the row
    chapter 5 cites for nearly identical results. The keyed option says so, with the numbers, and no longer that
    the table often does slightly better, which the source does not support."""
    text = question_text("solutions", "05.5")
    keyed = text.split("**A.**")[1].split("**B.**")[0]
    assert "Table 3, row E: 25.7 BLEU with a learned table, 25.8 with the formula" in keyed
    assert "about as well" in keyed and "better" not in keyed
    chapter = "".join(c.source for c in nbformat.read(ROOT / "chapters" / "05_learned_vs_fixed.ipynb", 4).cells)
    assert "Table 3, row E" in chapter


# --------------------------------------------------------------------------
# 09.2: the numbers in each hint are right (each hint comes from its own model of a mistake: the battery)
# --------------------------------------------------------------------------

RIGHT_SLOPE = posenc.alibi_slopes(4)[1]  # head 2 of 4
HINTS_0902 = [hint for _, hint in QUESTIONS["09.2"].mistakes]


def _hint_value(hint):
    return next(value() for value, h in QUESTIONS["09.2"].mistakes if h == hint)


def _power(expression):
    """The value of "2^(-8·3/4)" or "2^(-6)" as written in a hint."""
    return 2.0 ** eval(expression.replace("·", "*"), {})  # eval of our own hint text


@pytest.mark.parametrize("hint", HINTS_0902, ids=range(len(HINTS_0902)))
def test_0902_the_numbers_in_each_hint_are_right(hint):
    wrong = np.asarray(_hint_value(hint))
    used = -wrong[0] / 5  # the slope the mistaken row was built with (key 0 is 5 positions back)
    powers = [_power(e) for e in re.findall(r"2\^\(([-\d·/ ]+)\)", hint)]
    for value in powers:  # every power of two named is the slope used, never the right one
        assert math.isclose(value, used) and not math.isclose(value, RIGHT_SLOPE), (hint, value)
    for h, n in re.findall(r"head (\d+)(?: of (\d+) heads)?", hint):  # "head 3" is head 3 of 4 heads
        slope = posenc.alibi_slopes(int(n or 4))[int(h) - 1]
        assert math.isclose(slope, used) or (h == "2" and not n), (hint, h, n)  # or the head asked for
    for h in re.findall(r"the rule for 8 heads, at h = (\d+)", hint):
        assert math.isclose(posenc.alibi_slopes(8)[int(h) - 1], used)
    if re.search(r"slope|head", hint):  # a hint about the slope names the one the learner used
        assert any(math.isclose(p, used) for p in powers) or (used == 1 and "m = 1" in hint), hint


# --------------------------------------------------------------------------
# The common mistakes are named: every model of a mistake a question declares is a wrong answer of the battery
# that must get that model's hint (tests/test_grading.py); what follows is about the hints themselves
# --------------------------------------------------------------------------


def hint(name):
    return getattr(common, name)


def test_hints_for_named_mistakes_give_no_number_of_the_answer():
    """A named mistake's hint says what went wrong, never a value to copy."""
    for name in ["COSINE_HINT", "POSITIONS_HINT", "PAIR_SHIFT_HINT"]:
        assert not re.search(r"\d\.\d", hint(name)), hint(name)


# --------------------------------------------------------------------------
# Each question declares its own test data, in its own declaration
# --------------------------------------------------------------------------

BANK = ROOT / "src" / "grading" / "bank"
DECLARED = ("known_mistakes", "alternatives", "covers")  # the keywords of a question's test data
KINDS = {cls.__name__ for cls in (Array, Choice, Function, Numeric)}
QID = re.compile(r"\b\d\d\.\d+\b")


def test_every_question_declares_known_mistakes_and_a_coding_one_alternatives_and_coverage():
    """At least three named mistakes, each a wrong answer with the words its feedback must contain: the known
    mistakes the question declares, and its models of mistakes, which the battery makes into wrong answers; a
    coding question also declares at least one alternative correct answer and at least one input its test inputs
    promise to cover."""
    missing = []
    for qid, q in QUESTIONS.items():
        named = [t for t in mistake_tries(qid, q) + known_mistakes(qid) if t.words]
        if len(named) < 3 or not all(isinstance(w, str) and w for _, w in q.known_mistakes):
            missing.append(f"{qid}: {len(named)} named mistakes (or a known one without its words)")
        if q.kind == "function" and not (q.alternatives and q.covers):
            missing.append(f"{qid}: {len(q.alternatives)} alternatives, {len(q.covers)} promises of coverage")
    assert missing == []


def declarations(path):
    """(qid, the expressions of its test data) for every question declared in the bank module ``path``, and the
    module's own functions and classes by name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    found = [
        (call.args[0].value, [k.value for k in call.keywords if k.arg in DECLARED])
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id in KINDS
        and call.args
        and isinstance(call.args[0], ast.Constant)
    ]
    return found, defined, tree


def ids_named(nodes, defined) -> set[str]:
    """The question ids written in ``nodes``, and in the module's functions and classes they use, transitively."""
    ids, seen, todo = set(), set(), list(nodes)
    while todo:
        for node in ast.walk(todo.pop()):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                ids |= set(QID.findall(node.value))
            elif isinstance(node, ast.Name) and node.id in defined and node.id not in seen:
                seen.add(node.id)
                todo.append(defined[node.id])
    return ids


def test_a_question_s_test_data_is_declared_with_it_and_names_no_other_question():
    """Each question's known mistakes, alternatives and promised coverage are keywords of its own declaration,
    in its chapter's module; they (and the module's helpers they use) name no other question's id; nothing
    elsewhere in the bank sets them; the modules several chapters share name no question at all."""
    where, problems = {}, []
    for path in sorted(BANK.glob("ch*.py")):
        found, defined, tree = declarations(path)
        for qid, nodes in found:
            where.setdefault(qid, []).append(path.name)
            if not path.name == f"ch{qid[:2]}.py":
                problems.append(f"{qid} is declared in {path.name}")
            others = ids_named(nodes, defined) - {qid}
            if others:
                problems.append(f"{qid}'s test data in {path.name} names {sorted(others)}")
        problems += [
            f"{path.name}:{node.lineno} sets .{node.attr} outside a declaration"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in DECLARED and isinstance(node.ctx, ast.Store)
        ]
    for shared in ["common.py", "learner_code.py"]:
        named = sorted(set(QID.findall((BANK / shared).read_text(encoding="utf-8"))))
        if named:
            problems.append(f"{shared}, shared by several chapters, names {named}")
    assert where == {qid: [f"ch{qid[:2]}.py"] for qid in QUESTIONS}
    assert problems == []


def test_the_battery_is_about_no_question_in_particular():
    """The battery of tries is generic: what is particular to a question is in its declaration."""
    battery = (ROOT / "tools" / "grading_battery.py").read_text(encoding="utf-8")
    assert QID.findall(battery) == []


# --------------------------------------------------------------------------
# A bank module names its own chapter (chapters were renumbered; names kept their old number)
# --------------------------------------------------------------------------

# a chapter number in a name: _ch10_full_turns, buggy_07, _PAIRS_03 (not float32 or 5000)
CHAPTER_IN_NAME = re.compile(r"(?:^|_)(?:ch)?(\d{2})(?:_|$)", re.I)


def names_defined(source: str) -> list[str]:
    """The functions, classes and module-level variables a module defines."""
    tree = ast.parse(source)
    found = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    return found + [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]


def other_chapters(source: str, chapter: str) -> list[str]:
    """What in a bank module's source names a chapter other than ``chapter``: its docstring's chapter
    and exercises, and the chapter numbers in the names it defines."""
    tree = ast.parse(source)
    doc = ast.get_docstring(tree) or ""
    wrong = [f"docstring: {doc!r}"] * (not doc.startswith(f"Questions of chapter {chapter},"))
    wrong += [f"docstring: {m!r}" for m in re.findall(r"exercises/(\d{2})_", doc) if m != chapter]
    wrong += [f"docstring names no exercises/{chapter}_*"] * (f"exercises/{chapter}_" not in doc)
    wrong += [name for name in names_defined(source) for m in CHAPTER_IN_NAME.finditer(name) if m.group(1) != chapter]
    return wrong


def test_the_scan_finds_another_chapter_in_a_bank_module():
    planted = '"""Questions of chapter 10, x (exercises/09_*.ipynb)."""\ndef _ch08_a(): ...\nyarn_08 = 1\n'
    assert other_chapters(planted, "10") == [
        "docstring: '09'",
        "docstring names no exercises/10_*",
        "_ch08_a",
        "yarn_08",
    ]
    fine = '"""Questions of chapter 10, x (exercises/10_*.ipynb)."""\ndef _ch10_a(): ...\ndef f_float32(): ...\n'
    assert other_chapters(fine, "10") == []


@pytest.mark.parametrize("path", sorted((ROOT / "src/grading/bank").glob("ch[0-9][0-9].py")), ids=lambda p: p.stem)
def test_a_bank_module_names_only_its_own_chapter(path):
    assert other_chapters(path.read_text(encoding="utf-8"), path.stem[2:]) == []


# --------------------------------------------------------------------------
# 11: the practice's opening states the inputs its coding questions draw
# --------------------------------------------------------------------------


def test_11_the_opening_states_the_inputs_the_coding_questions_draw():
    tokens, widths, documents, lengths, rows, padded_widths = [], [], [], [], [], []
    for seed in range(10):
        for qid, question in QUESTIONS.items():
            if not (qid.startswith("11.") and question.kind == "function"):
                continue
            for case in question.cases(np.random.default_rng(seed)):
                first = case.args[0]
                if first.ndim == 3:  # padded rows: (rows, seq, d_model), absolute positions of any width
                    rows.append(first.shape[0])
                    tokens.append(first.shape[1])
                    padded_widths.append(first.shape[2])
                    continue
                tokens.append(first.shape[0])
                widths.append(first.shape[1])
                if isinstance(case.args[3], list):  # packed documents: their lengths
                    documents.append(len(case.args[3]))
                    lengths += case.args[3]
    assert max(documents) * max(lengths) == 60 and max(tokens) <= 60  # up to five documents of at most 12 tokens
    assert min(widths) == 2 and max(widths) == 32 and all(d % 2 == 0 for d in widths)
    assert max(documents) == 5 and max(rows) == 6
    assert min(padded_widths) == 1 and max(padded_widths) == 33
    stated = (
        "random inputs (up to 60 tokens, head widths from 2 to 32, up to five packed documents, batches of up to "
        "six padded rows, whose absolute positions take any width from 1 to 33)"
    )
    for folder in ("solutions", "exercises"):
        notebook = ROOT / folder / f"11_positions_at_inference_{folder}.ipynb"
        opening = nbformat.read(notebook, as_version=4).cells[0].source
        assert stated in " ".join(opening.split()), folder
