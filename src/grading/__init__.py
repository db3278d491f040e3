"""The grader of the practice notebooks: ``check`` and a question bank.

In a notebook::

    from grading import check, summary
    answer = posenc.frequencies(512)[128]
    check("02.3", answer)      # prints one line of feedback; True if correct
    summary("02")              # "Chapter 02: 6 of 7 correct." and what is left

Four kinds of question:

* ``Numeric``   one number, within a relative tolerance; says too high / too
                low and a coarse size (never enough to compute the answer),
                off by a factor of 2, or names a known mistake.
* ``Choice``    one letter or a set of letters ("B", "ac", ["A", "C"]). A wrong set of letters gets
                feedback on the reasoning, never which letters to drop; every option's
                explanation is shown once it is solved, or by ``reveal("01.1")``.
* ``Array``     an array of numbers; checks shape, then names the first wrong
                element.
* ``Function``  a function (or a class) the learner writes. It is called on
                many seeded random inputs in a worker process killed at the
                time limit (``grading.runner``) and compared with ``posenc``;
                exceptions, wrong types, wrong shapes, NaN and changed inputs
                each get their own message. ``check`` called from inside the
                learner's function is refused; Interrupt records the question
                as "interrupted".

Expected answers are computed from the grader's private copy of ``posenc``
(``grading.reference``), fixed when the grader is imported, never typed in;
patching ``posenc`` in a notebook cannot move them. Each question states what
it accepts (tolerance, dtype, shape) in its text, from the same parameters the
grader uses (``grading.bank.common.requirement``). The engine (``kinds``,
``runner``, ``feedback``) and the bank (``bank/ch01.py`` ... ``ch07.py``, one
module per chapter) are separate. An answer left as ``...`` (the placeholder of the exercise
notebooks) is "not answered yet". ``check`` never lets an exception of its own
reach the learner: whatever it is given, it prints a message.

Progress (the latest status of each question) is kept on disk, in ``~/.posenc-course/progress.json`` or
``$POSENC_PROGRESS`` (``grading.store``), and so survives a kernel restart; ``summary`` says where it is, and
``reset()`` forgets it.
"""

from __future__ import annotations

from grading.bank import QUESTIONS
from grading.feedback import _short
from grading.kinds import CORRECT, INTERRUPTED, UNANSWERED, WRONG
from grading import runner as _runner
from grading.store import Store as _Store, default_path

__all__ = ["check", "summary", "assert_all_correct", "progress", "reveal", "reset", "QUESTIONS"]

_store = _Store(default_path())  # the progress file (grading/store.py): read now, written after every check
_status = _store.status          # question id -> latest status (the store's own dict)
_revealed = _store.revealed      # choice questions whose answer the learner asked to see
if _store.load():
    print(f"grading: {_store.problem}")
_checking = False  # a check is running: a check called from the learner's code is refused
_refused = False   # ... and that refusal has been printed once


if _runner.METHOD == "spawn" and not _runner._serving:  # off Linux: the first check's worker imports now
    _runner.warm_up()


# --------------------------------------------------------------------------
# The public functions
# --------------------------------------------------------------------------

class Verdict:
    """What ``check`` returns: true when the answer is correct.

    Behaves like ``True``/``False`` in ``if`` and ``==``; in Jupyter it shows
    nothing, so a question cell ends with the feedback line alone.
    """

    def __init__(self, ok: bool):
        self.ok = bool(ok)

    def __bool__(self):
        return self.ok

    def __eq__(self, other):
        return self.ok == other

    def __hash__(self):
        return hash(self.ok)

    def __repr__(self):
        return repr(self.ok)

    def _ipython_display_(self):
        pass


def check(qid, answer) -> Verdict:
    """Grade ``answer`` to question ``qid``, print feedback, record progress."""
    global _checking, _refused
    if _checking:  # called from the learner's code while a check runs it
        if not _refused:  # once: the learner's function may call it on every test input
            print(f"{qid} ✗ check(...) is inside your function: unindent it so that it runs "
                  "after the function is defined.")
        _refused = True
        return Verdict(False)
    question = QUESTIONS.get(qid) if isinstance(qid, str) else None
    if question is None:
        print(f"{qid!r} is not a question id; ids look like '02.3' ({len(QUESTIONS)} questions known).")
        return Verdict(False)
    _checking, _refused = True, False
    try:
        if answer is Ellipsis:
            status, message = UNANSWERED, "replace the ... with your answer, then run this cell again."
        else:
            status, message = question.judge(answer)
    except KeyboardInterrupt:  # the Interrupt button: the learner's code has been stopped
        status, message = INTERRUPTED, "stopped before every test input ran; run the cell again to check it."
    except Exception as exc:  # a bug of ours or an answer too strange to inspect
        status = WRONG
        message = f"the grader could not check this answer ({type(exc).__name__}: {_short(exc)})."
    except BaseException as exc:  # SystemExit, GeneratorExit ... raised by the answer itself (e.g. its __array__)
        status = WRONG
        text = _short(exc)
        message = (f"reading your answer raised {type(exc).__name__}{': ' + text if text else ''}; "
                   "give plain numbers, a list or an array.")
    finally:
        _checking = False
    _save(_store.record(qid, status))
    mark = {CORRECT: "✓ correct", WRONG: "✗", UNANSWERED: "· not answered yet:", INTERRUPTED: "· interrupted:"}[status]
    print(f"{qid} {mark}" + ("" if status == CORRECT and not message else f" {message}"))
    return Verdict(status == CORRECT)


def reveal(qid) -> None:
    """Print the answer of choice question ``qid`` with every option's explanation (recorded as shown)."""
    question = QUESTIONS.get(qid) if isinstance(qid, str) else None
    if question is None:
        print(f"{qid!r} is not a question id; ids look like '02.3' ({len(QUESTIONS)} questions known).")
        return
    if question.kind != "choice":
        print(f"{qid}: only the answers of choice questions are shown here; the worked answer of every question "
              f"is in the solutions notebook of chapter {qid[:2]}.")
        return
    _save(_store.record(qid, revealed=True))
    print(f"{qid} answer: {question.reference()} — why each option is right or wrong:\n{question.explained()}")


def _save(problem):
    if problem:
        print(f"grading: {problem}")


def _use_progress_file(path) -> None:
    """Keep progress in the file ``path`` from now on (None: in memory only), reading what it holds.
    For the tests and the maintainer's tools, which must not touch a learner's file."""
    _store.path = None if path is None else __import__("pathlib").Path(path)
    _store.load()


def progress(chapter) -> dict[str, str]:
    """Status of every question of ``chapter``: correct, wrong, unanswered or unchecked.

    ``chapter`` may be written "02", "2", " 02", 2 or 2.0; an unknown one raises
    ValueError naming the chapters that exist.
    """
    chapter = _chapter(chapter)
    return {q: _status.get(q, "unchecked") for q in QUESTIONS if q.split(".")[0] == chapter}


def summary(chapter) -> None:
    """Print "n of m correct" for ``chapter`` and list what is not correct yet."""
    try:
        states = progress(chapter)
    except ValueError as exc:
        print(exc)
        return
    done = [q for q, s in states.items() if s == CORRECT]
    print(f"Chapter {_chapter(chapter)}: {len(done)} of {len(states)} correct.")
    for status, label in [(WRONG, "wrong"), (UNANSWERED, "not answered yet"), (INTERRUPTED, "interrupted (run again)"),
                          ("unchecked", "not checked yet (run their cells)")]:
        ids = [q for q, s in states.items() if s == status]
        if ids:
            print(f"  {label}: {', '.join(ids)}")
    print(f"  {_store.where()}")
    shown = sorted(q for q in states if q in _revealed)
    if shown:
        print(f"  answer shown (grading.reveal): {', '.join(shown)}")
    if len(done) == len(states):
        print("  All answers are correct.")


def assert_all_correct(chapter) -> None:
    """Raise AssertionError naming every question of ``chapter`` not answered correctly
    (or the chapters that exist, when ``chapter`` is not one of them)."""
    try:
        states = progress(chapter)
    except ValueError as exc:
        raise AssertionError(str(exc)) from None
    bad = {q: s for q, s in states.items() if s != CORRECT}
    if bad:
        listing = ", ".join(f"{q} ({s})" for q, s in bad.items())
        raise AssertionError(f"chapter {_chapter(chapter)}: not all answers are correct: {listing}")


def reset() -> None:
    """Forget every recorded result, in memory and in the progress file (a refused file is moved aside)."""
    done = _store.reset()
    if done:
        print(done)


def _chapter(chapter) -> str:
    """The two-digit chapter id ("02") of 2, 2.0, "2", " 02" or "02"; ValueError for anything else."""
    chapters = sorted({q.split(".")[0] for q in QUESTIONS})
    name = None
    if isinstance(chapter, str):
        name = f"{int(chapter):02d}" if chapter.strip().isdecimal() else None
    elif not isinstance(chapter, bool):
        try:
            value = float(chapter)  # 2, 2.0, numpy integers and floats
        except (TypeError, ValueError, OverflowError):
            value = None
        name = f"{int(value):02d}" if value is not None and value.is_integer() else None
    if name not in chapters:
        raise ValueError(f"No questions for chapter {chapter!r}: the chapters are {', '.join(chapters)}.")
    return name
