"""The grader: right answers pass in the forms learners write them, known-wrong answers fail with the right
hint, hostile input gets one line of feedback (never an exception), and progress is reported honestly.

The tries come from the battery (tools/grading_battery.py), built from each question's declaration in the
bank; the maintainer's report (tools/grading_report.py) runs it in full and counts. Here they are grouped: one
test item per question for its correct forms, its known mistakes and its other wrong answers, and one per class
of hostile input. The fast tier puts each class's first input to every question and all of its inputs to one
question of each kind; the full tier (``slow``) puts every hostile input to every question, the time-limit class
among them.
"""

import math
import re
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from torch import nn

import grading
import posenc
from grading import QUESTIONS, check
from posenc_course import bug_zoo
from tests.support.grading_session import feedback
from tools.grading_battery import HOSTILE_GROUPS, SLOW_GROUP, run, tries

pytestmark = pytest.mark.usefixtures("fresh_progress")  # every test: progress of its own

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted({qid[:2] for qid in QUESTIONS})
KINDS = sorted({q.kind for q in QUESTIONS.values()})
LAYERS = [qid for qid, q in QUESTIONS.items() if q.kind == "function" and isinstance(q.reference(), type)]
# the questions every input of a hostile class is put to in the fast tier: the first of each kind, and the first
# whose answer is a class (a torch layer), not a function
SAMPLE = {next(qid for qid, q in QUESTIONS.items() if q.kind == kind) for kind in KINDS} | set(LAYERS[:1])


def problems(selected) -> list[str]:
    """What went wrong, try by try (nothing: an empty list)."""
    return [f"{t.id}: {r.problem}" for t in selected if (r := run(t)).problem is not None]


def test_every_chapter_has_six_questions_of_mixed_kinds():
    assert CHAPTERS == sorted(p.name[:2] for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))  # every chapter
    for chapter in CHAPTERS:
        kinds = [q.kind for qid, q in QUESTIONS.items() if qid.startswith(chapter + ".")]
        assert len(kinds) >= 6, chapter
        assert "function" in kinds and "choice" in kinds and {"numeric", "array"} & set(kinds), chapter


# --------------------------------------------------------------------------
# Right answers in every form that matters, wrong answers with their hints
# --------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")  # np.matrix answers
@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_the_reference_and_other_correct_forms_pass(qid):
    """List, array or tensor; int or float; float32 where the tolerance allows; letters in any order and
    spelling; loops, torch and closed forms for coding questions."""
    correct = [t for t in tries(qid) if t.category == "correct"]
    assert len(correct) >= 4, [t.label for t in correct]
    assert problems(correct) == []


NAMED = ("known mistake", "mistake model")  # the tries whose feedback must name their mistake


@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_known_mistakes_fail_with_their_own_hint(qid):
    """Each known mistake the question declares, and each of its models of mistakes made into an answer, is told
    its own hint."""
    known = [t for t in tries(qid) if t.group == "known mistake"]
    assert len(known) == len(QUESTIONS[qid].known_mistakes)
    assert problems(known + [t for t in tries(qid) if t.group == "mistake model"]) == []


@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_other_wrong_answers_fail(qid):
    """Every other set of letters; numbers and elements just outside the tolerance; the bank's own models of
    mistakes; functions right except on the inputs the question promises to cover, or in another dtype."""
    wrong = [t for t in tries(qid) if t.category == "wrong" and t.group not in NAMED]
    assert wrong
    assert problems(wrong) == []


def test_hints_only_where_they_apply(capsys):
    """A type or dtype problem does not come with an unrelated bug hint."""
    for qid, answer in [
        ("02.6", lambda p, d, layout: torch.from_numpy(posenc.sinusoidal(p, d))),
        ("03.7", lambda p, d: posenc.sinusoidal(p, d)),
    ]:
        verdict, out = feedback(capsys, qid, answer)
        assert not verdict and "Hint" not in out, out


# --------------------------------------------------------------------------
# Hostile input: one line of feedback every time, never an exception
# --------------------------------------------------------------------------


def hostile(group, qids):
    return [t for qid in qids for t in tries(qid) if t.category == "hostile" and t.group == group]


def test_every_hostile_class_has_inputs():
    assert {t.group for qid in QUESTIONS for t in tries(qid) if t.category == "hostile"} == set(HOSTILE_GROUPS)


@pytest.mark.parametrize("group", [g for g in HOSTILE_GROUPS if g != SLOW_GROUP])
def test_each_class_of_hostile_input_gets_one_line(group):
    """The class's first input on every question it applies to, all of its inputs on SAMPLE."""
    chosen = []
    for qid in QUESTIONS:
        members = hostile(group, [qid])
        chosen += members if qid in SAMPLE else members[:1]
    assert chosen
    assert problems(chosen) == []


@pytest.mark.slow
@pytest.mark.parametrize("group", HOSTILE_GROUPS)
def test_every_hostile_input_gets_one_line_on_every_question(group):
    assert problems(hostile(group, QUESTIONS)) == []


def endless(*args, **kwargs):
    while True:
        pass


@pytest.mark.parametrize("time_limit", [0.2])
def test_an_endless_loop_is_stopped(capsys):
    import threading

    before = threading.active_count()
    verdict, out = feedback(capsys, "02.5", endless)
    assert not verdict and "too slow" in out
    time.sleep(0.3)
    assert threading.active_count() <= before  # the worker was interrupted, not left spinning


class TorchLayer(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d_model)
        self.pe = posenc.SinusoidalPositionalEncoding(d_model)
        self.d_model = d_model

    def forward(self, tokens):
        return self.pe(self.emb(tokens) * math.sqrt(self.d_model))


def test_a_layer_returning_nan_is_named(capsys):
    class NanLayer(TorchLayer):
        def forward(self, tokens):
            return super().forward(tokens) * float("nan")

    verdict, out = feedback(capsys, "05.7", NanLayer)
    assert not verdict and "NaN" in out, out


def test_an_answer_too_strange_to_inspect_gets_a_message(capsys):
    class Evil(float):
        def __float__(self):
            raise RuntimeError("no")

    verdict, out = feedback(capsys, "02.3", Evil(0.01))
    assert not verdict and "✗ the grader could not inspect your answer (RuntimeError: no)" in out, out


def test_unknown_question_id(capsys):
    last_02, after = [qid for qid in QUESTIONS if qid.startswith("02.")][-1], f"{int(CHAPTERS[-1]) + 1:02d}.1"
    for qid, said in [
        ("02.99", f"'02.99' is not a question id (chapter 02 has 02.1 to {last_02})"),
        (after, f"'{after}' is not a question id (ids look like \"02.3\", chapters {CHAPTERS[0]} to {CHAPTERS[-1]})"),
        (2.3, 'the question id must be a string such as "02.3", not 2.3'),
        (None, 'check needs a question id, the first argument: e.g. check("02.3", answer)'),
    ]:
        verdict, out = feedback(capsys, qid, 1.0)
        assert not verdict and out == f"check: {said}.\n" if qid is not None else out == f"{said}.\n", out


def test_an_id_written_without_the_leading_zero_is_understood(capsys):
    assert feedback(capsys, "2.3", 0.01) == (True, "02.3 ✓ correct\n")
    assert grading.progress("02")["02.3"] == "solved"


def test_check_without_an_answer_says_what_is_missing(capsys):
    verdict, out = feedback(capsys, "02.3", grading._NOT_GIVEN)
    assert not verdict and out == 'check("02.3", answer) needs your answer as its second argument.\n'
    assert grading.progress("02")["02.3"] == "untried"


def test_check_shows_nothing_extra_in_jupyter():
    verdict = check("02.3", 0.01)
    assert verdict == True and bool(verdict) and repr(verdict) == "True"  # noqa: E712
    assert verdict._ipython_display_() is None


# --------------------------------------------------------------------------
# Unanswered and progress
# --------------------------------------------------------------------------


def stub(*args, **kwargs): ...  # what the exercise's `def f(...): ...` placeholder does


class Stub(nn.Module): ...


@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_placeholders_are_not_answered_yet(qid, capsys):
    placeholder = ... if QUESTIONS[qid].kind != "function" else (Stub if qid in LAYERS else stub)
    verdict, out = feedback(capsys, qid, placeholder)
    assert not verdict and "not answered yet" in out, out
    assert grading.progress(qid[:2])[qid] == "untried"  # an unanswered cell records nothing


def test_a_blank_rerun_of_a_solved_question_says_it_stays_solved(capsys):
    check("02.1", QUESTIONS["02.1"].reference())
    capsys.readouterr()
    verdict, out = feedback(capsys, "02.1", ...)
    assert not verdict and "not answered yet" in out and "You solved it earlier; that stays recorded." in out, out
    assert grading.progress("02")["02.1"] == "solved"
    verdict, out = feedback(capsys, "02.2", ...)  # never solved: nothing to say of it
    assert "solved it earlier" not in out, out


@pytest.mark.parametrize("answer, said", [("F", "unknown option F: the options are"), ("B7", "'B7' is not an option")])
def test_an_option_letter_that_does_not_exist_costs_no_try(answer, said, capsys):
    verdict, out = feedback(capsys, "01.1", answer)
    assert not verdict and said in out and out.rstrip().endswith("(Not counted as a try.)"), out
    assert grading.progress("01")["01.1"] == "untried"
    check("01.1", next(letter for letter in QUESTIONS["01.1"].letters if letter not in QUESTIONS["01.1"].key))
    assert grading.progress("01")["01.1"] == "wrong"  # a real letter, even a wrong one, is a try


def size(chapter) -> int:
    """How many questions the bank has in ``chapter``."""
    return sum(qid.startswith(chapter + ".") for qid in QUESTIONS)


def answer_all(chapter, skip=()):
    for qid, q in QUESTIONS.items():
        if qid.startswith(chapter + ".") and qid not in skip:
            check(qid, q.reference())


def test_summary_counts_and_lists(capsys):
    answer_all("02", skip={"02.3", "02.5", "02.7"})
    check("02.3", 1e-4)  # wrong
    check("02.3", 1e-4)  # wrong again
    check("02.5", ...)  # unanswered: records nothing; 02.7 never checked
    check("02.1", "A")  # solved before: stays solved
    capsys.readouterr()
    grading.summary("02")
    others = [qid for qid in QUESTIONS if qid.startswith("02.") and qid not in {"02.1", "02.3", "02.5", "02.7"}]
    assert capsys.readouterr().out.splitlines()[:4] == [
        f"Chapter 02: {size('02') - 3} of {size('02')} solved, 1 attempted, 2 untried.",
        f"  solved: 02.1 (solved; your last try was wrong), {', '.join(others)}",
        "  attempted, not solved yet: 02.3 (2 tries, the last wrong)",
        "  untried (run their cells): 02.5, 02.7",
    ]
    latest = "02.1 (wrong), 02.3 (wrong), 02.5 (untried), 02.7 (untried)"
    with pytest.raises(AssertionError, match=re.escape(latest) + "$"):
        grading.assert_all_correct("02")


def test_summary_and_progress_without_a_chapter_cover_the_course(capsys):
    answer_all("02")
    check("03.1", "Z")
    states = grading.progress()
    assert list(states) == list(QUESTIONS)
    assert [q for q, s in states.items() if s == "solved"] == [q for q in QUESTIONS if q.startswith("02.")]
    assert states["03.1"] == "wrong" and states["01.1"] == "untried"
    capsys.readouterr()
    grading.summary()
    lines = capsys.readouterr().out.splitlines()
    n = len(QUESTIONS)
    two, one, three = size("02"), size("01"), size("03")
    assert lines[0] == f"The course: {two} of {n} questions solved, 1 attempted, {n - two - 1} untried."
    assert f"  Chapter 02: {two} of {two} solved." in lines
    assert f"  Chapter 01: 0 of {one} solved; {one} untried." in lines
    started = f"  Chapter 03: 0 of {three} solved; attempted: 03.1; {three - 1} untried."
    assert any(line.startswith(started) for line in lines), lines
    with pytest.raises(AssertionError, match=r"^the course: not all answers are correct: 01\.1 \(untried\)"):
        grading.assert_all_correct()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_solved_stays_solved_and_assert_all_correct_reads_the_latest_try(chapter, capsys):
    """After all were right, each question in turn: the placeholder run again changes nothing; a wrong try
    leaves it solved (summary says the last try was wrong), but assert_all_correct, which the solutions
    notebooks end with, names it."""
    qids = [q for q in QUESTIONS if q.startswith(chapter + ".")]
    answer_all(chapter)
    solved = {q: "solved" for q in qids}
    for q in qids:
        check(q, ...)
        assert grading.progress(chapter) == solved
    grading.assert_all_correct(chapter)
    for missing in qids:
        wrong = next(t for t in tries(missing) if t.category == "wrong")
        check(missing, wrong.make())
        capsys.readouterr()
        grading.summary(chapter)
        out = capsys.readouterr().out
        assert grading.progress(chapter) == solved
        assert f"{len(qids)} of {len(qids)} solved" in out and f"{missing} (solved; your last try was wrong)" in out
        assert "Every question is solved." in out
        with pytest.raises(AssertionError, match=re.escape(f"{missing} (wrong)")):
            grading.assert_all_correct(chapter)
        check(missing, QUESTIONS[missing].reference())
    grading.assert_all_correct(chapter)


def test_tries_are_counted_and_a_solved_question_is_never_unsolved():
    check("02.3", 0.02)
    check("02.3", 0.01)
    check("02.3", ...)
    check("02.3", 0.02)
    assert grading.progress("02")["02.3"] == "solved"
    entry = grading.current_grader().store.entries["02.3"]
    assert (entry["solved"], entry["tries"], entry["last"]) == (True, 3, "wrong")


@pytest.mark.parametrize("function", ["summary", "progress", "reset", "assert_all_correct"])
def test_an_unknown_chapter_gets_one_line_naming_the_chapters(function, capsys):
    said = f"{function}: chapter must be one of {', '.join(CHAPTERS)} (or left out for the whole course), not '99'."
    if function == "assert_all_correct":
        with pytest.raises(AssertionError) as raised:
            grading.assert_all_correct("99")
        assert str(raised.value) == said and raised.value._render_traceback_() == [f"AssertionError: {said}"]
    else:
        assert getattr(grading, function)("99") in (None, {})
        assert capsys.readouterr().out == said + "\n"


# --------------------------------------------------------------------------
# The notebooks and the bank agree
# --------------------------------------------------------------------------

SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


def test_one_solution_notebook_per_chapter():
    assert [p.name[:2] for p in SOLUTIONS] == CHAPTERS


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solution_notebook_checks_every_question_once_and_asserts_last(path):
    nb = nbformat.read(path, as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    chapter = path.name[:2]
    checked = re.findall(r'check\("(\d\d\.\d+)"', "\n".join(code))
    assert sorted(checked) == sorted(q for q in QUESTIONS if q.startswith(chapter + "."))
    assert len(checked) == len(set(checked))
    assert code[-1].strip() == f'# BEGIN SOLUTION\ngrading.assert_all_correct("{chapter}")\n# END SOLUTION'
    assert f'summary("{chapter}")' in code[-2]
    titles = [c.source for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("# ")]
    assert len(titles) == 1 and titles[0].startswith("# Practice: ")


# --------------------------------------------------------------------------
# Chapters 06 and 07: the answers agree with the chapters' own tools
# --------------------------------------------------------------------------


def test_chapters_06_and_07_answers_agree_with_the_chapter_tools():
    assert QUESTIONS["06.3"].reference() == bug_zoo.duplicate_rows(
        bug_zoo.low_precision_table(np.arange(20000), 8, dtype=torch.float16)
    )
    assert bug_zoo.identify_variant(bug_zoo.mystery_table(2)) == "concatenated"
    assert QUESTIONS["07.1"].reference() == "B"
    assert QUESTIONS["06.2"].reference() == "D"
    rows = bug_zoo.low_precision_table([1000, 1001], 8, dtype=torch.float16)
    assert not np.array_equal(rows[0], rows[1])  # float16 keeps them apart, bfloat16 does not
    # 06.5's bound is the chapter's 3u·p; 06.6: A and B hold, C does not (the base cannot undo a merged position)
    assert QUESTIONS["06.5"].reference() == 3 * torch.finfo(torch.float16).eps / 2 * 1000
    cast = torch.from_numpy(posenc.sinusoidal(8192, 64, dtype=np.float32)).half()
    assert bug_zoo.duplicate_rows(cast.double().numpy()) == 0
    on_the_fly = bug_zoo.HalfAngleEncoding(64).half()(torch.zeros(1, 2100, 64, dtype=torch.float16))[0]
    assert bug_zoo.duplicate_rows(on_the_fly.double().numpy()) > 0
    assert bug_zoo.duplicate_rows(bug_zoo.low_precision_table(np.arange(2100), 64, 5e5, dtype=torch.float16)) > 0
    # B's condition: positions counted in float64 (chapter 2's TeachingSinusoidalPE) keep every row apart after the
    # cast, although the frequency buffer is float16 then
    omega = torch.from_numpy(posenc.frequencies(64)).half()
    angles = torch.arange(8192, dtype=torch.float64)[:, None] * omega
    assert angles.dtype == torch.float64
    assert bug_zoo.duplicate_rows(torch.cat([angles.sin(), angles.cos()], 1).half().double().numpy()) == 0
    assert QUESTIONS["06.6"].reference() == "AB"
    # 07.5: the frequency read off the fairseq table at p = 1; 07.6: the permutation the chapter uses
    fairseq = bug_zoo.variant_table(2, 32, "fairseq")
    assert math.isclose(math.atan2(fairseq[1, 5], fairseq[1, 16 + 5]), QUESTIONS["07.5"].reference())
    perm = QUESTIONS["07.6"].reference().astype(int)
    assert np.array_equal(posenc.sinusoidal(3, 8)[:, perm], posenc.sinusoidal(3, 8, layout="concatenated"))


def test_chapters_08_and_09_answers_agree_with_the_chapters():
    assert QUESTIONS["09.1"].reference() == posenc.alibi_slopes(16)[2] == 2**-1.5
    assert np.array_equal(QUESTIONS["09.2"].reference(), -(5 - np.arange(6)) / 16)
    q, k = np.random.default_rng(7).normal(size=(2, 1, 32))
    score = lambda p, s: float((posenc.apply_rope(q, [p]) @ posenc.apply_rope(k, [s]).T)[0, 0])  # noqa: E731
    assert math.isclose(score(3, 10), score(103, 110)) and math.isclose(score(0, 7), score(1000, 1007))
    assert math.isclose(score(5, 5), score(9, 9)) and not math.isclose(score(3, 10), score(10, 3))
    assert not math.isclose(score(2, 4), score(4, 8))


def test_chapter_09_raised_base_agrees_with_the_chapter():
    stretch = posenc.wavelengths(128, QUESTIONS["10.8"].reference()) / posenc.wavelengths(128)
    assert math.isclose(stretch[0], 1.0) and math.isclose(stretch[-1], 4.0)  # fastest pair kept, slowest slowed by s


# --------------------------------------------------------------------------
# The grader's own failures, and a learner's slips in calling it
# --------------------------------------------------------------------------


def test_a_grader_failure_is_could_not_check_and_never_undoes_or_counts(capsys, monkeypatch):
    q = QUESTIONS["02.5"]
    assert feedback(capsys, "02.5", q.reference())[0]

    def broken(out, case):
        raise KeyError("a bug of the grader's")

    monkeypatch.setattr(q, "verify", broken)  # the forked worker inherits it
    verdict, out = feedback(capsys, "02.5", q.reference())
    assert not verdict and out == (
        '02.5 · could not check: the grader failed (KeyError: "a bug of the grader\'s"); that says '
        "nothing about your answer and is not recorded as wrong. Restart the kernel, then run the notebook from "
        "the top; if it happens again, please report it.\n"
    )
    entry = grading.current_grader().store.entries["02.5"]
    assert (entry["solved"], entry["tries"], entry["last"]) == (True, 1, "could not check")


def test_packages_replaced_under_the_running_kernel_are_named(capsys, monkeypatch, tmp_path):
    """An install that replaced numpy after the kernel imported it (what a fresh install into a running Colab
    session can do): the installed distribution's version is not the loaded module's."""
    info = tmp_path / "numpy-99.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 99.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def broken(out, case):
        raise AttributeError("'numpy.ufunc' object has no attribute '__qualname__'")

    monkeypatch.setattr(QUESTIONS["02.5"], "verify", broken)
    verdict, out = feedback(capsys, "02.5", QUESTIONS["02.5"].reference())
    assert not verdict and out.count("\n") == 1
    assert (
        f"numpy {np.__version__} is loaded but 99.0 is installed: an install replaced it after this kernel "
        "started. Restart the kernel, then run the notebook from the top."
    ) in out, out
    assert grading.progress("02")["02.5"] == "could not check"


SLIPS = {
    "nothing": (),
    "None": (None,),
    "a float": (3.5,),
    "an object": (object(),),
    "an unknown id": ("no such id!",),
    "a list": ([2],),
}


@pytest.mark.parametrize("args", SLIPS.values(), ids=SLIPS.keys())
@pytest.mark.parametrize("name", [n for n in grading.__all__ if callable(getattr(grading, n))])
def test_every_public_function_answers_a_slip_with_one_line(name, args, capsys):
    """No traceback: one printed line that names the argument and what it accepts (assert_all_correct, whose
    job is to raise, raises an AssertionError that Jupyter shows as its one line). None and nothing are the
    whole course for the functions that take a chapter."""
    function = getattr(grading, name)
    takes_id = name in ("check", "reveal")
    try:
        returned = function(*args)
    except AssertionError as exc:
        assert name == "assert_all_correct", exc
        shown = exc._render_traceback_()
        assert len(shown) == 1 and shown[0].startswith("AssertionError: ")
        said = shown[0]
    else:
        said = capsys.readouterr().out
        if not takes_id and args in ((), (None,)):  # the whole course: not a slip
            assert returned is None or set(returned) == set(QUESTIONS)
            return
        assert said.count("\n") == 1, said
    if takes_id:
        named = "needs a question id" if args in ((), (None,)) else "question id"
        assert named in said and '"02.3"' in said or '"01.1"' in said, said
    elif args not in ((), (None,)):
        assert "chapter must be one of 01, 02" in said and "(or left out for the whole course)" in said, said


def test_check_with_an_answer_but_a_question_id_of_another_type(capsys):
    verdict, out = feedback(capsys, ["02.3"], 0.01)
    assert not verdict and out == "check: the question id must be a string such as \"02.3\", not ['02.3'].\n"
