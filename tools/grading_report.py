"""How the grader holds up, counted: every try of the battery (tools/grading_battery.py) put to ``check``, one
by one.

    .venv/bin/python -m tools.grading_report [-v] [QID ...]

prints

    correct answers rejected: 0 of N; wrong answers accepted: 0 of M; hostile inputs handled: K of K

then every try that went wrong, and how many hostile inputs (all objects whose own methods raise or lie
about their type) got the engine's last resort "the grader could not inspect your answer (<their error>)".
A correct answer counts as rejected unless it gets its one "✓ correct" line; a wrong answer counts as
accepted unless it gets one "✗" line (with its hint's words, for the known mistakes and the models of
mistakes); a hostile input is handled when it gets one line of feedback and no verdict of correct. Anything
``check`` lets out, a traceback, a second line or a warning from the grader's code counts against the grader
in every category.
``main()`` returns 1 if any correct answer was rejected, any wrong answer accepted or any hostile input
not handled, else 0. ``make bench`` calls it; the test suite runs a compact set of the same tries
(tests/test_grading.py) and checks this counting (tests/test_grading_report.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field

from tools import grading_battery as battery
from tools.grading_battery import CATEGORIES, Result, Try


@dataclass
class Tally:
    tried: dict = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    failed: dict = field(default_factory=lambda: {c: [] for c in CATEGORIES})  # category -> [(Try, problem)]
    fallback: int = 0
    seconds: float = 0.0

    def add(self, t: Try, result: Result) -> None:
        self.tried[t.category] += 1
        self.fallback += result.fallback
        self.seconds += result.seconds
        if result.problem is not None:
            self.failed[t.category].append((t, result.problem))

    @property
    def ok(self) -> bool:
        return not any(self.failed.values())

    def figures(self) -> str:
        f, n = {c: len(self.failed[c]) for c in CATEGORIES}, self.tried
        return (
            f"correct answers rejected: {f['correct']} of {n['correct']}; "
            f"wrong answers accepted: {f['wrong']} of {n['wrong']}; "
            f"hostile inputs handled: {n['hostile'] - f['hostile']} of {n['hostile']}"
        )

    def lines(self) -> list[str]:
        out = [self.figures()]
        for category in CATEGORIES:
            out += [f"  {category} {t.id}: {problem}" for t, problem in self.failed[category]]
        if self.fallback:
            out.append(
                f"  {self.fallback} hostile inputs, all objects whose own methods raise or lie about their "
                'type, got the fallback line "the grader could not inspect your answer (<their error>)"'
            )
        return out


def run_battery(tries, run=battery.run, progress=None) -> Tally:
    """Run every try with ``run`` (``battery.run``: through ``grading.check``) and count."""
    tally = Tally()
    for t in tries:
        tally.add(t, run(t))
        if progress:
            progress(t, tally)
    return tally


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="grading_report", description=__doc__.split("\n\n")[0])
    parser.add_argument("qids", nargs="*", help="only these questions (default: the whole bank)")
    parser.add_argument("-v", "--verbose", action="store_true", help="name each question as it is tried")
    args = parser.parse_args(argv)
    qids = args.qids or list(battery.QUESTIONS)
    unknown = [q for q in qids if q not in battery.QUESTIONS]
    if unknown:
        parser.error(f"no such question: {', '.join(unknown)}")
    start = time.perf_counter()
    tries = [t for qid in qids for t in battery.tries(qid)]
    seen = set()

    def progress(t, tally):
        if args.verbose and t.qid not in seen:
            seen.add(t.qid)
            print(f"  {t.qid} ...", file=sys.stderr, flush=True)

    tally = run_battery(tries, progress=progress)
    print("grader counts (tools/grading_report.py): " + "\n".join(tally.lines()))
    print(f"{len(tries)} tries of {len(qids)} questions in {time.perf_counter() - start:.1f} s")
    return 0 if tally.ok else 1


if __name__ == "__main__":
    sys.exit(main())
