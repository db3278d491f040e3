"""book_build/strict_build.py (make book-strict): builds only when a page is stale, keeps the outcome the tests read;
the tests never build, and say what to run when there is no current build."""

from __future__ import annotations

import json
import subprocess

import pytest

from book_build import strict_build
from tests.support import book


def test_the_build_code_is_what_the_extension_imports_and_nothing_that_only_reads_the_book():
    names = {path.name for path in strict_build.build_code()}
    assert {"book_assets.py", "book_kit.py", "learner_sources.py", "icon_fonts.py", "math_prerender.js"} <= names
    assert not names & {"book_visits.py", "page_guard.py", "page_audit.js", "strict_build.py", "book_server.py"}


@pytest.fixture
def outcome_file(tmp_path, monkeypatch):
    path = tmp_path / "strict-build.json"
    monkeypatch.setattr(strict_build, "OUTCOME", path)
    monkeypatch.setattr(book, "OUTCOME", path)
    return path


def fake_build(monkeypatch, returncode=0):
    calls = []

    def run(args, **kwargs):
        calls.append(args)
        return subprocess.CompletedProcess(args, returncode, stdout="built", stderr="" if not returncode else "WARNING")

    monkeypatch.setattr(strict_build.subprocess, "run", run)
    return calls


def test_a_current_build_is_not_made_again(outcome_file, monkeypatch):
    outcome_file.write_text(json.dumps({"returncode": 0, "stdout": "", "stderr": "", "seconds": 1.0}))
    monkeypatch.setattr(strict_build, "stale_pages", lambda: [])
    calls = fake_build(monkeypatch)
    assert strict_build.build()["built_now"] is False and calls == []
    assert strict_build.main() == 0


def test_a_stale_page_is_built_strictly_and_everything_when_everything_is_stale(outcome_file, monkeypatch):
    calls = fake_build(monkeypatch)
    monkeypatch.setattr(strict_build, "stale_pages", lambda: ["chapters/01_order_problem"])
    assert strict_build.build()["built_now"]
    assert {"-W", "-n", "--keep-going"} <= set(calls[-1]) and "--all" not in calls[-1]
    monkeypatch.setattr(strict_build, "stale_pages", strict_build.toc_pages)
    strict_build.build()
    assert "--all" in calls[-1]
    assert json.loads(outcome_file.read_text())["returncode"] == 0


def test_a_failed_build_fails_the_command_and_shows_its_warnings(outcome_file, monkeypatch, capsys):
    fake_build(monkeypatch, returncode=1)
    monkeypatch.setattr(strict_build, "stale_pages", lambda: ["intro"])
    assert strict_build.main() == 1
    err = capsys.readouterr().err
    assert "WARNING" in err and "FAILED" in err


def test_a_test_of_the_book_without_a_current_build_says_what_to_run(outcome_file, monkeypatch):
    monkeypatch.delenv("POSENC_REUSE_BUILD", raising=False)
    with pytest.raises(pytest.fail.Exception, match="make book-strict"):
        book.strict_build()
    outcome_file.write_text(json.dumps({"returncode": 0, "stdout": "", "stderr": "", "seconds": 1.0}))
    monkeypatch.setattr(book, "stale_pages", lambda: ["intro"])
    with pytest.raises(pytest.fail.Exception, match="1 of .* pages stale"):
        book.strict_build()
    monkeypatch.setattr(book, "stale_pages", lambda: [])
    assert book.strict_build()["returncode"] == 0
