"""Running a learner's code with a time limit, where it can be stopped for real.

``_run(work, limit)`` calls ``work(report)`` (which runs the learner's function on
every test input, verifies each output and calls ``report()`` after each input
that passed) and returns an ``Outcome``: what ``work`` returned, how many inputs
were reported, and whether time ran out or the worker died.

On Linux ``work`` runs in a forked child process. The child inherits the
learner's function and the question (nothing is pickled), verifies the outputs
itself and sends back over a pipe only small messages: one per finished input,
the learner's prints and, at the end, a JSON verdict. The parent waits until the deadline (``limit``
seconds from the child's start, which a busy machine may delay by up to
``STARTUP`` seconds), then kills the child's whole process group (SIGKILL) and
reaps it. So after ``_run`` returns no learner code is running, whatever it
catches (``except Exception``, a bare ``except``) and however long a single
call holds the GIL. A child that dies without a verdict (a crash, ``os._exit``
in the learner's code, the out-of-memory killer) is reported as such.

The child sends the learner's prints back as they come (the first
``PRINT_LIMIT`` characters, shown even when time runs out) instead of writing
to the parent's streams: in Jupyter those are
ZMQ sockets that a forked child must leave alone, like everything else the
kernel's threads hold. It ignores Ctrl-C (the parent handles it), uses one
torch thread (the parent's thread pool is not there after the fork) and leaves
with ``os._exit``, so that no atexit handler or kernel cleanup runs in it.

Elsewhere (``sys.platform != "linux"``: fork is unavailable on Windows and unsafe
on macOS with some libraries) ``work`` runs in a daemon thread instead. That
fallback cannot guarantee what the process can: a call that holds the GIL
delays the limit until it returns, code that catches the injected stop keeps
running after ``_run`` returns, code blocked inside C runs until it returns, and
prints go straight to the output.

Ctrl-C (Jupyter's Interrupt button) while the parent waits stops the worker and
is raised again for ``check`` to report.
"""

from __future__ import annotations

from dataclasses import dataclass
import ctypes
import faulthandler
import io
import json
import os
import select
import signal
import struct
import sys
import threading
import time
import warnings

FORK = sys.platform == "linux"  # where the worker is a process (tests may switch it off)
PRINT_LIMIT = 2000              # characters of the learner's prints shown
STARTUP = 1.0                   # seconds a busy machine may take to start the worker, on top of the limit
# The kinds of the child's messages: started, one input done, prints, the verdict.
_START, _DONE, _PRINT, _RESULT = b"S", b"D", b"P", b"R"


@dataclass
class Outcome:
    result: object = None    # what ``work`` returned; None if it did not finish
    done: int = 0            # inputs reported finished
    timed_out: bool = False
    died: str = ""           # how the worker ended without a result, if it did
    printed: str = ""        # the learner's prints, cut after PRINT_LIMIT characters


def _run(work, limit) -> Outcome:
    """Run ``work(report)`` for at most ``limit`` seconds; see the module docstring."""
    return (_run_forked if FORK else _run_in_thread)(work, limit)


# --------------------------------------------------------------------------
# Linux: a forked child process
# --------------------------------------------------------------------------

def _run_forked(work, limit) -> Outcome:
    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():  # Python 3.12+ warns about forking with threads; see the module docstring
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_fd)
        _child(work, write_fd)
    os.close(write_fd)
    try:
        try:
            os.setpgid(pid, pid)  # the child does the same; whichever runs first wins the race
        except OSError:
            pass
        outcome = _collect(read_fd, limit)
    finally:
        os.close(read_fd)
        status = _kill(pid)
    if outcome.died and status is not None:
        outcome.died = _how_it_ended(status)
    return outcome


def _collect(read_fd, limit) -> Outcome:
    """Read the child's messages until its verdict, its end or the deadline.

    The limit counts from the child's start message, which on a busy machine
    may come a little after the fork (at most STARTUP seconds).
    """
    outcome, data = Outcome(), b""
    deadline = time.monotonic() + STARTUP + limit
    pipe = select.poll()
    pipe.register(read_fd, select.POLLIN)
    while True:
        while len(data) >= 5 and len(data) >= (end := 5 + struct.unpack("<I", data[1:5])[0]):
            kind, body, data = data[:1], data[5:end], data[end:]
            if kind == _START:
                deadline = time.monotonic() + limit
            elif kind == _DONE:
                outcome.done += 1
            elif kind == _PRINT:
                outcome.printed += body.decode(errors="replace")
            else:
                payload = json.loads(body)
                if "error" in payload:  # a bug of the grader's, not of the learner's code
                    raise RuntimeError(payload["error"])
                outcome.result = tuple(payload["result"])
                return outcome
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            outcome.timed_out = True
            return outcome
        # Short waits, so that Ctrl-C is handled promptly however it is delivered.
        if pipe.poll(min(remaining, 0.1) * 1000):
            chunk = os.read(read_fd, 65536)
            if not chunk:  # the child ended without a verdict
                outcome.died = "it ended without a result"
                return outcome
            data += chunk


def _send(fd, kind, body=b""):
    """One message from the child: its kind (one byte), the body's length, the body."""
    message = memoryview(kind + struct.pack("<I", len(body)) + body)
    while message:
        message = message[os.write(fd, message):]


def _child(work, write_fd):
    """In the forked child: run ``work``, send the verdict, leave without cleanup."""
    code = 0
    try:
        _send(write_fd, _START)
        try:
            os.setpgid(0, 0)  # its own process group: one kill ends whatever it starts
        except OSError:
            pass
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        faulthandler.disable()  # a crash is reported by the parent, not dumped on the terminal
        sys.stdout = sys.stderr = _Capture(write_fd)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)  # the parent's thread pool is not there after the fork
        try:
            payload = {"result": list(work(lambda: _send(write_fd, _DONE)))}
        except BaseException as exc:  # work catches the learner's errors; this is ours
            payload = {"error": f"{type(exc).__name__}: {exc}"}
        _send(write_fd, _RESULT, json.dumps(payload).encode())
    except BaseException:  # nothing may escape the child
        code = 70
    finally:
        os._exit(code)


class _Capture(io.TextIOBase):
    """The child's stdout and stderr: sends the first PRINT_LIMIT characters to the parent as they come."""

    def __init__(self, fd):
        self.fd, self.left = fd, PRINT_LIMIT

    def writable(self):
        return True

    def write(self, text):
        text = str(text)
        if self.left > 0:
            shown = text[:self.left]
            self.left -= len(text)
            cut = f"\n... (output cut after {PRINT_LIMIT:,} characters)\n" if self.left < 0 else ""
            _send(self.fd, _PRINT, (shown + cut).encode(errors="replace"))
        return len(text)


def _how_it_ended(status) -> str:
    """A phrase for a child that ended with wait status ``status`` without sending a verdict."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        what = {signal.SIGSEGV: "a segmentation fault", signal.SIGKILL: "killed, perhaps out of memory",
                signal.SIGABRT: "aborted", signal.SIGBUS: "a bus error"}.get(sig, f"signal {sig}")
        return f"it crashed ({what})"
    return f"it ended the Python process (exit code {os.waitstatus_to_exitcode(status)}, e.g. os._exit)"


def _kill(pid):
    """SIGKILL the child's process group (and the child itself), reap the child, return its wait status.

    The child is not reaped before this, so neither its pid nor its group id can
    belong to another process yet.
    """
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None


# --------------------------------------------------------------------------
# Elsewhere: a daemon thread (see the module docstring for what it cannot do)
# --------------------------------------------------------------------------

def _run_in_thread(work, limit) -> Outcome:
    outcome, start = Outcome(), time.monotonic()

    def report():
        outcome.done += 1
        if time.monotonic() - start > limit:
            raise _TimeUp

    def target():
        try:
            outcome.result = work(report)
        except _TimeUp:
            pass

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    try:
        worker.join(limit)
    except KeyboardInterrupt:
        _stop(worker)
        raise
    if outcome.result is None:  # still running, or stopped by report() after the limit
        _stop(worker)
        return Outcome(done=outcome.done, timed_out=True)
    return outcome


def _stop(worker):
    """Ask a pure-Python loop in ``worker`` to stop by raising _TimeUp in it (best effort)."""
    if worker.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), ctypes.py_object(_TimeUp))


class _TimeUp(BaseException):
    """Raised in a learner's code that ran past the time limit (thread fallback only)."""
