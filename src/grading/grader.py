"""The grader's state in one object, ``Grader``, and the one the public functions of ``grading`` use.

A ``Grader`` holds a learner's progress (``grading.store``: the file, read at its first use), whether one of
its checks is running (a check called from the learner's code is then refused, once with a message) and its
settings: the runner of the learner's code (``grading.runner.Runner``: how its workers start, the time limit
that overrides each question's, and the worker it keeps started ahead where workers are spawned). Its methods
are the public functions: ``grading.check(...)`` is ``current_grader().check(...)``.

``current_grader()`` is the grader whose check is running, else the default one, made at the first use from
``$POSENC_PROGRESS`` or the home folder (``grading.store.default_path``): importing ``grading`` makes nothing,
reads nothing and starts nothing. ``use_grader(Grader(path))`` replaces the default one for a ``with`` block:
the tests and the maintainer's tools use it so that their checks never touch a learner's progress file, and
give it the settings they need (``Grader(path, time_limit=1.0, method="spawn")``). Both are kept by the
``Grader`` class itself, the one place that knows which grader the public functions reach.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import re
import sys

from grading import runner as _runner
from grading.bank import QUESTIONS
from grading.feedback import is_ordinary, short_error
from grading.kinds import CORRECT, INTERRUPTED, UNANSWERED, UNCHECKABLE, WRONG
from grading.runner import Runner
from grading.store import Store, default_path
from posenc_course.arguments import shown as _shown

NOT_GIVEN = object()  # check's answer when the learner gave none (None is an answer, and gets feedback)
_CHAPTERS = sorted({q.split(".")[0] for q in QUESTIONS})
# The packages whose copy in memory must be the one installed: an install that replaces one after the kernel
# imported it leaves the kernel with a mix of old and new files (module name -> distribution name).
_WATCHED = {
    "numpy": "numpy",
    "torch": "torch",
    "matplotlib": "matplotlib",
    "IPython": "ipython",
    "ipywidgets": "ipywidgets",
    "traitlets": "traitlets",
    "anywidget": "anywidget",
}


def _installed(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


_COURSE = _installed("posenc-course")  # the course's own version as this kernel imported it


def current_grader() -> Grader:
    """The grader the public functions use: the one whose check is running (so that a check called from the
    learner's code is refused, in a forked worker too), else the default one, made at the first call."""
    return Grader.current()


def use_grader(grader: Grader):
    """Make ``grader`` the default one for a ``with`` block; the previous default is back after it."""
    return Grader.lent(grader)


class Verdict:
    """What ``check`` returns: true when the answer is correct.

    Behaves like ``True``/``False`` in ``if`` and ``==``; in Jupyter it shows
    nothing, so a question cell ends with the feedback line alone.
    """

    def __init__(self, ok: bool):
        self.ok = bool(ok)

    def __bool__(self):
        return self.ok

    def __eq__(self, other):
        return self.ok == other

    def __hash__(self):
        return hash(self.ok)

    def __repr__(self):
        return repr(self.ok)

    def _ipython_display_(self):
        pass


MARKS = {
    CORRECT: "✓ correct",
    WRONG: "✗",
    UNANSWERED: "· not answered yet:",
    INTERRUPTED: "· interrupted:",
    UNCHECKABLE: "· could not check:",
}
SOLVED, UNTRIED = "solved", "untried"
STATES = (SOLVED, WRONG, INTERRUPTED, UNCHECKABLE, UNTRIED)  # what progress() says of a question


class _Failed(AssertionError):
    """assert_all_correct's failure, shown in Jupyter as its one line (the traceback is the grader's own)."""

    def _render_traceback_(self):
        return [f"AssertionError: {self}"]


def _fail(text):
    raise _Failed(text)


class Grader:
    """One learner's grader: progress kept in the file ``progress_file`` (None: in memory only), read at its first
    use; ``durable=False`` skips the fsync before each write (for tests that check hundreds of answers).

    Its ``runner`` runs the learner's functions: in workers started by ``method`` ("fork" or "spawn", those of
    ``grading.runner.METHODS``; left out, the first), each given ``time_limit`` seconds over all its inputs
    (left out: each question's own limit, stated in its Accepted line).

    ``checking`` is true while one of its checks runs; ``refused``, once a check called from the learner's code
    during it has been refused (and said so).
    """

    _default: Grader | None = None  # the grader of the public functions, made at their first use
    _running: Grader | None = None  # the grader whose check is running: the learner's code that calls check gets it

    def __init__(self, progress_file, *, durable: bool = True, time_limit: float | None = None, method=None):
        self.runner = Runner(method=method, time_limit=time_limit)
        self.store = Store(progress_file)
        self.store.durable = durable
        self.loaded = False  # the file has been read (at the first use, not when the grader is made)
        self.checking = False
        self.refused = False

    def __repr__(self):
        path = str(self.store.path) if self.store.path else None
        return f"Grader({path!r}, time_limit={self.runner.time_limit!r}, method={self.runner.method!r})"

    @classmethod
    def current(cls) -> Grader:
        """See ``current_grader``."""
        if Grader._running is not None:
            return Grader._running
        if Grader._default is None:
            Grader._default = cls(default_path())
        return Grader._default

    @staticmethod
    @contextlib.contextmanager
    def lent(grader: Grader):
        """See ``use_grader``."""
        saved, Grader._default = Grader._default, grader
        try:
            yield grader
        finally:
            Grader._default = saved

    # ------------------------------------------------------------------
    # What the public functions of ``grading`` do
    # ------------------------------------------------------------------

    def check(self, qid=None, answer=NOT_GIVEN) -> Verdict:
        """Grade ``answer`` to question ``qid`` (e.g. ``check("02.3", answer)``), print feedback, record progress."""
        if self.checking:  # called from the learner's code while a check runs it
            if not self.refused:  # once: the learner's function may call it on every test input
                print(
                    f"{qid} ✗ check(...) is inside your function: unindent it so that it runs "
                    "after the function is defined."
                )
            self.refused = True
            return Verdict(False)
        question = _question(qid, "check")
        if question is None:
            return Verdict(False)
        qid = question.qid
        if answer is NOT_GIVEN:
            print(f'check("{qid}", answer) needs your answer as its second argument.')
            return Verdict(False)
        outer, Grader._running = Grader._running, self
        self.checking, self.refused = True, False
        try:
            if answer is Ellipsis:
                status, message = UNANSWERED, "replace the ... with your answer, then run this cell again."
            else:
                status, message = question.judge(answer, self.runner)
        except KeyboardInterrupt:  # the Interrupt button: the learner's code has been stopped
            status, message = INTERRUPTED, "stopped before every test input ran; run the cell again to check it."
        except Exception as exc:  # an answer too strange to read, a bug of ours, or packages changed under the kernel
            in_worker = isinstance(exc, _runner.GraderFailure)  # its text names the worker's exception
            failed = f"({short_error(exc)})" if in_worker else f"({type(exc).__name__}: {short_error(exc)})"
            if in_worker or is_ordinary(answer) or _stale():
                status, message = UNCHECKABLE, f"the grader failed {failed}"
            else:
                status, message = (
                    WRONG,
                    (f"the grader could not inspect your answer {failed}; give plain numbers, a list or an array."),
                )
        except BaseException as exc:  # SystemExit, GeneratorExit ... raised by the answer itself (e.g. its __array__)
            status = WRONG
            text = short_error(exc)
            message = (
                f"reading your answer raised {type(exc).__name__}{': ' + text if text else ''}; "
                "give plain numbers, a list or an array."
            )
        finally:
            self.checking, Grader._running = False, outer
        if status == UNCHECKABLE:
            message = _uncheckable(message)
        if status == UNANSWERED and self._state(qid) == SOLVED:
            message += " (You solved it earlier; that stays recorded.)"
        if status != UNANSWERED:  # an unanswered cell changes nothing: "Run All" on a blank notebook loses nothing
            _save(self._progress().record(qid, status))
        print(f"{qid} {MARKS[status]}" + ("" if status == CORRECT and not message else f" {message}"))
        if self.runner.method == "spawn" and not _runner._serving:
            # Where the worker is spawned (macOS, Windows), the next check's worker imports numpy, torch and the
            # grader while the learner reads; not when grading is imported, which starts nothing.
            self.runner.warm_up()
        return Verdict(status == CORRECT)

    def reveal(self, qid=None) -> None:
        """Print the answer of choice question ``qid`` with every option's explanation (recorded as shown)."""
        question = _question(qid, "reveal")
        if question is None:
            return
        qid = question.qid
        if question.kind != "choice":
            print(
                f"{qid}: only the answers of choice questions are shown here; the worked answer of every question "
                f"is in the solutions notebook of chapter {qid[:2]}."
            )
            return
        _save(self._progress().reveal(qid))
        print(f"{qid} answer: {question.reference()} — why each option is right or wrong:\n{question.explained()}")

    def progress(self, chapter=None) -> dict[str, str]:
        """The state of every question of ``chapter`` (every chapter when it is left out): "solved" (once solved,
        whatever came after), else the latest result ("wrong", "interrupted", "could not check"), or "untried".

        ``chapter`` may be written "02", "2", 2 or 2.0; anything else prints the chapters that exist and gives {}.
        """
        chapters = _chapters(chapter, "progress")
        if chapters is None:
            return {}
        return {q: self._state(q) for q in QUESTIONS if q[:2] in chapters}

    def summary(self, chapter=None) -> None:
        """Print what is solved, attempted and untried, for ``chapter`` or (left out) for every chapter."""
        chapters = _chapters(chapter, "summary")
        if chapters is None:
            return
        if len(chapters) == 1:
            self._chapter_summary(chapters[0])
        else:
            states = self.progress()
            solved = sum(s == SOLVED for s in states.values())
            untried = sum(s == UNTRIED for s in states.values())
            print(
                f"The course: {solved} of {len(states)} questions solved, {len(states) - solved - untried} "
                f"attempted, {untried} untried."
            )
            for c in chapters:
                self._chapter_summary(c, brief=True)
            print('  summary("02") lists the questions of one chapter.')
        print(f"  {self._progress().where()}")
        if all(self._state(q) == SOLVED for q in QUESTIONS if q[:2] in chapters):
            print("  Every question is solved.")

    def assert_all_correct(self, chapter=None) -> None:
        """Raise AssertionError naming every question of ``chapter`` (every chapter when it is left out) whose
        latest check was not correct: the solutions notebooks end with it, so that a wrong solution fails CI
        even where the question was solved before."""
        chapters = _chapters(chapter, "assert_all_correct", say=_fail)
        entries = self._progress().entries
        bad = {q: (entries.get(q) or {}).get("last") or UNTRIED for q in QUESTIONS if q[:2] in chapters}
        bad = {q: last for q, last in bad.items() if last != CORRECT}
        if bad:
            where = f"chapter {chapters[0]}" if len(chapters) == 1 else "the course"
            listing = ", ".join(f"{q} ({s})" for q, s in bad.items())
            raise _Failed(f"{where}: not all answers are correct: {listing}")

    def reset(self, chapter=None) -> None:
        """Forget every recorded result (in memory and in the progress file; a refused file is moved aside), or
        only those of ``chapter``."""
        if chapter is None:
            done = self._progress().reset()
        else:
            chapters = _chapters(chapter, "reset")
            if chapters is None:
                return
            done = self._progress().forget([q for q in QUESTIONS if q[:2] in chapters]) or (
                f"Progress of chapter {chapters[0]} reset; the other chapters' is kept."
            )
        if done:
            print(done)

    # ------------------------------------------------------------------

    def _progress(self) -> Store:
        """The learner's progress, read from its file at the first use (importing grading reads nothing), when a
        file that cannot be used is named once."""
        if not self.loaded:
            self.loaded = True
            if self.store.load():
                print(f"grading: {self.store.problem}")
        return self.store

    def _state(self, qid) -> str:
        entry = self._progress().entries.get(qid)
        return UNTRIED if entry is None else SOLVED if entry["solved"] else entry["last"]

    def _chapter_summary(self, chapter, brief=False) -> None:
        states = self.progress(chapter)
        solved = [q for q, s in states.items() if s == SOLVED]
        attempted = [q for q, s in states.items() if s not in (SOLVED, UNTRIED)]
        untried = [q for q, s in states.items() if s == UNTRIED]
        if brief:
            print(
                f"  Chapter {chapter}: {len(solved)} of {len(states)} solved"
                + (f"; attempted: {', '.join(attempted)}" if attempted else "")
                + (f"; {len(untried)} untried" if untried else "")
                + "."
            )
            return
        print(
            f"Chapter {chapter}: {len(solved)} of {len(states)} solved, {len(attempted)} attempted, "
            f"{len(untried)} untried."
        )
        for label, ids in [
            ("solved", solved),
            ("attempted, not solved yet", attempted),
            ("untried (run their cells)", untried),
        ]:
            if ids:
                print(f"  {label}: {', '.join(self._detail(q) for q in ids)}")
        shown = sorted(q for q in states if q in self._progress().revealed)
        if shown:
            print(f"  answer shown (grading.reveal): {', '.join(shown)}")

    def _detail(self, qid) -> str:
        """'02.3', or '02.3 (solved; your last try was wrong)', or '02.4 (2 tries, the last wrong)'."""
        entry = self._progress().entries.get(qid)
        if entry is None or (entry["solved"] and entry["last"] == CORRECT):
            return qid
        if entry["solved"]:
            return f"{qid} (solved; your last try was {entry['last']})"
        tries = f"{entry['tries']} tr{'y' if entry['tries'] == 1 else 'ies'}"
        if entry["last"] == UNCHECKABLE:
            return f"{qid} ({tries}; the last check could not be carried out: run it again)"
        return f"{qid} ({tries}, the last {entry['last']})"


def _save(problem):
    if problem:
        print(f"grading: {problem}")


def _uncheckable(what: str) -> str:
    """The one line for a check the grader could not carry out: what failed, that it is not held against the
    answer, and what to do (naming the packages replaced under the running kernel, if any)."""
    what = what.rstrip(".;")
    stale = _stale()
    if stale:
        return (
            f"{what}; that says nothing about your answer and is not recorded as wrong. {'; '.join(stale)}: "
            f"an install replaced {'it' if len(stale) == 1 else 'them'} after this kernel started. Restart the "
            "kernel, then run the notebook from the top."
        )
    return (
        f"{what}; that says nothing about your answer and is not recorded as wrong. Restart the kernel, then "
        "run the notebook from the top; if it happens again, please report it."
    )


def _stale() -> list[str]:
    """ "numpy 1.26.4 is loaded but 2.0.2 is installed", for each watched package (and the course itself) whose
    copy in this kernel is not the installed one."""
    found = []
    for module, distribution in _WATCHED.items():
        loaded = getattr(sys.modules.get(module), "__version__", None)
        installed = _installed(distribution) if loaded else None
        if loaded and installed and str(loaded) != installed:
            found.append(f"{module} {loaded} is loaded but {installed} is installed")
    course = _installed("posenc-course")
    if _COURSE and course and course != _COURSE:
        found.append(f"the course {_COURSE} is loaded but {course} is installed")
    return found


# --------------------------------------------------------------------------
# Reading the arguments a learner gives
# --------------------------------------------------------------------------


def _chapters(chapter, caller, say=print) -> list[str] | None:
    """The chapter ids (["02"]) that ``chapter`` means (None: all of them); for anything else, ``say`` one line
    that names the argument and what it accepts, and give None."""
    if chapter is None:
        return list(_CHAPTERS)
    name = None
    if isinstance(chapter, str):
        name = f"{int(chapter):02d}" if chapter.strip().isdecimal() else None
    elif not isinstance(chapter, bool):
        try:
            value = float(chapter)  # 2, 2.0, numpy integers and floats
        except (TypeError, ValueError, OverflowError):
            value = None
        name = f"{int(value):02d}" if value is not None and value.is_integer() else None
    if name not in _CHAPTERS:
        say(
            f"{caller}: chapter must be one of {', '.join(_CHAPTERS)} (or left out for the whole course), "
            f"not {_shown(chapter)}."
        )
        return None
    return [name]


def _question(qid, caller):
    """The question ``qid`` names ("02.3"; "2.3" too), or None after printing one line saying what an id is."""
    example = f'{caller}("02.3", answer)' if caller == "check" else f'{caller}("01.1")'
    if qid is None:
        print(f"{caller} needs a question id, the first argument: e.g. {example}.")
        return None
    if not isinstance(qid, str):
        print(f'{caller}: the question id must be a string such as "02.3", not {_shown(qid)}.')
        return None
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", qid)
    normal = f"{int(match[1]):02d}.{int(match[2])}" if match else qid
    if normal not in QUESTIONS:
        chapter = [q for q in QUESTIONS if q[:2] == normal[:2]] if match else []
        known = (
            f"chapter {normal[:2]} has {chapter[0]} to {chapter[-1]}"
            if chapter
            else f'ids look like "02.3", chapters {_CHAPTERS[0]} to {_CHAPTERS[-1]}'
        )
        print(f"{caller}: {qid!r} is not a question id ({known}).")
        return None
    return QUESTIONS[normal]
