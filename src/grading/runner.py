"""Running a learner's code with a time limit, in a worker process that can be stopped for real.

A ``Runner`` (each ``grading.Grader`` owns one) holds the settings: how its workers start (``method``), the time
limit that overrides each question's own (``time_limit``, for tests and tools) and, where workers are spawned, the
worker it keeps started ahead. ``Runner.run(work, limit)`` calls ``work(report)`` (which runs the learner's function
on every test input, verifies each output and calls ``report()`` after each input that passed) and returns an
``Outcome``: what ``work`` returned, how many inputs were reported, and whether time ran out or the worker died.

``work`` always runs in a worker process, started one of two ways (``Runner.method``, one of ``METHODS``):

* ``"fork"`` (Linux only): a forked child inherits the learner's function and the question; nothing is sent.
* ``"spawn"`` (every OS; the only one off Linux, where fork is unavailable, on Windows, or unsafe, on macOS): a
  fresh interpreter (``sys.executable``) that has imported the grader before it is needed (from the first check
  on, the runner keeps one worker started ahead, its spare), and receives ``work`` by value, pickled with cloudpickle:
  functions and classes defined in a notebook (``__main__``) travel with the globals they use, bank questions by
  their id (the worker has its own bank, whose expected values are fixed at its import, as in the kernel).

Either way the worker verifies the outputs itself and sends back, over its own pipe, only small messages: one
per finished input, the learner's prints (the first ``PRINT_LIMIT`` characters, shown even when time runs out)
and, at the end, a JSON verdict. Every message carries the pid of the process that sent it, and only the
worker's own count: a process forked by the learner's code that runs on into the grader's loop leaves at its
first report (``os._exit``), and its messages are ignored. The parent waits until the deadline (``limit``
seconds from the worker's start message, which a busy machine may delay by up to ``STARTUP`` seconds, more
for a worker still importing), then ends the worker and everything it started (``_end``):

1. the worker's process group is stopped (SIGSTOP): nothing in it forks or reaps any more;
2. every descendant is killed (SIGKILL), round after round until none is left alive (on Linux, until the
   worker's children, read once every one of them was already seen dead, are all dead: one walk of /proc can
   miss a process that is being reparented, see ``_kill_tree``; and then, because those lists are a best
   effort, until a look at the parent of every process on the machine finds none either). On Linux the worker is
   a keeper: a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``) that forks the process running ``work``
   and outlives it, so a grandchild that called ``os.setsid()`` and whose parents have all exited is
   reparented to the keeper, not to init, and is found too, even when the runner crashed or called
   ``os._exit`` (the keeper reports how it ended);
3. the worker itself is killed and reaped.

This runs however the check ends (passed, wrong, refused, raised, timed out, interrupted, the worker died): so
after ``run`` returns, no process the learner's code started is alive, whatever it catches (``except
Exception``, a bare ``except``), however long a single call holds the GIL, and whether it forks, forks in a
loop or leaves its session. A worker that dies without a verdict (a crash, ``os._exit`` in the learner's code,
the out-of-memory killer) is reported as such. The worker ignores Ctrl-C (the parent handles it), uses one
torch thread, writes nothing to the kernel's streams (they are ZMQ sockets in Jupyter) and leaves with
``os._exit``. Ctrl-C (Jupyter's Interrupt button) while the parent waits ends the worker as above and is
raised again for ``check`` to report.

What this stops, and what it does not try to stop. The worker is built against a learner's mistakes, however
odd: endless loops, a call that holds the GIL, output floods (cut at ``PRINT_LIMIT``), crashes and ``os._exit``
(reported), Interrupt, and processes the learner's code starts, forked or through ``subprocess``, in a loop, in
a new session or group, double-forked, forking and exiting over and over: on Linux none outlives ``check``
(tests/test_grading_runner.py checks each of these, under fork and spawn). It is not a sandbox against a
learner who attacks the machine on purpose: the code runs as the learner, with their files and network; a
process started outside the worker's tree (systemd-run, at, cron, docker, a request to a running daemon), or
one that kills the worker itself first so that its orphans go to init, escapes; while it runs only its time is
limited, not its memory, disk or number of processes (those are the machine's limits to enforce).

Off Linux the same steps run with what the OS offers (psutil for the tree; on Windows no process group and no
subreaper, so a grandchild whose parent has already exited may escape; on macOS no subreaper).
"""

from __future__ import annotations

import atexit
import ctypes
import faulthandler
import io
import json
import math
import os
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
import warnings
import weakref
from dataclasses import dataclass

METHODS = ("fork", "spawn") if sys.platform == "linux" else ("spawn",)  # the first: a runner's default
PRINT_LIMIT = 2000  # characters of the learner's prints shown
STARTUP = 1.0  # seconds a busy machine may take to start a forked worker, on top of the limit
SPAWN_STARTUP = 60.0  # ... and a spawned one that is still importing numpy, torch and the grader
KEEPER = sys.platform == "linux"  # the worker forks the runner and outlives it (a child subreaper: Linux only)
# The kinds of the worker's messages: imported (spawned only), started, one input done, prints, the verdict.
_READY, _START, _DONE, _PRINT, _RESULT = b"W", b"S", b"D", b"P", b"R"
_RUNNER, _ENDED = b"C", b"E"  # from a keeper (Linux): the pid of the process that runs the job, and its exit code
_HEADER = struct.Struct("<cII")  # kind, sender's pid, body length


class GraderFailure(RuntimeError):
    """The grader's own code failed in the worker (never the learner's code, whose errors are verdicts)."""


@dataclass
class Outcome:
    result: object = None  # what ``work`` returned; None if it did not finish
    done: int = 0  # inputs reported finished, by the worker itself
    timed_out: bool = False
    died: str = ""  # how the worker ended without a result, if it did
    printed: str = ""  # the learner's prints, cut after PRINT_LIMIT characters
    unsent: str = ""  # why ``work`` could not be sent to a spawned worker, if it could not
    started: bool = False  # the worker sent its start message (it had received ``work``)


# --------------------------------------------------------------------------
# The worker's side (forked or spawned)
# --------------------------------------------------------------------------

_worker_pid = None  # set in the worker: who may send messages
_serving = "--grading-worker" in sys.argv  # this process is a spawned worker (it starts no spare of its own)


def _send(fd, kind, body=b""):
    """One message from the worker: its kind, its pid, the body's length, the body.

    In a process the learner's code forked, which ran on into the grader's loop, it ends that process instead.
    """
    if os.getpid() != _worker_pid:
        os._exit(0)
    message = memoryview(_HEADER.pack(kind, _worker_pid, len(body)) + body)
    while message:
        message = message[os.write(fd, message) :]


def _become_worker(write_fd):
    """What every worker does before the learner's code runs."""
    global _worker_pid
    _worker_pid = os.getpid()
    if sys.platform == "linux":
        try:  # orphaned descendants are reparented to the worker, where _end finds them
            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        except (OSError, AttributeError):
            pass
    if hasattr(os, "setpgid"):
        try:
            os.setpgid(0, 0)  # its own process group (a spawned worker already leads its session)
        except OSError:
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    faulthandler.disable()  # a crash is reported by the parent, not dumped on the terminal
    sys.stdout = sys.stderr = _Capture(write_fd)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)  # one core per check; a forked child has no thread pool anyway


def _work_and_leave(work, write_fd):
    """Run ``work``, send the verdict, wait to be ended by the parent (``_end``). Never returns.

    On Linux the worker is a keeper: it forks the process that runs ``work`` and stays, a child subreaper,
    until the parent ends it, so that every process the learner's code started, even one in a session of its
    own whose parents have all exited, even after the runner crashed or called ``os._exit``, is its
    descendant then. Elsewhere the worker runs ``work`` itself and stays after its verdict (a process it
    started whose parent has exited may escape there).
    """
    if KEEPER:
        _keep(work, write_fd)
    _run_work(work, write_fd, stay=True)


def _keep(work, write_fd):
    """The keeper: fork the runner, tell the parent its pid, then its exit code; wait to be ended."""
    global _worker_pid
    go_read, go_write = os.pipe()
    code = 0
    try:
        runner = os.fork()
        if runner == 0:  # the runner: waits for the go, so that the parent knows its pid before it sends
            _worker_pid = os.getpid()
            os.close(go_write)
            os.read(go_read, 1)
            os.close(go_read)
            _run_work(work, write_fd, stay=False)
        os.close(go_read)
        _send(write_fd, _RUNNER, str(runner).encode())
        os.write(go_write, b"g")
        os.close(go_write)
        status = os.waitpid(runner, 0)[1]
        _send(write_fd, _ENDED, str(os.waitstatus_to_exitcode(status)).encode())
        parent = os.getppid()
        while _parent_alive(parent):
            time.sleep(0.05)
    except BaseException:  # nothing may escape the worker
        code = 70
    finally:
        os._exit(code)


def _run_work(work, write_fd, stay):
    """Run ``work`` and send the verdict; then stay until the parent is gone (``stay``) or leave. Never returns."""
    code = 0
    try:
        _send(write_fd, _START)
        try:
            payload = {"result": list(work(lambda: _send(write_fd, _DONE)))}
        except BaseException as exc:  # work catches the learner's errors; this is ours
            payload = {"error": f"{type(exc).__name__}: {exc}"}
        _send(write_fd, _RESULT, json.dumps(payload).encode())
        parent = os.getppid()
        while stay and _parent_alive(parent):
            time.sleep(0.05)
    except BaseException:  # nothing may escape the worker
        code = 70
    finally:
        os._exit(code)


def _parent_alive(parent) -> bool:
    if os.name == "posix":
        return os.getppid() == parent  # an orphan is reparented
    import psutil

    return psutil.pid_exists(parent)


class _Capture(io.TextIOBase):
    """The worker's stdout and stderr: sends the first PRINT_LIMIT characters to the parent as they come."""

    def __init__(self, fd):
        self.fd, self.left = fd, PRINT_LIMIT

    def writable(self):
        return True

    def write(self, text):
        text = str(text)
        if self.left > 0:
            shown = text[: self.left]
            self.left -= len(text)
            cut = f"\n... (output cut after {PRINT_LIMIT:,} characters)\n" if self.left < 0 else ""
            _send(self.fd, _PRINT, (shown + cut).encode(errors="replace"))
        return len(text)


def _serve(grader):
    """The spawned worker's program, once it has imported the grader (numpy, torch and the bank, before the job
    arrives; ``grader`` is its default one): wait for one job, run it, leave."""
    message_fd = os.dup(1)  # the messages go to the parent on the original stdout ...
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # ... and C-level writes to fd 1 go nowhere, so they cannot garble them
    os.dup2(devnull, 2)
    if sys.platform == "win32":
        import msvcrt

        msvcrt.setmode(message_fd, os.O_BINARY)
    import cloudpickle  # noqa: F401

    # as in the kernel while it waits: a check called from the learner's code is refused
    grader.checking = True
    _become_worker(message_fd)
    _send(message_fd, _READY)
    jobs = sys.stdin.buffer
    try:
        path = json.loads(_read_frame(jobs))
        sys.path[:] = path + [p for p in sys.path if p not in path]
        work = __import__("pickle").loads(_read_frame(jobs))
    except EOFError:  # the parent is gone, or this spare was never used
        os._exit(0)
    except BaseException as exc:  # the learner's function cannot be rebuilt here (a module missing ...)
        _send(message_fd, _RESULT, json.dumps({"unsent": f"{type(exc).__name__}: {exc}"}).encode())
        os._exit(0)
    _work_and_leave(work, message_fd)


def _read_frame(stream) -> bytes:
    head = stream.read(4)
    if len(head) < 4:
        raise EOFError
    size = struct.unpack("<I", head)[0]
    body = stream.read(size)
    if len(body) < size:
        raise EOFError
    return body


def _frame(body: bytes) -> bytes:
    return struct.pack("<I", len(body)) + body


# --------------------------------------------------------------------------
# The parent's side
# --------------------------------------------------------------------------


class _Worker:
    """A started worker: its pid, its Popen when spawned, and its exit code once it has ended and been reaped."""

    def __init__(self, pid, popen=None):
        self.pid, self.popen, self.code = pid, popen, None
        self.runner_code = None  # the exit code of a keeper's runner that ended without a verdict

    def how_it_ended(self) -> str:
        return _how_it_ended(self.runner_code if self.runner_code is not None else self.code)

    def poll(self, block=False):
        """The exit code (negative: the signal) once the worker has ended, reaping it; None while it runs."""
        if self.code is None:
            if self.popen is not None:
                self.code = self.popen.wait() if block else self.popen.poll()
            else:
                try:
                    done, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
                except ChildProcessError:
                    return None
                self.code = os.waitstatus_to_exitcode(status) if done else None
        return self.code


def _run_forked(work, limit) -> Outcome:
    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():  # Python 3.12+ warns about forking with threads; see the module docstring
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the worker: never returns
        os.close(read_fd)
        _become_worker(write_fd)
        _work_and_leave(work, write_fd)
    os.close(write_fd)
    worker, reader = _Worker(pid), _Reader(read_fd)
    try:
        try:
            os.setpgid(pid, pid)  # the child does the same; whichever runs first wins the race
        except OSError:
            pass
        outcome = _collect(reader, worker, limit, STARTUP)
    finally:
        _end(worker)  # (read_fd is the reader's: it closes it at the end of the pipe)
        reader.finish()
    if outcome.died:
        outcome.died = worker.how_it_ended()
    return outcome


def _start_worker() -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
    options = (
        {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
        if sys.platform == "win32"
        else {"start_new_session": True}
    )
    program = "import grading; from grading import runner; runner._serve(grading.current_grader())"
    return subprocess.Popen(
        [sys.executable, "-c", program, "--grading-worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        bufsize=0,
        **options,
    )


class Runner:
    """Runs learner code in worker processes started by ``method`` ("fork" or "spawn", ``METHODS``; left out, the
    first of them), each given ``time_limit`` seconds when it is set (None: each question's own ``limit``).

    Where workers are spawned it keeps one started ahead, its spare, from its first run on (making a runner
    starts nothing), so that a check does not wait for numpy, torch and the grader to import.
    """

    def __init__(self, method=None, time_limit=None):
        if method is None:
            method = METHODS[0]  # fork where it exists: measurably cheaper per check (tools/grading_overhead.py)
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)} here, not {method!r}")
        if time_limit is not None and not (
            isinstance(time_limit, (int, float)) and not isinstance(time_limit, bool) and 0 < time_limit < math.inf
        ):
            raise ValueError(
                f"time_limit must be a positive number of seconds (or None: each question's own), not {time_limit!r}"
            )
        self.method, self.time_limit = method, time_limit
        self._spare = None  # a spawned worker started ahead, importing the grader, waiting for its job
        _RUNNERS.add(self)

    def __repr__(self):
        return f"Runner(method={self.method!r}, time_limit={self.time_limit!r})"

    def limit(self, own: float) -> float:
        """The seconds a check gets: ``time_limit`` if set, else the question's ``own``."""
        return own if self.time_limit is None else self.time_limit

    def run(self, work, limit) -> Outcome:
        """Run ``work(report)`` for at most ``limit`` seconds; see the module docstring."""
        return _run_forked(work, limit) if self.method == "fork" else self._run_spawned(work, limit)

    # ------------------------------------------------------------------
    # The spare worker (spawned workers only)
    # ------------------------------------------------------------------

    def spare_pid(self):
        """The pid of the spawned worker kept ready for the next check, if there is one (it runs no learner
        code)."""
        return self._spare.pid if self._spare is not None and self._spare.poll() is None else None

    def warm_up(self) -> None:
        """Start the spawned worker of the next check now, if there is none (``Grader.check`` calls this after
        each check where workers are spawned, so that the next one does not wait for numpy, torch and the grader
        to import; importing ``grading`` starts none)."""
        if self._spare is None or self._spare.poll() is not None:
            self._spare = _start_worker()

    def wait_for_spare(self, timeout=120.0) -> bool:
        """Wait until the spare worker has imported the grader (POSIX; for tools and tests). True if it has."""
        import select

        if self._spare is None:
            return False
        return bool(select.select([self._spare.stdout], [], [], timeout)[0])

    def stop_spare(self) -> None:
        """End the spare worker, if there is one (at exit, and for tools and tests)."""
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.kill()
            spare.wait()

    def _take_worker(self) -> subprocess.Popen:
        worker, self._spare = self._spare, None
        if worker is None or worker.poll() is not None:
            worker = _start_worker()
        return worker

    def _run_spawned(self, work, limit) -> Outcome:
        import cloudpickle

        try:
            job = cloudpickle.dumps(work)
        except Exception as exc:  # a lock, an open file, a generator ... in what the function refers to
            return Outcome(unsent=f"{type(exc).__name__}: {exc}")
        outcome = self._run_job(job, limit)
        if outcome.died and not outcome.started:  # the spare died before it got the job (killed while idle ...)
            outcome = self._run_job(job, limit)  # with the spare the first try has just started
        return outcome

    def _run_job(self, job, limit) -> Outcome:
        popen = self._take_worker()
        worker = _Worker(popen.pid, popen)
        reader = _Reader(os.dup(popen.stdout.fileno()))  # the reader's own descriptor, closed by the reader
        popen.stdout.close()
        try:
            try:
                popen.stdin.write(_frame(json.dumps(sys.path).encode()) + _frame(job))
                popen.stdin.close()
            except OSError:  # it died while starting; _collect reports it
                pass
            outcome = _collect(reader, worker, limit, SPAWN_STARTUP)
        finally:
            _end(worker)
            reader.finish()
            if self._spare is None:
                self._spare = _start_worker()  # the next check's worker imports while the learner reads
        if outcome.died:
            outcome.died = worker.how_it_ended()
        return outcome


_RUNNERS: weakref.WeakSet[Runner] = weakref.WeakSet()  # every runner alive: their spares end when Python does


@atexit.register
def _stop_spares():
    for runner in list(_RUNNERS):
        runner.stop_spare()


class _Reader:
    """The worker's pipe, read by a thread into a queue: waits with a timeout work on every OS.

    The thread owns the descriptor and closes it at the end of the pipe (once the worker and everything it
    started are dead): closed by anyone else while the thread may still read it, its number could be reused
    by the next check's pipe, and the thread would steal that check's messages.
    """

    def __init__(self, fd):
        self.chunks = queue.Queue()
        self.thread = threading.Thread(target=self._read, args=(fd,), daemon=True)
        self.thread.start()

    def _read(self, fd):
        try:
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    chunk = b""
                self.chunks.put(chunk)
                if not chunk:
                    return
        finally:
            os.close(fd)

    def finish(self, timeout=1.0):
        """Wait for the end of the pipe, which comes once every writer is dead (after ``_end``)."""
        self.thread.join(timeout)

    def get(self, timeout):
        """The next chunk (b"" at the end of the pipe), or None after ``timeout`` seconds."""
        try:
            return self.chunks.get(timeout=timeout)
        except queue.Empty:
            return None


def _collect(reader, worker, limit, startup) -> Outcome:
    """Read the worker's messages until its verdict, its end or the deadline.

    The limit counts from the worker's start message, which on a busy machine may come a little after the
    worker was started (at most ``startup`` seconds). Messages from any process but the worker are ignored.
    A worker that has ended is noticed even when a process it started keeps the pipe open.
    """
    outcome, data, keeper, runner, ended = Outcome(), b"", worker.pid, worker.pid, None
    deadline = time.monotonic() + startup + limit
    size = _HEADER.size
    while True:
        while len(data) >= size and len(data) >= (end := size + _HEADER.unpack(data[:size])[2]):
            kind, sender, _ = _HEADER.unpack(data[:size])
            body, data = data[size:end], data[end:]
            if sender == keeper and kind == _RUNNER:
                runner = int(body)  # from now on the job's messages come from there
                continue
            if sender == keeper and kind == _ENDED:  # the runner ended without a verdict; how:
                worker.runner_code = int(body)
                outcome.died = "it ended without a result"
                return outcome
            if sender != runner:
                continue
            if kind == _START:
                deadline, outcome.started = time.monotonic() + limit, True
            elif kind == _DONE:
                outcome.done += 1
            elif kind == _PRINT:
                outcome.printed += body.decode(errors="replace")
            elif kind == _RESULT:
                payload = json.loads(body)
                if "error" in payload:  # a bug of the grader's, not of the learner's code
                    raise GraderFailure(payload["error"])
                if "unsent" in payload:
                    outcome.unsent = payload["unsent"]
                    return outcome
                outcome.result = tuple(payload["result"])
                return outcome
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            outcome.timed_out = True
            return outcome
        chunk = reader.get(min(remaining, 0.05))  # short waits: Ctrl-C is handled promptly
        if chunk == b"" or (ended is not None and time.monotonic() > ended + 0.2):
            outcome.died = "it ended without a result"  # (the words are replaced by how it ended)
            return outcome
        if chunk:
            data += chunk
        elif ended is None and worker.poll() is not None:
            ended = time.monotonic()  # read what it sent before it ended, then report it


def _how_it_ended(code) -> str:
    """A phrase for a worker that ended with exit code ``code`` (negative: the signal) without a verdict."""
    if code is None:
        return "it ended without a result"
    if code < 0:
        sig = -code
        what = {
            signal.SIGSEGV: "a segmentation fault",
            getattr(signal, "SIGKILL", None): "killed, perhaps out of memory",
            signal.SIGABRT: "aborted",
            getattr(signal, "SIGBUS", None): "a bus error",
        }.get(sig)
        return f"it crashed ({what or f'signal {sig}'})"
    return f"it ended the Python process (exit code {code}, e.g. os._exit)"


def _end(worker: _Worker) -> None:
    """End the worker and every process it started, and reap it (its exit code is then ``worker.code``).

    While the worker is alive (it waits for this after its verdict) its pid and group id cannot belong to
    another process, and (on Linux) every orphan among its descendants is its child. A worker that ended by
    itself (a crash, ``os._exit``) has been reaped: only its process group is killed then.
    """
    own_group = hasattr(os, "getpgid") and _group(worker.pid) == worker.pid  # never the kernel's group
    if worker.poll() is None:
        if own_group:
            try:
                os.killpg(worker.pid, signal.SIGSTOP)  # its group: nothing in it forks or reaps any more
            except OSError:
                pass
        _kill_descendants(worker.pid)
        try:
            os.kill(worker.pid, signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)
        except OSError:
            pass
    if own_group:
        try:
            os.killpg(worker.pid, signal.SIGKILL)  # what is left of its group
        except OSError:
            pass
    worker.poll(block=True)


def _group(pid):
    try:
        return os.getpgid(pid)
    except OSError:  # ended and reaped: its group, if any member is left, still has its id
        return pid


def _kill_descendants(pid, rounds=200):
    """SIGKILL every live descendant of ``pid``, round after round, until none is left (or ``rounds`` ran)."""
    if sys.platform == "linux" and os.path.exists(f"/proc/{pid}/task/{pid}/children"):
        return _kill_tree(pid)
    for _ in range(rounds):
        alive = _live_descendants(pid)
        if not alive:
            return
        for child in alive:
            try:
                os.kill(child, signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)
            except OSError:
                pass


def _kill_tree(root, patience=10.0):
    """Linux: SIGKILL every descendant of ``root`` (the worker, a subreaper), until the tree is dead for sure.

    A walk of /proc reads one process's list of children at a time, so one walk can miss a process: read the
    root's list, then its child exits (its orphans move to the root, whose list was already read) and reads
    as a zombie with no children. So a walk that finds nothing alive proves nothing. What does: the root's
    children, read after every one of them was already seen dead (a zombie has no children; the stopped root
    reaps none, so their pids are not reused). Each process is killed as soon as it is found, before its
    children are read: a process with SIGKILL pending can fork no more, so its list is final and a process
    that forks and exits in a loop is caught up with. Such a process leaves the root a zombie child per turn,
    thousands of them: each list is read to its end (``_read_proc``), not one page of it.
    """
    dead, give_up = set(), time.monotonic() + patience
    while time.monotonic() < give_up:
        children = _proc_children(root)
        if all(child in dead for child in children):
            # A second, independent look: the parent of every process on the machine. The children lists are
            # reliable only for stopped children (proc(5)); a process they miss is found here if it keeps its pid
            # (one that forks and exits in a loop only by luck: the pid listed has often gone when it is read).
            stray = _table_descendants(root)
            if not stray:
                return
            for pid in stray:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            continue
        todo = children
        while todo:
            child = todo.pop()
            if _proc_state(child) in ("Z", "X", None):
                dead.add(child)  # (one that has gone has no children left either)
            else:
                try:
                    os.kill(child, signal.SIGKILL)
                except OSError:
                    pass
            todo += _proc_children(child)


def _live_descendants(pid) -> list[int]:
    """The pids of the live (not zombie) descendants of ``pid``: from /proc/<pid>/task/*/children on Linux
    (the tree only, a fraction of a millisecond), else from psutil (which reads every process of the machine)."""
    if sys.platform == "linux" and os.path.exists(f"/proc/{pid}/task/{pid}/children"):
        found, todo = [], [pid]
        while todo:
            parent = todo.pop()
            for child in _proc_children(parent):
                todo.append(child)
                if _proc_state(child) not in ("Z", "X", None):
                    found.append(child)
        return found
    import psutil

    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True) if _alive(p)]
    except psutil.Error:
        return []


def _table_descendants(root) -> list[int]:
    """Linux: the live descendants of ``root``, from the parent pid of every process in /proc."""
    children: dict[int, list[int]] = {}
    alive = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            state, parent = _read_proc(f"/proc/{name}/stat").rsplit(")", 1)[1].split()[:2]
        except (OSError, IndexError, ValueError):
            continue  # it has just ended
        children.setdefault(int(parent), []).append(int(name))
        if state not in ("Z", "X"):
            alive.add(int(name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            todo.append(child)
            if child in alive:
                found.append(child)
    return found


def _proc_children(pid) -> list[int]:
    children = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            children += [int(c) for c in _read_proc(f"/proc/{pid}/task/{task}/children").split()]
    except OSError:
        pass
    return children


def _proc_state(pid):
    try:
        return _read_proc(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _read_proc(path) -> str:
    """A /proc file to its end. One read() of a /proc file returns at most one page: a keeper's list of
    children, thousands of zombies left by a process that forks and exits in a loop, is longer than that, and
    the live process at its end would be missed."""
    chunks = []
    fd = os.open(path, os.O_RDONLY)
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode(errors="replace")


def _alive(p) -> bool:
    import psutil

    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
