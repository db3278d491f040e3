"""Where the grader keeps a learner's progress: a small JSON file that survives a kernel restart.

The file is ``$POSENC_PROGRESS`` when that environment variable is set, else ``~/.posenc-course/progress.json``
(``~`` is the home folder: ``/home/you`` on Linux, ``/Users/you`` on macOS, ``C:\\Users\\you`` on Windows,
``/root`` on Colab, where it lasts only as long as the runtime). For each question tried it holds whether it was
ever solved, how many tries were graded, the latest result and when it came; and the choice questions whose
answer was shown::

    {"format": "posenc-course progress", "version": 3,
     "questions": {"02.3": {"solved": true, "tries": 3, "last": "wrong", "when": "2026-12-04T20:31:07Z"}},
     "revealed": ["01.1"]}

* A question once solved stays solved: later tries are counted and their result kept as ``last``, but they never
  un-solve it. An unanswered cell (the ``...`` placeholder, a function that returns None) records nothing.
  A check the grader itself could not carry out is kept as ``last`` but is not a try: it says nothing about
  the answer.
* It is written after every check, atomically (a temporary file in the same folder, then ``os.replace``): a
  kernel killed halfway leaves the old file or the new one, never half of one. Two notebooks open at once
  do not undo each other: each check is applied to what the file holds when it is written, under a lock
  (``progress.json.lock``) that keeps another kernel from writing in between.
* ``version`` is the file's format, which the course's first release (1.0.0) wrote as 3 (earlier formats never
  left the course's drafts, so none is read). A release that changes the format reads the formats of the
  releases before it, and says so in the changelog (a major version: the book's "Versions of this course").
* A file that cannot be read as a progress file (damaged, another program's, a newer release's) is refused
  with a message saying what is wrong and where it is; the grader then keeps progress in memory only and
  never writes over that file. ``grading.reset()`` moves it aside (``progress.json.refused``, kept for you to
  look at) and starts a new one.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import tempfile
from pathlib import Path

FORMAT = "posenc-course progress"
VERSION = 3
CORRECT, WRONG, INTERRUPTED, UNCHECKABLE = "correct", "wrong", "interrupted", "could not check"
RESULTS = {CORRECT, WRONG, INTERRUPTED, UNCHECKABLE}  # what a graded check leaves as "last"
TRIES = {CORRECT, WRONG, INTERRUPTED}  # ... and which of them count as a try


def default_path() -> Path:
    """``$POSENC_PROGRESS``, or ``~/.posenc-course/progress.json``."""
    chosen = os.environ.get("POSENC_PROGRESS", "").strip()
    return Path(chosen).expanduser() if chosen else Path.home() / ".posenc-course" / "progress.json"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _entry(solved=False, tries=0, last=None, when=None) -> dict:
    return {"solved": solved, "tries": tries, "last": last, "when": when}


def _apply(entry: dict | None, result: str, when: str) -> dict:
    """``entry`` (None: never tried) after one check whose result is ``result``."""
    entry = dict(entry) if entry else _entry()
    entry["solved"] = entry["solved"] or result == CORRECT
    entry["tries"] += result in TRIES
    entry["last"], entry["when"] = result, when
    return entry


class Store:
    """The progress of one learner: ``entries`` (question id -> its record, as in the file) and ``revealed``
    (question ids), kept in the file ``path`` (None: in memory only)."""

    def __init__(self, path: Path | None):
        self.path = None if path is None else Path(path)
        self.entries: dict[str, dict] = {}
        self.revealed: set[str] = set()
        self.problem = ""  # why the file is not used ("": it is used)
        self.durable = True  # fsync before the rename (the tests go without)

    # ------------------------------------------------------------------
    def where(self) -> str:
        """One sentence for summary(): where progress is kept, or why only in memory."""
        if self.path is None:
            return "Progress is kept in memory only (this session does not use a progress file)."
        if self.problem:
            return f"Progress is kept in memory only: {self.problem}"
        return f"Progress is saved in {self.shown_path()} (grading.reset() starts afresh)."

    def shown_path(self) -> str:
        """The file as a sentence names it: the variable that chose it, or the path with ~ for the home folder
        (what the learner needs, and nothing of the machine's layout on a page of the book)."""
        chosen = os.environ.get("POSENC_PROGRESS", "").strip()
        if chosen and Path(chosen).expanduser() == self.path:
            return "the file $POSENC_PROGRESS names"
        home = Path.home()
        return str(Path("~") / self.path.relative_to(home)) if self.path.is_relative_to(home) else str(self.path)

    def load(self) -> str:
        """Read the file (a missing one is an empty record); return the refusal message, or ""."""
        self.entries.clear()
        self.revealed.clear()
        self.problem = ""
        if self.path is None:
            return ""
        data, why = _read(self.path)
        if why:
            self.problem = self._refusal(why)
            return self.problem
        if data is not None:
            self.entries.update(data["questions"])
            self.revealed.update(data["revealed"])
        return ""

    def record(self, qid: str, result: str) -> str:
        """Record one graded check of ``qid`` (a result of RESULTS) and save; return a message if saving failed."""
        if result not in RESULTS:
            raise ValueError(f"result must be one of {sorted(RESULTS)}, not {result!r}")
        return self._change(
            lambda entries, revealed: entries.__setitem__(qid, _apply(entries.get(qid), result, _now()))
        )

    def reveal(self, qid: str) -> str:
        """Record that the answer of ``qid`` was shown, and save."""
        return self._change(lambda entries, revealed: revealed.add(qid))

    def forget(self, qids) -> str:
        """Forget what is recorded of the questions ``qids`` (answers shown included), and save."""

        def change(entries, revealed):
            for qid in qids:
                entries.pop(qid, None)
                revealed.discard(qid)

        return self._change(change)

    def _change(self, change) -> str:
        """Apply ``change(entries, revealed)`` to what the file holds now (another kernel may have written it
        since this one read it), keep the result in memory and write it back."""
        if self.path is None or self.problem:
            change(self.entries, self.revealed)
            return ""
        with _locked(self.path):  # no other kernel writes between this read and this write
            return self._change_on_disk(change)

    def _change_on_disk(self, change) -> str:
        on_disk, why = _read(self.path)
        if why:  # someone replaced the file since it was loaded: refuse it now, never write over it
            self.problem = self._refusal(why + " (it changed since it was read)")
            change(self.entries, self.revealed)
            return self.problem
        entries = dict(on_disk["questions"]) if on_disk else {}
        revealed = set(on_disk["revealed"]) if on_disk else set()
        change(entries, revealed)
        self.entries, self.revealed = entries, revealed
        try:
            _write(self.path, _document(entries, revealed), self.durable)
        except OSError as exc:
            self.problem = f"the file {self.path} could not be written ({exc.strerror or exc})."
            return self.problem
        return ""

    def _refusal(self, why: str) -> str:
        return (
            f"the file {self.path} {why}, so it is left as it is. Move or delete it, or run "
            "grading.reset() to set it aside and start a new one."
        )

    def reset(self) -> str:
        """Forget everything, in memory and in the file; a refused file is moved aside. Returns what was done."""
        self.entries.clear()
        self.revealed.clear()
        if self.path is None:
            return ""
        done = ""
        if self.problem and self.path.exists():
            aside = self.path.with_name(self.path.name + ".refused")
            try:
                os.replace(self.path, aside)
            except OSError as exc:
                return f"could not move {self.path} aside ({exc.strerror or exc}); progress stays in memory only."
            done = f"The refused file was moved to {aside}. "
        self.problem = ""
        try:
            _write(self.path, _document({}, set()))
        except OSError as exc:
            self.problem = f"the file {self.path} could not be written ({exc.strerror or exc})."
            return done + self.problem
        return done + f"Progress reset: {self.path} now records nothing."


def _document(entries: dict, revealed: set) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "questions": dict(sorted(entries.items())),
        "revealed": sorted(revealed),
    }


def _valid_entry(entry) -> bool:
    return (
        isinstance(entry, dict)
        and set(entry) == {"solved", "tries", "last", "when"}
        and isinstance(entry["solved"], bool)
        and isinstance(entry["tries"], int)
        and not isinstance(entry["tries"], bool)
        and entry["tries"] >= 0
        and entry["last"] in RESULTS
        and isinstance(entry["when"], (str, type(None)))
    )


@contextlib.contextmanager
def _locked(path: Path):
    """Hold an exclusive lock (on ``<path>.lock``) while the file is read, changed and written: without it, two
    kernels that check at the same moment both read the old file, and the second write drops the first one's
    check. Where the lock file cannot be made (a read-only folder), the write that follows fails anyway."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        if os.name == "posix":
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # (retries for 10 s, then raises OSError)
        yield
    finally:
        os.close(fd)  # releases the lock


def _read(path: Path):
    """(data, "") for a valid progress file, (None, "") for a missing one,
    (None, why) otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, ""
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"could not be read ({getattr(exc, 'strerror', None) or exc})"
    try:
        data = json.loads(text)
    except ValueError:
        return None, "is not valid JSON (damaged?)"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None, "is not a progress file of this course"
    version = data.get("version")
    if version != VERSION:
        newer = isinstance(version, int) and not isinstance(version, bool) and version > VERSION
        return None, (
            f"is a progress file of version {version!r}, "
            + (
                "written by a newer release of the course; upgrade the course to read it"
                if newer
                else f"which this grader does not know (it reads version {VERSION})"
            )
        )
    questions, revealed = data.get("questions"), data.get("revealed", [])
    if not isinstance(questions, dict) or not all(isinstance(q, str) and _valid_entry(e) for q, e in questions.items()):
        return None, 'has a "questions" entry that is not a map of question ids to their records'
    if not isinstance(revealed, list) or not all(isinstance(q, str) for q in revealed):
        return None, 'has a "revealed" entry that is not a list of question ids'
    return {"questions": questions, "revealed": revealed}, ""


def _write(path: Path, data, durable=True) -> None:
    """Write ``data`` as JSON to ``path`` atomically: a temporary file in the same folder, then os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
            f.flush()
            if durable:  # on disk before it replaces the old file, even if the machine loses power
                os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
