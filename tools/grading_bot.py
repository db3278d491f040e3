"""The elimination bot: can a multi-select question be solved without reading it?

    .venv/bin/python -m tools.grading_bot

The bot answers every multi-select question (more than one right letter) the blind way: it selects every
option, then drops whatever option letters the feedback names, and tries again, at most ``TRIES`` times. It
prints how many questions it solved and, next to it, what blind guessing achieves in the same number of tries
(``blind_rate``: a guesser who tries distinct sets of letters at random solves a question of n options in k
tries with probability k / (2^n - 1)). Feedback that names the letters to drop lets the bot solve every question
on the second try; feedback on the reasoning leaves it no better than blind guessing.

``main()`` returns 1 if the bot solved any question, else 0.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass, field

import grading
from grading import QUESTIONS

TRIES = 3


@dataclass
class Run:
    qid: str
    solved_at: int | None  # the try that solved it (1, 2, ...), or None
    answers: list = field(default_factory=list)  # what the bot gave, try by try


def multi_select() -> list[str]:
    return [qid for qid, q in QUESTIONS.items() if q.kind == "choice" and len(q.correct) > 1]


def named_letters(feedback: str, letters: str) -> set[str]:
    """The option letters that ``feedback`` names: capital letters standing alone ("B and D are not right")."""
    return set(re.findall(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])", feedback)) & set(letters)


def eliminate(qid, tries=TRIES, check=None) -> Run:
    """Select every option, drop what the feedback names, try again, at most ``tries`` times."""
    check = check or grading.check
    letters = QUESTIONS[qid].letters
    chosen, run = set(letters), Run(qid, None)
    for n in range(1, tries + 1):
        answer = "".join(sorted(chosen))
        run.answers.append(answer)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            verdict = check(qid, answer)
        if verdict:
            run.solved_at = n
            return run
        chosen -= named_letters(out.getvalue().split(" ", 1)[-1], letters)
        if not chosen:
            return run
    return run


def blind_rate(qid, tries=TRIES) -> float:
    """The chance that blind guessing (distinct non-empty sets at random) solves ``qid`` within ``tries``."""
    return min(1.0, tries / (2 ** len(QUESTIONS[qid].letters) - 1))


def main(argv=None) -> int:
    with grading.use_grader(grading.Grader(None)):  # in memory: the bot's tries are not the learner's progress
        runs = [eliminate(qid) for qid in multi_select()]
    solved = [r for r in runs if r.solved_at is not None]
    blind = sum(blind_rate(r.qid) for r in runs)
    print(
        f"elimination bot: solved within {TRIES} tries {len(solved)} of {len(runs)} multi-select questions "
        f"(blind guessing: {blind:.1f} of {len(runs)} expected)"
    )
    for r in runs:
        print(f"  {r.qid}: {' -> '.join(r.answers)}" + (f"  solved at try {r.solved_at}" if r.solved_at else ""))
    return 1 if solved else 0


if __name__ == "__main__":
    raise SystemExit(main())
