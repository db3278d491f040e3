"""Progress on disk (grading/store.py): read back after a restart, solved stays solved, written atomically, a
damaged or foreign file (or one of a format no release wrote) refused with a message and never written over, a
reset that sets such a file aside."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import grading
from grading import store
from grading.store import FORMAT, VERSION, Store
from tests.support.grading_session import feedback

pytestmark = pytest.mark.usefixtures("fresh_progress")  # every test: progress of its own

ROOT = Path(__file__).resolve().parent.parent


def chapter_02() -> int:
    """How many questions the bank has in chapter 02 (the chapter these tests answer)."""
    from grading.bank import QUESTIONS

    return sum(qid.startswith("02.") for qid in QUESTIONS)


def saved(path):
    return json.loads(path.read_text())


def results(path):
    """question id -> (solved, tries, last) of the file at ``path``."""
    return {q: (e["solved"], e["tries"], e["last"]) for q, e in saved(path)["questions"].items()}


def test_what_is_recorded_is_read_back_by_the_next_kernel(tmp_path):
    path = tmp_path / "sub" / "progress.json"
    first = Store(path)
    assert first.load() == "" and not path.exists()  # no file yet: an empty record
    assert first.record("02.3", "correct") == "" and first.reveal("01.1") == ""
    data = saved(path)
    assert (data["format"], data["version"], data["revealed"]) == (FORMAT, VERSION, ["01.1"])
    assert results(path) == {"02.3": (True, 1, "correct")}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", data["questions"]["02.3"]["when"])
    second = Store(path)
    assert second.load() == ""
    assert second.entries == data["questions"] and second.revealed == {"01.1"}


def test_solved_stays_solved_tries_are_counted_and_could_not_check_is_no_try(tmp_path):
    path = tmp_path / "progress.json"
    s = Store(path)
    s.load()
    for result in ["wrong", "correct", "wrong", "interrupted", "could not check"]:
        s.record("02.5", result)
    assert results(path) == {"02.5": (True, 4, "could not check")}
    s.record("02.6", "could not check")
    assert results(path)["02.6"] == (False, 0, "could not check")
    with pytest.raises(ValueError, match="result must be one of"):
        s.record("02.6", "unanswered")  # an unanswered cell is not recorded: grading.check never passes it


def test_two_kernels_do_not_undo_each_other(tmp_path):
    path = tmp_path / "progress.json"
    a, b = Store(path), Store(path)
    a.load(), b.load()
    a.record("02.3", "correct")
    b.record("03.2", "wrong")  # b loaded before a wrote: it adds to the file, it does not drop 02.3
    assert results(path) == {"02.3": (True, 1, "correct"), "03.2": (False, 1, "wrong")}
    a.record("03.2", "correct")
    b.record("02.3", "wrong")  # b had not seen a's 02.3: its try counts, and 02.3 stays solved
    assert results(path) == {"02.3": (True, 2, "wrong"), "03.2": (True, 2, "correct")}
    assert a.entries != b.entries and Store(path).load() == ""


def test_a_write_that_fails_halfway_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    s = Store(path)
    s.load()
    s.record("02.3", "correct")
    before = path.read_bytes()

    def breaks(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store.json, "dump", breaks)
    assert "could not be written (No space left on device)" in s.record("02.4", "wrong")
    assert s.entries["02.4"]["last"] == "wrong"  # kept in memory
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "progress.json",
        "progress.json.lock",
    ]  # no temporary file left


@pytest.mark.parametrize(
    "content,why",
    [
        ("{not json", "is not valid JSON"),
        (json.dumps({"theme": "dark"}), "is not a progress file of this course"),
        (json.dumps([1, 2]), "is not a progress file of this course"),
        (
            json.dumps({"format": FORMAT, "version": VERSION + 1, "questions": {}}),
            f"version {VERSION + 1}, written by a newer release of the course; upgrade the course to read it",
        ),
        (json.dumps({"format": FORMAT, "version": "2", "questions": {}}), "which this grader does not know"),
        # the drafts' formats, which no release wrote
        (
            json.dumps({"format": FORMAT, "version": 1, "questions": {"02.3": "correct"}}),
            f"which this grader does not know (it reads version {VERSION})",
        ),
        (
            json.dumps({"format": FORMAT, "version": VERSION - 1, "questions": {}}),
            f"which this grader does not know (it reads version {VERSION})",
        ),
        (json.dumps({"format": FORMAT, "version": VERSION, "questions": {"02.3": "great"}}), "not a map of question"),
        (
            json.dumps({"format": FORMAT, "version": VERSION, "questions": {"02.3": "correct"}}),
            "not a map of question ids",
        ),
        (
            json.dumps(
                {
                    "format": FORMAT,
                    "version": VERSION,
                    "questions": {"02.3": {"solved": True, "tries": -1, "last": "correct", "when": None}},
                }
            ),
            "not a map of question ids",
        ),
        (json.dumps({"format": FORMAT, "version": VERSION, "questions": {}, "revealed": "01.1"}), "not a list"),
    ],
)
def test_a_damaged_or_foreign_file_is_refused_and_never_written_over(content, why, tmp_path, capsys):
    path = tmp_path / "progress.json"
    path.write_text(content)
    s = Store(path)
    message = s.load()
    assert why in message and str(path) in message and "left as it is" in message, message
    assert s.record("02.3", "correct") == "" and s.entries["02.3"]["solved"]  # kept in memory
    assert path.read_text() == content
    assert s.where().startswith("Progress is kept in memory only: the file")


def test_a_file_replaced_by_another_program_meanwhile_is_not_written_over(tmp_path):
    path = tmp_path / "progress.json"
    s = Store(path)
    s.load()
    s.record("02.3", "correct")
    path.write_text("something else")
    assert "changed since it was read" in s.record("02.4", "wrong")
    assert path.read_text() == "something else"


def test_reset_sets_a_refused_file_aside_and_starts_afresh(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text("{damaged")
    s = Store(path)
    assert s.load()
    done = s.reset()
    assert f"moved to {path}.refused" in done and "now records nothing" in done, done
    assert (tmp_path / "progress.json.refused").read_text() == "{damaged"
    assert saved(path)["questions"] == {} and s.problem == ""
    s.record("02.3", "correct")
    assert results(path) == {"02.3": (True, 1, "correct")}


def test_the_place_is_the_environment_variable_or_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("POSENC_PROGRESS", str(tmp_path / "mine.json"))
    assert store.default_path() == tmp_path / "mine.json"
    monkeypatch.delenv("POSENC_PROGRESS")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert store.default_path() == tmp_path / ".posenc-course" / "progress.json"


def test_check_records_summary_says_where_and_reset_forgets(capsys, tmp_path):
    path = tmp_path / "progress.json"  # the fixture's file
    assert feedback(capsys, "02.3", 0.01)[0]
    assert results(path) == {"02.3": (True, 1, "correct")}
    restarted = grading.Grader(path)  # a restarted kernel's grader: it reads the file at its first use
    assert restarted.progress("02")["02.3"] == "solved"
    restarted.summary("02")
    assert f"Progress is saved in {path} (grading.reset() starts afresh)." in capsys.readouterr().out
    restarted.reset()
    assert "now records nothing" in capsys.readouterr().out
    assert restarted.progress("02")["02.3"] == "untried" and saved(path)["questions"] == {}


def test_a_grader_keeps_its_own_progress_and_use_grader_lends_it_to_the_public_functions(capsys, tmp_path):
    mine = grading.Grader(tmp_path / "mine.json")
    assert mine.check("02.3", 0.01) and capsys.readouterr().out == "02.3 ✓ correct\n"
    assert results(tmp_path / "mine.json") == {"02.3": (True, 1, "correct")}
    assert grading.progress("02")["02.3"] == "untried"  # the fixture's grader
    with grading.use_grader(mine):
        assert grading.progress("02")["02.3"] == "solved"
        grading.check("02.4", 1.0)
    assert grading.progress("02")["02.4"] == "untried" and mine.progress("02")["02.4"] == "wrong"
    memory = grading.Grader(None)
    memory.check("02.3", 0.01)
    memory.summary("02")
    assert "Progress is kept in memory only" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.json", "mine.json.lock"]


def test_reset_of_one_chapter_keeps_the_others(capsys, tmp_path):
    path = tmp_path / "progress.json"
    check = grading.check
    check("02.3", 0.01), check("03.1", "Z"), check("01.1", "B")
    grading.reveal("01.1")
    capsys.readouterr()
    grading.reset("01")
    assert capsys.readouterr().out == "Progress of chapter 01 reset; the other chapters' is kept.\n"
    assert set(results(path)) == {"02.3", "03.1"} and saved(path)["revealed"] == []


def test_a_refused_file_is_named_by_check_and_summary_but_grading_goes_on(capsys, tmp_path):
    path = tmp_path / "progress.json"
    path.write_text("{damaged")
    verdict, out = feedback(capsys, "02.3", 0.01)  # the first use of the fixture's grader reads the file
    assert verdict and out.startswith(f"grading: the file {path} is not valid JSON") and out.count("\n") == 2, out
    assert out.endswith("\n02.3 ✓ correct\n"), out
    grading.summary("02")
    out = capsys.readouterr().out
    assert f"Chapter 02: 1 of {chapter_02()} solved" in out
    assert f"kept in memory only: the file {path} is not valid JSON" in out
    assert path.read_text() == "{damaged"


def test_solved_survives_later_tries_and_a_restart_of_the_python_process(tmp_path):
    """Two processes, one after the other, as a kernel and the same kernel restarted: right, then the blank
    cell run again, then wrong; the question is solved in both."""
    env = {
        **os.environ,
        "POSENC_PROGRESS": str(tmp_path / "progress.json"),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    run = [sys.executable, "-c"]
    first = subprocess.run(
        run
        + [
            "from grading import check, progress; check('02.3', 0.01); check('02.3', ...); "
            "check('02.3', 0.5); check('02.4', 1.0); print(progress('02')['02.3'])"
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.splitlines()[0] == "02.3 ✓ correct" and first.stdout.splitlines()[-1] == "solved"
    second = subprocess.run(
        run + ["from grading import progress, summary; print(progress()['02.3']); summary('02')"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = second.stdout.splitlines()
    assert lines[:4] == [
        "solved",
        f"Chapter 02: 1 of {chapter_02()} solved, 1 attempted, {chapter_02() - 2} untried.",
        "  solved: 02.3 (solved; your last try was wrong)",
        "  attempted, not solved yet: 02.4 (1 try, the last wrong)",
    ], second.stdout + second.stderr
    assert "Progress is saved in the file $POSENC_PROGRESS names" in second.stdout  # (env sets it)


def test_importing_the_grader_reads_nothing_and_a_refused_file_is_named_once_at_first_use(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text("{damaged")
    env = {
        **os.environ,
        "POSENC_PROGRESS": str(path),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    code = (
        "import os, sys\n"
        "opened = []\n"
        "sys.addaudithook(lambda event, args: event == 'open' and str(args[0]) == os.environ['POSENC_PROGRESS'] "
        "and opened.append(args[0]))\n"
        "import grading\n"
        "print('imported; the file opened', len(opened), 'times')\n"
        "grading.summary('02')\n"
        "grading.check('02.3', 0.01)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert lines[0] == "imported; the file opened 0 times", done.stdout + done.stderr
    assert lines[1].startswith(f"grading: the file {path} is not valid JSON"), lines
    assert sum("is not valid JSON" in line for line in lines) == 2  # the first use, and summary's where-line
    assert lines[-1] == "02.3 ✓ correct" and path.read_text() == "{damaged"


def test_the_progress_file_is_named_without_the_machines_layout(tmp_path, monkeypatch):
    """summary() names the file as a learner finds it, and a page of the book built anywhere shows no path of the
    machine that built it: the variable that chose it, or ~ for the home folder; elsewhere, the path itself."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("POSENC_PROGRESS", str(tmp_path / "chosen.json"))
    assert store.Store(tmp_path / "chosen.json").shown_path() == "the file $POSENC_PROGRESS names"
    assert store.Store(tmp_path / "home" / ".posenc-course" / "progress.json").shown_path() == str(
        Path("~", ".posenc-course", "progress.json")
    )
    assert store.Store(tmp_path / "other.json").shown_path() == str(tmp_path / "other.json")
    monkeypatch.delenv("POSENC_PROGRESS")
    assert store.default_path() == tmp_path / "home" / ".posenc-course" / "progress.json"
    assert store.Store(store.default_path()).where() == (
        f"Progress is saved in {Path('~', '.posenc-course', 'progress.json')} (grading.reset() starts afresh)."
    )


RECORDS = """
import sys
from pathlib import Path
from grading.store import Store
store = Store(Path(sys.argv[1]))
for n in range(int(sys.argv[3])):
    store.record(f"{sys.argv[2]}.{n}", "correct")
"""


def test_two_kernels_checking_at_once_lose_no_check(tmp_path):
    """Two processes record checks into one file at the same time (each write synced to disk, as a learner's is):
    every check of both is kept. Without the lock, one's read-change-write dropped checks the other wrote in
    between (the strict build's parallel kernels lost 10.5 that way)."""
    path, n = tmp_path / "progress.json", 150
    runs = [
        subprocess.Popen([sys.executable, "-c", RECORDS, str(path), prefix, str(n)], env=os.environ.copy())
        for prefix in ("01", "02")
    ]
    assert [run.wait(timeout=120) for run in runs] == [0, 0]
    entries = json.loads(path.read_text())["questions"]
    assert sorted(entries) == sorted(f"{prefix}.{k}" for prefix in ("01", "02") for k in range(n))
