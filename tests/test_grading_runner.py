"""The function runner holds against careless and hostile answers.

Each test gives a careless or hostile input and asserts the required behaviour:
every test input runs and is verified; a check ends soon after its limit (``PROMPTLY``); after
it returns no learner code is running (the process and its children stay idle);
Interrupt records "interrupted"; a check inside the learner's function is refused
with one line. Questions that ask for the formula refuse a function that calls
the posenc function under test.
"""

import _thread
import ctypes
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import cloudpickle
import numpy as np
import psutil
import pytest

import grading
import posenc
from grading import QUESTIONS, check, runner

pytestmark = pytest.mark.usefixtures("fresh_progress")  # every test: progress of its own

ROOT = Path(__file__).resolve().parent.parent
IDLE_SECONDS, IDLE_CPU = 3.0, 0.2


# A check that runs out of time returns within its limit plus this many seconds. What is tested is that it stops
# (an endless loop it failed to stop would never return), not how fast a machine under load is: the bound is
# loose because the book may be building on the other core.
PROMPTLY = 15.0


def timed_check(capsys, qid, answer):
    """(verdict, printed text, seconds) of one check."""
    start = time.monotonic()
    verdict = check(qid, answer)
    return verdict, capsys.readouterr().out, time.monotonic() - start


_others: set = set()  # processes other tests' fixtures started (a browser, a server): not the grader's


@pytest.fixture(autouse=True)
def processes_started_elsewhere():
    _others.clear()
    _others.update(p.pid for p in psutil.Process().children(recursive=True))
    yield


# spawn (macOS's and Windows' default) starts a fresh interpreter that imports torch, seconds per test: those runs
# are left to make test, where they would take most of this file's time in the fast tier; fork stays in it.
@pytest.fixture(params=[pytest.param(m, marks=pytest.mark.slow) if m == "spawn" else m for m in runner.METHODS])
def method(request, grader_with):
    """Each worker start method in turn, the setting of the test's grader. With spawn, this module's functions
    travel by value, as a notebook's (``__main__``) do: the worker gets them with the globals they use."""
    grader = grader_with(method=request.param)
    if request.param == "spawn":
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
        grader.runner.warm_up()  # as between a learner's checks: the next worker has imported the grader
        assert grader.runner.wait_for_spare()
    yield request.param
    if request.param == "spawn":
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def new_children() -> list:
    """This process's live descendants that were not there when the test began (but the spawned worker kept
    ready for the next check, which runs no learner code)."""
    spare = grading.current_grader().runner.spare_pid()
    return [p for p in psutil.Process().children(recursive=True) if p.pid not in _others and p.pid != spare]


def cpu_seconds() -> float:
    """CPU time used so far by this process, its reaped children and its live descendants (but not the
    processes that were running before the test)."""
    me = psutil.Process()
    t = me.cpu_times()
    total = t.user + t.system + t.children_user + t.children_system
    for child in new_children():
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.NoSuchProcess:
            pass
    return total


def assert_nothing_left_running():
    """No child process, and less than IDLE_CPU s of CPU over the next IDLE_SECONDS s."""
    assert new_children() == []
    before = cpu_seconds()
    time.sleep(IDLE_SECONDS)
    used = cpu_seconds() - before
    assert used < IDLE_CPU, f"{used:.2f} s of CPU in {IDLE_SECONDS} s after the check returned"


# --------------------------------------------------------------------------
# Learner code: careless and hostile answers
# --------------------------------------------------------------------------


def own_rotation(k, d):
    """T(k) as a learner writes it, with loops: 04.2's own alternative answer."""
    return QUESTIONS["04.2"].alternatives["loop"](k, d)


def rotation_small_only(k, d):
    """Raises (as asked) for odd d, right only for d <= 8 and |k| <= 10."""
    if d % 2:
        raise ValueError("odd d_model")
    return own_rotation(k, d) if d <= 8 and abs(k) <= 10 else np.eye(d)


def rotation_asserts(k, d):
    assert d % 2 == 0, "d_model must be even"
    return own_rotation(k, d)


def rotation_right(k, d):
    if d % 2:
        raise ValueError("odd d_model")
    return own_rotation(k, d)


def own_frequencies(d, base=10000.0):
    return base ** (-2.0 * np.arange((d + 1) // 2) / d)


def gil_first_call(d, base=10000.0):
    """The first call holds the GIL for many seconds (one C call, no bytecode boundary)."""
    if d == 512:
        sum(range(650_000_000))
    return own_frequencies(d, base)


_calls = [0]  # how often two_then_stuck was called, in the worker process (fork copies it, spawn pickles it)


def two_then_stuck(d, base=10000.0):
    """Right for its first two inputs, then never returns. (Not a fixed sleep per input: the count would then
    depend on the machine's load.)"""
    _calls[0] += 1
    if _calls[0] > 2:
        time.sleep(60)
    return own_frequencies(d, base)


def swallows_exception(d, base=10000.0):
    """A loop that catches whatever is raised in it."""
    while True:
        try:
            sum(range(10**6))
        except Exception:
            pass


def swallows_everything(d, base=10000.0):
    while True:
        try:
            sum(range(10**6))
        except:  # noqa: E722 - the point of the test
            pass


def endless(d, base=10000.0):
    while True:
        pass


def sleeps(d, base=10000.0):
    time.sleep(60)


def checks_itself(d, base=10000.0):
    """Check(...) indented by mistake into the function it checks."""
    check("02.5", checks_itself)
    return own_frequencies(d, base)


# --------------------------------------------------------------------------
# Rows 1 and 2: "correct" only when every test input ran and passed
# --------------------------------------------------------------------------


def test_an_expected_exception_does_not_end_the_run(capsys):
    verdict, out, _ = timed_check(capsys, "04.2", rotation_small_only)
    assert not verdict and "04.2 ✗" in out, out
    assert "for k = 1000, d_model = 6:" in out, out  # the 5th input, after the first expected ValueError


def test_the_same_function_written_right_passes(method, capsys):
    verdict, out, _ = timed_check(capsys, "04.2", rotation_right)
    assert verdict and "correct on all 24" in out, out


def test_a_wrong_exception_names_the_expected_one(capsys):
    verdict, out, _ = timed_check(capsys, "04.2", rotation_asserts)
    assert not verdict and "raised AssertionError" in out and "a ValueError was expected" in out, out


@pytest.mark.slow  # waits for a time limit or an idle machine: seconds
@pytest.mark.parametrize(
    "answer, finished",
    [(gil_first_call, 0), (two_then_stuck, 2)],
    ids=["a first call holding the GIL", "fewer finished inputs than cases"],
)
@pytest.mark.parametrize("time_limit", [1.0])
def test_a_check_that_runs_out_of_time_is_too_slow_never_correct(method, answer, finished, capsys):
    verdict, out, seconds = timed_check(capsys, "02.5", answer)
    assert not verdict and f"too slow: {finished} of 24 test inputs finished within 1 s" in out, out
    assert seconds < 1.0 + PROMPTLY


# --------------------------------------------------------------------------
# The time limit: nothing keeps running after check returns
# --------------------------------------------------------------------------


@pytest.mark.slow  # waits for a time limit or an idle machine: seconds
@pytest.mark.parametrize("answer", [swallows_exception, swallows_everything, endless])
@pytest.mark.parametrize("time_limit", [1.0])
def test_after_a_timed_out_check_nothing_keeps_running(method, answer, capsys):
    verdict, out, seconds = timed_check(capsys, "02.5", answer)
    assert not verdict and "too slow" in out and "0 of 24" in out, out
    assert seconds < 1.0 + PROMPTLY
    assert_nothing_left_running()


PID_FILE = None  # where starts_a_process writes the pid of the process it starts


def starts_a_process(d, base=10000.0):
    """Learner code that forks a process of its own, which spins."""
    pid = os.fork()
    if pid == 0:
        while True:
            pass
    PID_FILE.write_text(str(pid))
    time.sleep(60)


@pytest.mark.slow  # waits for a time limit or an idle machine: seconds
@pytest.mark.parametrize("time_limit", [1.0])
def test_processes_started_by_the_learner_are_killed_too(method, capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(globals(), "PID_FILE", tmp_path / "pid")
    verdict, out, _ = timed_check(capsys, "02.5", starts_a_process)
    assert not verdict and "too slow" in out, out
    time.sleep(0.2)
    try:
        assert psutil.Process(int(PID_FILE.read_text())).status() == psutil.STATUS_ZOMBIE  # killed, not yet reaped
    except psutil.NoSuchProcess:
        pass  # killed and reaped


# --------------------------------------------------------------------------
# Interrupt
# --------------------------------------------------------------------------


@pytest.fixture
def sigint_raises_keyboard_interrupt():
    """SIGINT raises KeyboardInterrupt in the main thread, as in a kernel, however pytest was started.

    A shell starts background jobs with SIGINT ignored, and ``interrupt_main`` then does nothing.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.slow  # waits for a time limit or an idle machine: seconds
@pytest.mark.usefixtures("sigint_raises_keyboard_interrupt")
def test_interrupt_stops_the_learner_code_and_records_interrupted(method, capsys):
    assert check("02.5", own_frequencies)
    timer = threading.Timer(0.5, _thread.interrupt_main)  # what the Interrupt button does to the kernel
    timer.start()
    try:
        verdict, out, seconds = timed_check(capsys, "02.5", swallows_everything)
    except KeyboardInterrupt:
        pytest.fail("the interrupt escaped check")
    finally:
        timer.cancel()
    assert not verdict and seconds < 0.5 + PROMPTLY
    assert (
        out.strip().splitlines()[-1]
        == "02.5 · interrupted: stopped before every test input ran; run the cell again to check it."
    )
    assert "Traceback" not in out and "KeyboardInterrupt" not in out
    assert grading.progress("02")["02.5"] == "solved"  # the earlier right answer is not undone
    grading.summary("02")
    assert "02.5 (solved; your last try was interrupted)" in capsys.readouterr().out
    with pytest.raises(AssertionError, match=r"02\.5 \(interrupted\)"):
        grading.assert_all_correct("02")
    assert_nothing_left_running()


# --------------------------------------------------------------------------
# Check inside the learner's function
# --------------------------------------------------------------------------


def test_a_check_inside_the_function_is_refused_with_one_line(method, capsys):
    threads = threading.active_count()
    verdict, out, seconds = timed_check(capsys, "02.5", checks_itself)
    lines = out.strip().splitlines()
    assert lines[0] == (
        "02.5 ✗ check(...) is inside your function: unindent it so that it runs after the function is defined."
    ), out
    assert lines[1:] == ["02.5 ✓ correct on all 24 random test inputs."], out  # the function itself is right
    assert "_TimeUp" not in out and "Error" not in out
    assert threading.active_count() == threads
    assert new_children() == []
    assert check("02.5", own_frequencies)  # the next check at top level runs normally


def test_a_check_inside_the_function_is_refused_under_a_grader_that_is_not_the_default(method, capsys, tmp_path):
    """The learner's code calls grading.check, the public function: while a grader of its own runs it, that is
    the grader refused to, not the default one (which would start a check of its own)."""
    mine = grading.Grader(tmp_path / "mine.json")
    assert mine.check("02.5", checks_itself)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("02.5 ✗ check(...) is inside your function") and len(lines) == 2, lines
    assert mine.progress("02")["02.5"] == "solved" and grading.progress("02")["02.5"] == "untried"
    assert not mine.checking and grading.current_grader() is not mine


# --------------------------------------------------------------------------
# Workers that die, prints, and a return missing in one branch (row 10)
# --------------------------------------------------------------------------


def exits_hard(d, base=10000.0):
    os._exit(3)


def segfaults(d, base=10000.0):
    ctypes.string_at(0)


@pytest.mark.parametrize(
    "answer,expected",
    [
        (exits_hard, "it ended the Python process (exit code 3, e.g. os._exit)"),
        (segfaults, "it crashed (a segmentation fault)"),
    ],
)
def test_a_worker_that_dies_gets_a_clear_message(method, answer, expected, capsys):
    verdict, out, _ = timed_check(capsys, "02.5", answer)
    assert not verdict and out.strip() == (
        f"02.5 ✗ the process running your function stopped for d_model = 512, base = 10000: {expected}."
    ), out


def chatty(d, base=10000.0):
    print("x" * 1000)
    return own_frequencies(d, base)


def test_the_learners_prints_come_back_cut_to_the_limit(method, capsys):
    verdict, out, _ = timed_check(capsys, "02.5", chatty)
    shown = ("x" * 1000 + "\n" + "x" * 1000 + "\n")[: runner.PRINT_LIMIT]
    cut = "\n... (output cut after 2,000 characters)\n"
    assert verdict and out == shown + cut + "02.5 ✓ correct on all 24 random test inputs.\n", out


def prints_then_loops(d, base=10000.0):
    print("started with d =", d)
    while True:
        pass


@pytest.mark.parametrize("time_limit", [0.5])
def test_prints_are_shown_when_time_runs_out(method, capsys):
    verdict, out, _ = timed_check(capsys, "02.5", prints_then_loops)
    assert not verdict and out.startswith("started with d = 512\n02.5 ✗ too slow: 0 of 24"), out


def missing_return_for_large_d(d, base=10000.0):
    omega = own_frequencies(d, base)
    if d < 500:
        return omega


def test_a_return_missing_in_one_branch_is_wrong_not_unanswered(capsys):
    verdict, out, _ = timed_check(capsys, "02.5", missing_return_for_large_d)  # the first input has d = 512
    assert not verdict and out.strip() == (
        "02.5 ✗ your function returned None for d_model = 512, base = 10000 (is a return missing in one branch?)."
    ), out
    assert grading.progress("02")["02.5"] == "wrong"


# --------------------------------------------------------------------------
# Questions that ask for the formula: calling posenc is not an answer
# --------------------------------------------------------------------------

import posenc as pe  # noqa: E402
from posenc import sinusoidal as table  # noqa: E402


def pe_with_a_helper(p, d, layout="interleaved"):
    return helper_table(p, d, layout)


def helper_table(p, d, layout):
    return table(p, d, layout=layout)


def rope_via_closure():
    apply = posenc.apply_rope

    def rope(x, p, layout="interleaved"):
        return apply(x[None], [p], layout=layout)[0]

    return rope


@pytest.mark.parametrize(
    "qid,answer,name",
    [
        ("02.5", lambda d, base=10000.0: posenc.frequencies(d, base), "frequencies"),
        ("02.6", lambda p, d, layout="interleaved": pe.sinusoidal(p, d, layout=layout), "sinusoidal"),
        ("02.6", pe_with_a_helper, "sinusoidal"),
        ("04.2", lambda k, d: posenc.rotation(k, d), "rotation"),
        ("07.3", lambda p, d: table(p, d), "sinusoidal"),
        ("08.2", rope_via_closure(), "apply_rope"),
    ],
)
def test_a_function_that_calls_posenc_is_told_to_write_the_formula(qid, answer, name, capsys):
    verdict, out, _ = timed_check(capsys, qid, answer)
    assert not verdict and out.strip() == (
        f"{qid} ✗ this question asks you to write the formula yourself; your function calls posenc.{name}."
    ), out


def rotation_from_posenc_frequencies(k, d):
    if d % 2:
        raise ValueError("odd d_model")
    t = np.zeros((d, d))
    for i, w in enumerate(posenc.frequencies(d)):
        t[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [
            [math.cos(k * w), math.sin(k * w)],
            [-math.sin(k * w), math.cos(k * w)],
        ]
    return t


def test_other_posenc_helpers_and_other_questions_are_allowed(capsys):
    assert check("04.2", rotation_from_posenc_frequencies)  # the formula is written; ω comes from posenc
    assert check("01.3", lambda x: x + posenc.sinusoidal(len(x), x.shape[1]))  # 01.3 asks to use posenc


# --------------------------------------------------------------------------
# Counts are the worker's own, and no process the learner started outlives the check
# --------------------------------------------------------------------------

PIDS = None  # a folder where the learner's processes below write their pids


def _note_pid():
    (PIDS / str(os.getpid())).write_text("")


def _wait_for_pids(n):
    """Wait (at most 10 s) until ``n`` of the processes started have noted their pid: they are running."""
    deadline = time.monotonic() + 10
    while len(list(PIDS.iterdir())) < n and time.monotonic() < deadline:
        time.sleep(0.01)


def forks_without_waiting(d, base=10000.0):
    """os.fork() on every call, never waited for: the child runs on into the grader's loop."""
    os.fork()
    return own_frequencies(d, base)


def forks_a_spinning_child(d, base=10000.0):
    if d == 512:
        if os.fork() == 0:
            _note_pid()
            while True:
                pass
        _wait_for_pids(1)
    return own_frequencies(d, base)


def leaves_its_session(d, base=10000.0):
    """A grandchild in a session of its own, whose parent has exited: out of reach of a process-group kill."""
    if d == 512:
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                _note_pid()
                while True:
                    pass
            os._exit(0)
        _wait_for_pids(1)
    return own_frequencies(d, base)


def forks_a_tree(d, base=10000.0):
    """A bounded fork bomb: 2^6 processes, every other level in a session of its own, all left sleeping."""
    if d == 512:
        me = os.getpid()
        for level in range(6):
            if os.fork() == 0 and level % 2:
                os.setsid()
        if os.getpid() != me:
            _note_pid()
            while True:
                time.sleep(0.01)
        _wait_for_pids(63)
    return own_frequencies(d, base)


def leaves_its_session_then_exits(d, base=10000.0):
    """The same grandchild, then the process running the function ends itself (os._exit): on Linux the keeper
    (the worker that forked that process) still holds the orphan."""
    leaves_its_session(d, base)  # (which waits until the grandchild runs)
    os._exit(4)


def still_running(pids_dir) -> list[int]:
    pids = [int(p.name) for p in pids_dir.iterdir()]
    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


@pytest.fixture
def pids(tmp_path, monkeypatch):
    folder = tmp_path / "pids"
    folder.mkdir()
    monkeypatch.setitem(globals(), "PIDS", folder)
    return folder


# what is tested is what counts, not speed: a time limit a loaded machine cannot miss (the book may be
# building on the other core)
@pytest.mark.parametrize("time_limit", [60.0])
def test_a_child_forked_into_the_grader_loop_does_not_count(method, capsys):
    verdict, out, seconds = timed_check(capsys, "02.5", forks_without_waiting)
    assert verdict and out.strip() == "02.5 ✓ correct on all 24 random test inputs.", out
    assert new_children() == []


@pytest.mark.parametrize("answer,least", [(forks_a_spinning_child, 1), (leaves_its_session, 1), (forks_a_tree, 63)])
def test_no_process_the_learner_started_is_alive_after_a_correct_check(method, answer, least, capsys, pids):
    verdict, out, _ = timed_check(capsys, "02.5", answer)
    assert verdict and "correct on all 24" in out, out
    assert len(list(pids.iterdir())) == least  # they did start (each wrote its pid before looping)
    time.sleep(0.1)
    assert still_running(pids) == []
    assert new_children() == []


@pytest.mark.skipif(sys.platform != "linux", reason="the keeper is a child subreaper: Linux only")
def test_no_process_is_alive_after_the_process_running_the_function_exits(method, capsys, pids):
    verdict, out, _ = timed_check(capsys, "02.5", leaves_its_session_then_exits)
    assert not verdict and out.strip() == (
        "02.5 ✗ the process running your function stopped for d_model = 512, "
        "base = 10000: it ended the Python process (exit code 4, e.g. "
        "os._exit)."
    ), out
    assert len(list(pids.iterdir())) == 1
    time.sleep(0.1)
    assert still_running(pids) == []
    assert new_children() == []


@pytest.mark.slow  # waits for the time limit
@pytest.mark.parametrize("time_limit", [1.0])
def test_no_process_is_alive_after_a_timed_out_check(method, capsys, pids):

    def tree_then_endless(d, base=10000.0):
        forks_a_tree(d, base)
        while True:
            pass

    verdict, out, seconds = timed_check(capsys, "02.5", tree_then_endless)
    assert not verdict and "too slow: 0 of 24" in out and seconds < 1.0 + PROMPTLY, out
    assert still_running(pids) == []
    assert_nothing_left_running()


def notebook_function(source, name, **names):
    """A function defined as a notebook defines it: in ``__main__``, which a spawned worker cannot import."""
    namespace = {"__name__": "__main__", **names}
    exec(source, namespace)
    return namespace[name]


def test_a_notebook_function_and_closure_reach_a_spawned_worker(capsys, grader_with):
    grader_with(method="spawn")
    f = notebook_function(
        "def frequencies(d, base=10000.0):\n    return base ** (-2.0 * np.arange((d + 1) // 2) / d)\n",
        "frequencies",
        np=np,
    )
    assert f.__module__ == "__main__"
    assert timed_check(capsys, "02.5", f)[0]
    two = 2.0

    def closure(d, base=10000.0):
        return base ** (-two * np.arange((d + 1) // 2) / d)

    assert timed_check(capsys, "02.5", closure)[0]
    two = 1.0
    verdict, out, _ = timed_check(capsys, "02.5", closure)
    assert not verdict and "factor 2 in the exponent is missing" in out, out


def test_a_function_that_cannot_be_sent_is_told_why(capsys, grader_with):
    grader_with(method="spawn")
    lock = threading.Lock()
    verdict, out, _ = timed_check(capsys, "02.5", lambda d, base=10000.0: lock and own_frequencies(d, base))
    assert (
        not verdict
        and out.startswith("02.5 ✗ your function could not be sent to the worker process")
        and "cannot pickle '_thread.lock'" in out
    ), out


def test_a_worker_that_cannot_start_is_could_not_check_not_wrong(capsys, monkeypatch, grader_with):
    """A spawned worker that dies before it takes the job (it cannot import the grader, say), twice: the grader
    failed, not the answer."""
    grader_with(method="spawn")
    monkeypatch.setattr(
        runner,
        "_start_worker",
        lambda: subprocess.Popen(
            [sys.executable, "-c", "raise SystemExit(3)"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        ),
    )
    verdict, out, _ = timed_check(capsys, "02.5", own_frequencies)
    assert not verdict and out.startswith(
        "02.5 · could not check: the worker process that runs your function "
        "could not start; that says nothing about your answer"
    ), out
    assert "not recorded as wrong" in out and "Restart the kernel" in out and out.count("\n") == 1, out
    assert grading.progress("02")["02.5"] == "could not check"
    assert grading.current_grader().store.entries["02.5"]["tries"] == 0


def test_an_unknown_start_method_is_refused_with_the_allowed_ones(tmp_path):
    allowed = "fork, spawn" if sys.platform == "linux" else "spawn"
    with pytest.raises(ValueError, match=f"^method must be one of {allowed} here, not 'thread'$"):
        grading.Grader(tmp_path / "progress.json", method="thread")


@pytest.mark.parametrize("seconds", [0, -1.0, math.inf, math.nan, "5", True])
def test_a_time_limit_that_is_not_a_positive_number_of_seconds_is_refused(seconds, tmp_path):
    with pytest.raises(ValueError, match=r"^time_limit must be a positive number of seconds \(or None: each"):
        grading.Grader(tmp_path / "progress.json", time_limit=seconds)


def test_off_linux_the_worker_is_spawned():
    assert "spawn" in runner.METHODS
    assert runner.METHODS == (("fork", "spawn") if sys.platform == "linux" else ("spawn",))


# Imports the grader in a fresh Python as on macOS (sys.platform says "darwin" while grading is imported, so that
# its worker is spawned), watching every process started and every opening of the progress file (audit hooks),
# and reports what importing did, then what the first check did.
IMPORT_AS_ON_MACOS = """
import contextlib, io, json, os, sys
import ctypes, importlib.metadata, subprocess, sysconfig, mpmath, numpy, torch, posenc, posenc_course.bug_zoo
import psutil

progress, events = os.environ["POSENC_PROGRESS"], []
started = ("subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn", "os.system")


def watch(event, args):
    if event in started or (event == "open" and args and str(args[0]) == progress):
        events.append(event)


sys.addaudithook(watch)
printed = io.StringIO()
platform, sys.platform = sys.platform, "darwin"
with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
    import grading
sys.platform = platform
from grading import runner

report = {"method": grading.current_grader().runner.method, "events": list(events), "printed": printed.getvalue(),
          "children": len(psutil.Process().children(recursive=True))}
with contextlib.redirect_stdout(printed):
    grading.check("02.3", 0.01)
report["after a check"] = {"events": events[len(report["events"]):],
                           "spare": grading.current_grader().runner.spare_pid() is not None}
print(json.dumps(report))
"""


def test_importing_the_grader_where_workers_are_spawned_starts_nothing_reads_nothing_prints_nothing(tmp_path):
    """Where the worker is spawned (macOS, Windows), the first worker starts at the first check, not at import;
    importing reads no progress file (a damaged one would be named) and prints nothing."""
    path = tmp_path / "progress.json"
    path.write_text("{damaged")
    env = {
        **os.environ,
        "POSENC_PROGRESS": str(path),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_AS_ON_MACOS], env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["method"] == "spawn", report  # the pretence worked: this is the grader as on macOS
    assert (report["events"], report["printed"], report["children"]) == ([], "", 0), report
    # ... and the first check reads the file and starts the next check's worker
    assert report["after a check"] == {"events": ["open", "subprocess.Popen"], "spare": True}, report


def test_a_worker_that_dies_before_its_job_is_replaced_once(capsys, monkeypatch, grader_with):
    grader = grader_with(method="spawn")
    real, started = runner._start_worker, []

    def first_one_dies():
        started.append(1)
        if len(started) == 1:  # a worker that ends before it reads its job (as if killed while idle)
            return runner.subprocess.Popen(
                [sys.executable, "-c", "pass"], stdin=runner.subprocess.PIPE, stdout=runner.subprocess.PIPE
            )
        return real()

    monkeypatch.setattr(runner, "_start_worker", first_one_dies)
    verdict, out, _ = timed_check(capsys, "02.5", own_frequencies)
    assert verdict and out.strip() == "02.5 ✓ correct on all 24 random test inputs.", out
    assert len(started) == 3  # the dead one, its replacement, and the next check's spare
    grader.runner.stop_spare()


@pytest.mark.parametrize(
    "answer,expected",
    [
        (own_frequencies, "02.5 ✓ correct on all 24 random test inputs."),
        (
            exits_hard,
            "02.5 ✗ the process running your function stopped for d_model = 512, base = 10000: it ended the "
            "Python process (exit code 3, e.g. os._exit).",
        ),
        (forks_without_waiting, "02.5 ✓ correct on all 24 random test inputs."),
    ],
)
# what is tested is the verdict, not speed: a limit the browser tests on the other core cannot make it miss
@pytest.mark.parametrize("time_limit", [60.0])
def test_without_a_keeper_as_off_linux_the_worker_runs_the_function_itself(answer, expected, capsys, monkeypatch):
    monkeypatch.setattr(runner, "KEEPER", False)
    verdict, out, _ = timed_check(capsys, "02.5", answer)
    assert out.strip() == expected, out
    assert new_children() == []


def test_back_to_back_runs_each_get_their_own_messages():
    """A reader thread owns its pipe and closes it itself: if the parent closed it while the thread could still
    read, the next run's pipe could get the same descriptor number and the old thread steal its verdict (seen
    as "it ended the Python process (exit code 0)" for about 1 check in 700 in the maintainer's report)."""

    def work(n):
        def run(report):
            for _ in range(24):
                report()
            return ("correct", str(n))

        return run

    threads = threading.active_count()
    run = runner.Runner().run
    outcomes = [run(work(n), 5.0) for n in range(150)]
    bad = [(n, o) for n, o in enumerate(outcomes) if o.result != ("correct", str(n)) or o.done != 24]
    assert bad == []
    deadline = time.monotonic() + 5
    while threading.active_count() > threads and time.monotonic() < deadline:
        time.sleep(0.01)  # each reader ends at the end of its pipe
    assert threading.active_count() == threads


# --------------------------------------------------------------------------
# Processes started with subprocess, in a session of their own: none outlives the check
# --------------------------------------------------------------------------

SPINS = "while True: pass"
DOUBLE_FORKS = "if os.fork(): os._exit(0)\nwhile True: pass"
# Forks and exits over and over: the live process changes all the time, and each orphan goes to the keeper.
WALKS = "while True:\n    if os.fork(): os._exit(0)"
FIFO = None  # a named pipe the learner's processes hold open for writing: its end comes when all are dead


def _start_in_a_new_session(program, new_session=True):
    """subprocess.Popen in a session of its own (or not); returns once it runs (it notes its pid)."""
    subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import os\nos.open({str(FIFO)!r}, os.O_WRONLY)\n"
            f"open({str(PIDS)!r} + '/' + str(os.getpid()), 'w').close()\n{program}",
        ],
        start_new_session=new_session,
    )
    _wait_for_pids(1)


def starting(program):
    """A right answer that, for d = 512, first starts ``program`` in a session of its own."""

    def frequencies(d, base=10000.0):
        if d == 512:
            _start_in_a_new_session(program)
        return own_frequencies(d, base)

    return frequencies


ZOMBIES = 1500  # more than one page of a list of children holds (each pid and a space: 4,096 bytes hold 819 at most)
MAKE_ZOMBIES = f"for _ in range({ZOMBIES}):\n    if os.fork() == 0: os._exit(0)\n"
popen_spinner, popen_double_fork, popen_walker = starting(SPINS), starting(DOUBLE_FORKS), starting(WALKS)


def popen_spinner_then_stuck(d, base=10000.0):
    if d == 512:
        _start_in_a_new_session(SPINS)
    time.sleep(60)


@pytest.fixture
def fifo(tmp_path, monkeypatch, pids):
    """FIFO's reading end. A process that holds it open is alive; however often it forks and exits (a walker's
    pid is alive a moment: a look at the process table misses it). What is left after the test is killed, so
    that a failing test leaves nothing spinning."""
    monkeypatch.setitem(globals(), "FIFO", tmp_path / "fifo")
    os.mkfifo(FIFO)
    read_fd = os.open(FIFO, os.O_RDONLY | os.O_NONBLOCK)
    yield read_fd
    for _ in range(100):
        if not writers_alive(read_fd, 0.02):
            break
        for pid in (int(p.name) for p in pids.iterdir()):
            for kill in (os.killpg, os.kill):  # a program in a session of its own stays in its first group
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
    os.close(read_fd)


def writers_alive(read_fd, seconds=0.5) -> bool:
    """Whether a process still holds FIFO open for writing ``seconds`` after this is called (those being killed
    take a moment to end)."""
    end = time.monotonic() + seconds
    while True:
        try:
            if os.read(read_fd, 1 << 16) == b"":
                return False  # the end of the pipe: no writer is left
        except BlockingIOError:
            pass
        if time.monotonic() > end:
            return True
        time.sleep(0.01)


@pytest.mark.skipif(sys.platform != "linux", reason="the keeper is a child subreaper: Linux only")
@pytest.mark.parametrize("answer", [popen_spinner, popen_double_fork, popen_walker])
def test_no_process_started_in_a_new_session_outlives_a_correct_check(method, answer, capsys, pids, fifo):
    verdict, out, _ = timed_check(capsys, "02.5", answer)
    assert verdict and "correct on all 24" in out, out
    assert len(list(pids.iterdir())) == 1  # it ran
    assert not writers_alive(fifo)
    assert new_children() == []


@pytest.mark.slow  # waits for the time limit
@pytest.mark.skipif(sys.platform != "linux", reason="the keeper is a child subreaper: Linux only")
@pytest.mark.parametrize("time_limit", [1.0])
def test_no_process_started_in_a_new_session_outlives_a_timed_out_check(method, capsys, pids, fifo):
    verdict, out, _ = timed_check(capsys, "02.5", popen_spinner_then_stuck)
    assert not verdict and "too slow: 0 of 24" in out, out
    assert len(list(pids.iterdir())) == 1
    assert not writers_alive(fifo)
    assert_nothing_left_running()


# --------------------------------------------------------------------------
# Every way a check ends, with a process the learner's function started and left running
# --------------------------------------------------------------------------

# How each check ends, after the function started a spinning process for its first input (d = 512) and returned or
# not: (what it does then, the start of the verdict's line). The process is left behind in every case: the
# function never waits for it.
ENDINGS = {
    "passed": (lambda d, base: own_frequencies(d, base), "02.5 ✓ correct on all 24"),
    "wrong": (lambda d, base: 1.5 * own_frequencies(d, base), "02.5 ✗ for d_model = 512"),
    "refused": (lambda d, base: posenc.frequencies(d, base), "02.5 ✗ this question asks you to write"),
    "raised": (lambda d, base: {}["no such key"], "02.5 ✗ your code raised KeyError"),
    "worker died": (lambda d, base: os._exit(3), "02.5 ✗ the process running your function stopped"),
    "timed out": (lambda d, base: time.sleep(60), "02.5 ✗ too slow: 0 of 24"),
    "interrupted": (lambda d, base: time.sleep(60), "02.5 · interrupted"),
}


def leaving_a_process(ending, new_session):
    then = ENDINGS[ending][0]

    def frequencies(d, base=10000.0):
        if d == 512:
            _start_in_a_new_session(SPINS, new_session)
        return then(d, base)

    return frequencies


@pytest.mark.skipif(sys.platform != "linux", reason="the keeper is a child subreaper: Linux only")
@pytest.mark.parametrize("new_session", [False, True], ids=["same session", "new session"])
@pytest.mark.parametrize(
    "ending, time_limit",
    [
        pytest.param(
            e,
            1.0 if e == "timed out" else 60.0,
            marks=[pytest.mark.slow] if e in ("timed out", "interrupted") else [],  # waits a second
            id=e,
        )
        for e in ENDINGS
    ],
)
@pytest.mark.usefixtures("sigint_raises_keyboard_interrupt")
def test_no_process_the_function_left_outlives_any_ending(method, ending, new_session, capsys, fifo):
    timer = threading.Timer(1.0, _thread.interrupt_main)  # the Interrupt button, once the process runs
    if ending == "interrupted":
        timer.start()
    try:
        verdict, out, _ = timed_check(capsys, "02.5", leaving_a_process(ending, new_session))
    finally:
        timer.cancel()
    assert bool(verdict) == (ending == "passed"), out
    assert out.splitlines()[-1].startswith(ENDINGS[ending][1]), out
    assert len(list(PIDS.iterdir())) == 1  # the process did start
    assert not writers_alive(fifo)
    assert new_children() == []


@pytest.mark.skipif(sys.platform != "linux", reason="the keeper is a child subreaper: Linux only")
def test_a_walker_behind_more_than_a_page_of_zombies_is_ended(method, capsys, monkeypatch, pids, fifo):
    """One read() of a /proc file returns one page at most: a keeper with more zombie children than that, and
    the live process last in its list, must still be found. The zombies' parent exits first, so that they go to
    the keeper, where they stay (it reaps none). The walk of the children lists must find it by itself: the
    look at every process's parent that follows it catches a walker only by luck (the pid it lists has often
    exited, its child not listed yet, by the time its parent is read)."""
    monkeypatch.setattr(runner, "_table_descendants", lambda root: [])
    ready = pids.parent / "zombies made"
    program = f"{MAKE_ZOMBIES}open({str(ready)!r}, 'w').close()\n{WALKS}"

    def frequencies(d, base=10000.0):
        if d == 512:
            _start_in_a_new_session(program)
            while not ready.exists():
                time.sleep(0.01)
        return own_frequencies(d, base)

    verdict, out, _ = timed_check(capsys, "02.5", frequencies)
    assert verdict and "correct on all 24" in out, out
    assert len(list(pids.iterdir())) == 1
    assert not writers_alive(fifo)
    assert new_children() == []


@pytest.mark.skipif(sys.platform != "linux", reason="reads Linux's /proc")
def test_a_list_of_children_longer_than_a_page_is_read_whole():
    parent = subprocess.Popen(
        [sys.executable, "-c", f"import os, sys\n{MAKE_ZOMBIES}print(flush=True)\nsys.stdin.read()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        parent.stdout.readline()  # every child has been forked (and each exits at once: a zombie, never reaped)
        listed = runner._proc_children(parent.pid)
        assert len(Path(f"/proc/{parent.pid}/task/{parent.pid}/children").read_text()) > 4096  # more than a page
        assert len(listed) == len(set(listed)) == ZOMBIES
    finally:
        parent.kill()
        parent.wait()


@pytest.mark.skipif(sys.platform != "linux", reason="reads Linux's /proc")
def test_a_process_the_kernels_children_lists_miss_is_ended_too(method, capsys, monkeypatch, fifo):
    """/proc/<pid>/task/<tid>/children is a best effort (proc(5)): with lists that show nothing, the process the
    function left is still found (from every process's parent) and ended."""
    monkeypatch.setattr(runner, "_proc_children", lambda pid: [])
    verdict, out, _ = timed_check(capsys, "02.5", leaving_a_process("passed", True))
    assert verdict, out
    assert len(list(PIDS.iterdir())) == 1
    assert not writers_alive(fifo)
    assert new_children() == []
