"""The grader of the practice notebooks: ``check`` and a question bank.

In a notebook::

    from grading import check, summary
    answer = posenc.frequencies(512)[128]
    check("02.3", answer)      # prints one line of feedback; True if correct
    summary("02")              # "Chapter 02: 6 of 7 solved, 1 attempted, 0 untried." and which
    summary()                  # the whole course

Four kinds of question:

* ``Numeric``   one number, within a relative tolerance; says too high / too
                low and a coarse size (never enough to compute the answer),
                off by a factor of 2, or names a known mistake.
* ``Choice``    one letter or a set of letters ("B", "ac", ["A", "C"]). A wrong set of letters gets
                feedback on the reasoning, never which letters to drop; every option's
                explanation is shown once it is solved, or by ``reveal("01.1")``. The judgement is
                ``posenc_course.choices``'s, the engine the chapters' quizzes use too.
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
grader uses (each question's ``requirement()``). The engine (``kinds``,
``runner``, ``feedback``) and the bank (``bank/chNN.py``, one module per
chapter, collected by ``grading.bank``) are separate. An answer left as ``...`` (the placeholder of the exercise
notebooks) is "not answered yet". ``check`` never lets an exception of its own
reach the learner: whatever it is given, it prints a message.

Progress is kept on disk, in ``~/.posenc-course/progress.json`` or ``$POSENC_PROGRESS`` (``grading.store``), and
so survives a kernel restart: a question once solved stays solved whatever is tried later (each graded try is
counted, and the latest result kept); an unanswered cell records nothing; a check the grader itself could not
carry out ("could not check") is never recorded as wrong. ``summary()`` says what is solved, attempted and
untried, and where the file is; ``reset()`` forgets it all.

Every public function answers a learner's slip (no argument, None, a wrong type, an unknown id) with one printed
line that names the argument and what it accepts, never with a traceback.

The grader's state (the progress file, whether a check is running) and its settings (how the worker starts, a
time limit) are one ``Grader`` (``grading.grader``); each public function asks ``current_grader()`` to do its
work, the default grader made at the first call, so that importing ``grading`` reads no file, prints nothing and
starts no worker. Tests and tools make their own (``Grader(path, time_limit=..., method=...)``, ``None`` for
memory only) and put it in place with ``use_grader``.
"""

from __future__ import annotations

from grading.bank import QUESTIONS
from grading.grader import (
    NOT_GIVEN as _NOT_GIVEN,
    STATES as STATES,
    Grader,
    Verdict,
    current_grader,
    use_grader as use_grader,
)

__all__ = ["check", "summary", "assert_all_correct", "progress", "reveal", "reset", "QUESTIONS"]


# The learner's functions: each is the method of the same name of current_grader(), with its docstring.


def check(qid=None, answer=_NOT_GIVEN) -> Verdict:
    return current_grader().check(qid, answer)


def reveal(qid=None) -> None:
    return current_grader().reveal(qid)


def progress(chapter=None) -> dict[str, str]:
    return current_grader().progress(chapter)


def summary(chapter=None) -> None:
    return current_grader().summary(chapter)


def assert_all_correct(chapter=None) -> None:
    return current_grader().assert_all_correct(chapter)


def reset(chapter=None) -> None:
    return current_grader().reset(chapter)


for _function in (check, reveal, progress, summary, assert_all_correct, reset):
    _function.__doc__ = getattr(Grader, _function.__name__).__doc__
del _function
