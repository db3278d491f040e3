"""Progress on disk (grading/store.py): read back after a restart, written atomically, a damaged or foreign
file refused with a message and never written over, a reset that sets such a file aside."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import grading
from grading import store
from grading.store import FORMAT, Store
from support.grading_session import feedback, fresh_progress  # noqa: F401  (an autouse fixture)

ROOT = Path(__file__).resolve().parent.parent


def saved(path):
    return json.loads(path.read_text())


def test_what_is_recorded_is_read_back_by_the_next_kernel(tmp_path):
    path = tmp_path / "sub" / "progress.json"
    first = Store(path)
    assert first.load() == "" and not path.exists()  # no file yet: an empty record
    assert first.record("02.3", "correct") == "" and first.record("01.1", revealed=True) == ""
    assert saved(path) == {"format": FORMAT, "version": 1, "questions": {"02.3": "correct"}, "revealed": ["01.1"]}
    second = Store(path)
    assert second.load() == ""
    assert second.status == {"02.3": "correct"} and second.revealed == {"01.1"}


def test_two_kernels_do_not_undo_each_other(tmp_path):
    path = tmp_path / "progress.json"
    a, b = Store(path), Store(path)
    a.load(), b.load()
    a.record("02.3", "correct")
    b.record("03.2", "wrong")  # b loaded before a wrote: it merges, it does not drop 02.3
    assert saved(path)["questions"] == {"02.3": "correct", "03.2": "wrong"}
    a.record("03.2", "correct")
    assert saved(path)["questions"] == {"02.3": "correct", "03.2": "correct"}


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
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["progress.json"]  # no temporary file left


@pytest.mark.parametrize("content,why", [
    ("{not json", "is not valid JSON"),
    (json.dumps({"theme": "dark"}), "is not a progress file of this course"),
    (json.dumps([1, 2]), "is not a progress file of this course"),
    (json.dumps({"format": FORMAT, "version": 2, "questions": {}}), "version 2; this grader reads version 1"),
    (json.dumps({"format": FORMAT, "version": 1, "questions": {"02.3": "great"}}), "not a map of question ids"),
    (json.dumps({"format": FORMAT, "version": 1, "questions": {}, "revealed": "01.1"}), "not a list"),
])
def test_a_damaged_or_foreign_file_is_refused_and_never_written_over(content, why, tmp_path, capsys):
    path = tmp_path / "progress.json"
    path.write_text(content)
    s = Store(path)
    message = s.load()
    assert why in message and str(path) in message and "left as it is" in message, message
    assert s.record("02.3", "correct") == "" and s.status == {"02.3": "correct"}  # kept in memory
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
    assert saved(path)["questions"] == {"02.3": "correct"}


def test_the_place_is_the_environment_variable_or_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("POSENC_PROGRESS", str(tmp_path / "mine.json"))
    assert store.default_path() == tmp_path / "mine.json"
    monkeypatch.delenv("POSENC_PROGRESS")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert store.default_path() == tmp_path / ".posenc-course" / "progress.json"


def test_check_records_summary_says_where_and_reset_forgets(capsys, tmp_path):
    path = tmp_path / "progress.json"  # the fixture's file
    assert feedback(capsys, "02.3", 0.01)[0]
    assert saved(path)["questions"] == {"02.3": "correct"}
    grading._use_progress_file(path)  # what a restarted kernel does at import
    assert grading.progress("02")["02.3"] == "correct"
    grading.summary("02")
    assert f"Progress is saved in {path} (grading.reset() starts afresh)." in capsys.readouterr().out
    grading.reset()
    assert "now records nothing" in capsys.readouterr().out
    assert grading.progress("02")["02.3"] == "unchecked" and saved(path)["questions"] == {}


def test_a_refused_file_is_named_by_check_and_summary_but_grading_goes_on(capsys, tmp_path):
    path = tmp_path / "progress.json"
    path.write_text("{damaged")
    grading._use_progress_file(path)
    assert feedback(capsys, "02.3", 0.01) == (True, "02.3 ✓ correct\n")
    grading.summary("02")
    out = capsys.readouterr().out
    assert "Chapter 02: 1 of 7 correct." in out and f"kept in memory only: the file {path} is not valid JSON" in out
    assert path.read_text() == "{damaged"


def test_progress_survives_a_restart_of_the_python_process(tmp_path):
    """Two processes, one after the other, as a kernel and the same kernel restarted."""
    env = {**os.environ, "POSENC_PROGRESS": str(tmp_path / "progress.json"),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    run = [sys.executable, "-c"]
    first = subprocess.run(run + ["from grading import check; check('02.3', 0.01); check('02.4', 1.0)"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert first.returncode == 0 and "02.3 ✓ correct" in first.stdout, first.stdout + first.stderr
    second = subprocess.run(run + ["from grading import summary; summary('02')"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert "Chapter 02: 1 of 7 correct." in second.stdout and "wrong: 02.4" in second.stdout, second.stdout
    assert f"Progress is saved in {tmp_path / 'progress.json'}" in second.stdout
