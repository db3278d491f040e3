"""Running a learner's function on its test inputs, with a time limit."""

from __future__ import annotations

import copy
import ctypes
import threading
import time


def _run(call, cases, limit):
    """Run the learner's code on each case in a daemon thread; stop at the first exception.

    At the time limit the worker is told to stop: it starts no further case, and
    a pure-Python loop still running gets an exception injected so that it does
    not keep burning CPU (code blocked inside C, such as sleep, ends on its own).
    """
    runs, deadline = [], time.monotonic() + limit

    def work():
        try:
            for case in cases:
                if time.monotonic() > deadline:
                    return
                given = copy.deepcopy(case.args)
                try:
                    out = call(given)
                except BaseException as exc:  # noqa: BLE001 - SystemExit and friends too
                    runs.append((case, None, exc, given))
                    return
                runs.append((case, out, None, given))
        except _TimeUp:  # arrived between two calls: nothing to report
            pass

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(limit)
    done = list(runs)
    if worker.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), ctypes.py_object(_TimeUp))
        return done, True
    return done, False


class _TimeUp(Exception):
    """Injected into a learner's code that ran past the time limit."""
