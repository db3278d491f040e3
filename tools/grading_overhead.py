"""What a check costs on top of the learner's code, per function question and worker start method.

    .venv/bin/python -m tools.grading_overhead [--repeat N] [--methods fork spawn]

For each function question the reference answer is checked ``--repeat`` times through ``grading.check`` (a
worker process, the learner's function sent to it, every case verified there) and the same cases are run and
verified in this process, without a worker, as often. The overhead is the median of the first minus the median
of the second: starting the worker, sending the function, collecting the messages, killing and reaping. With
spawn, each timed check waits first until the worker started ahead has imported the grader, as it has when a
learner reads between checks; the first spawned worker's start (``cold``) is reported on its own. The
two are timed alternately so that machine noise hits both alike; both use one torch thread (as the worker
does), and a first round of each, which warms caches up, is not counted.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import time

import numpy as np
import torch

import grading
from grading import QUESTIONS, runner
from grading.feedback import seed_for


def function_questions() -> list[str]:
    return [qid for qid, q in QUESTIONS.items() if q.kind == "function"]


def overhead(qid, grader, repeat=5) -> float:
    """Median seconds of ``grader.check(qid, reference)`` minus median seconds of the same work in this process."""
    q = QUESTIONS[qid]
    f = q.reference()
    cases = q.cases(np.random.default_rng(seed_for(qid)))
    checked, direct = [], []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the worker
    try:
        for _ in range(repeat + 1):  # the first round warms up (imports, caches) and is not counted
            if grader.runner.method == "spawn":  # the worker kept ready has imported the grader (as between checks)
                grader.runner.wait_for_spare()
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                assert grader.check(qid, f), qid
            checked.append(time.perf_counter() - start)
            start = time.perf_counter()
            assert q._run_cases(f, cases, lambda: None)[0] == "correct", qid
            direct.append(time.perf_counter() - start)
    finally:
        torch.set_num_threads(threads)
        grader.store.entries.pop(qid, None)
    return statistics.median(checked[1:]) - statistics.median(direct[1:])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="grading_overhead", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--methods", nargs="*", default=list(runner.METHODS))
    args = parser.parse_args(argv)
    measure(args.methods, args.repeat)
    return 0


def measure(methods, repeat) -> None:
    """Print the cold start of a spawned worker (if spawn is among ``methods``), then each method's overhead.
    Each method's checks are a grader's of their own, in memory: the timed checks are not the learner's progress."""
    if "spawn" in methods:
        cold = grading.Grader(None, method="spawn")  # a new grader: no worker started ahead
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            cold.check("02.5", QUESTIONS["02.5"].reference())
        print(f"spawn, cold (no worker started ahead): 02.5 checked in {time.perf_counter() - start:.2f} s")
        cold.runner.stop_spare()
    for method in methods:
        grader = grading.Grader(None, method=method)
        costs = {qid: overhead(qid, grader, repeat) for qid in function_questions()}
        grader.runner.stop_spare()
        low, high = min(costs.values()), max(costs.values())
        print(
            f"{method}: overhead per function question {low * 1e3:.1f}-{high * 1e3:.1f} ms "
            f"(median {statistics.median(costs.values()) * 1e3:.1f} ms over {len(costs)} questions)"
        )
        print("   " + ", ".join(f"{qid} {s * 1e3:.1f}" for qid, s in costs.items()))


if __name__ == "__main__":
    raise SystemExit(main())
