"""Where the grader keeps a learner's progress: a small JSON file that survives a kernel restart.

The file is ``$POSENC_PROGRESS`` when that environment variable is set, else ``~/.posenc-course/progress.json``
(``~`` is the home folder: ``/home/you`` on Linux, ``/Users/you`` on macOS, ``C:\\Users\\you`` on Windows,
``/root`` on Colab, where it lasts only as long as the runtime). It holds the latest status of each question
checked and the choice questions whose answer was shown::

    {"format": "posenc-course progress", "version": 1,
     "questions": {"02.3": "correct", "02.5": "wrong"}, "revealed": ["01.1"]}

* It is written after every check, atomically (a temporary file in the same folder, then ``os.replace``): a
  kernel killed halfway leaves the old file or the new one, never half of one. Two notebooks open at once
  do not undo each other: each write merges what this kernel changed into what the file holds.
* A file that cannot be read as such a progress file (damaged, another program's, another version's) is
  refused with a message saying what is wrong and where it is; the grader then keeps progress in memory
  only and never writes over that file. ``grading.reset()`` moves it aside (``progress.json.refused``, kept
  for you to look at) and starts a new one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

FORMAT = "posenc-course progress"
VERSION = 1
STATUSES = {"correct", "wrong", "unanswered", "interrupted"}


def default_path() -> Path:
    """``$POSENC_PROGRESS``, or ``~/.posenc-course/progress.json``."""
    chosen = os.environ.get("POSENC_PROGRESS", "").strip()
    return Path(chosen).expanduser() if chosen else Path.home() / ".posenc-course" / "progress.json"


class Store:
    """The progress of one learner: ``status`` (question id -> status) and ``revealed`` (question ids), kept in
    the file ``path`` (None: in memory only)."""

    def __init__(self, path: Path | None):
        self.path = None if path is None else Path(path)
        self.status: dict[str, str] = {}
        self.revealed: set[str] = set()
        self.changed: set[str] = set()  # what this kernel recorded since it loaded the file
        self.problem = ""               # why the file is not used ("": it is used)
        self.durable = True             # fsync before the rename (5 ms a check here; the tests go without)

    # ------------------------------------------------------------------
    def where(self) -> str:
        """One sentence for summary(): where progress is kept, or why only in memory."""
        if self.path is None:
            return "Progress is kept in memory only (this session does not use a progress file)."
        if self.problem:
            return f"Progress is kept in memory only: {self.problem}"
        return f"Progress is saved in {self.path} (grading.reset() starts afresh)."

    def load(self) -> str:
        """Read the file (a missing one is an empty record); return the refusal message, or ""."""
        self.status.clear()
        self.revealed.clear()
        self.changed.clear()
        self.problem = ""
        if self.path is None:
            return ""
        data, why = _read(self.path)
        if why:
            self.problem = (f"the file {self.path} {why}, so it is left as it is. Move or delete it, or run "
                            "grading.reset() to set it aside and start a new one.")
            return self.problem
        if data is not None:
            self.status.update(data["questions"])
            self.revealed.update(data["revealed"])
        return ""

    def record(self, qid: str, status: str | None = None, revealed: bool = False) -> str:
        """Record a status (or that ``qid``'s answer was shown) and save; return a message if saving failed."""
        if status is not None:
            self.status[qid] = status
        if revealed:
            self.revealed.add(qid)
        self.changed.add(qid)
        return self.save()

    def save(self) -> str:
        if self.path is None or self.problem:
            return ""
        on_disk, why = _read(self.path)
        if why:  # someone replaced the file since it was loaded: refuse it now, never write over it
            self.problem = (f"the file {self.path} {why} (it changed since it was read), so it is left as it is. "
                            "Move or delete it, or run grading.reset() to set it aside and start a new one.")
            return self.problem
        questions = dict(on_disk["questions"]) if on_disk else {}
        revealed = set(on_disk["revealed"]) if on_disk else set()
        for qid in self.changed:  # what this kernel recorded wins; the rest is the file's (another notebook's)
            if qid in self.status:
                questions[qid] = self.status[qid]
            if qid in self.revealed:
                revealed.add(qid)
        self.status.update({q: s for q, s in questions.items() if q not in self.changed})
        self.revealed |= revealed
        try:
            _write(self.path, {"format": FORMAT, "version": VERSION, "questions": dict(sorted(questions.items())),
                               "revealed": sorted(revealed)}, self.durable)
        except OSError as exc:
            self.problem = f"the file {self.path} could not be written ({exc.strerror or exc})."
            return self.problem
        return ""

    def reset(self) -> str:
        """Forget everything, in memory and in the file; a refused file is moved aside. Returns what was done."""
        self.status.clear()
        self.revealed.clear()
        self.changed.clear()
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
            _write(self.path, {"format": FORMAT, "version": VERSION, "questions": {}, "revealed": []})
        except OSError as exc:
            self.problem = f"the file {self.path} could not be written ({exc.strerror or exc})."
            return done + self.problem
        return done + f"Progress reset: {self.path} now records nothing."


def _read(path: Path):
    """(data, "") for a valid progress file, (None, "") for a missing one, (None, why) otherwise."""
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
    if data.get("version") != VERSION:
        return None, f"is a progress file of version {data.get('version')!r}; this grader reads version {VERSION}"
    questions, revealed = data.get("questions"), data.get("revealed", [])
    if not isinstance(questions, dict) or not all(isinstance(q, str) and s in STATUSES for q, s in questions.items()):
        return None, "has a \"questions\" entry that is not a map of question ids to statuses"
    if not isinstance(revealed, list) or not all(isinstance(q, str) for q in revealed):
        return None, "has a \"revealed\" entry that is not a list of question ids"
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
