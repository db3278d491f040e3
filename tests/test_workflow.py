"""The GitHub Actions workflow (.github/workflows/book.yml), which cannot run here: actionlint checks its syntax
(make lint); these tests check that it keeps its promises: the suite on Linux, the fast tier where the grader's
worker spawns, the newest allowed dependencies on a schedule, the evidence of a failed run kept."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
JOBS = WORKFLOW["jobs"]


def runs(job: str) -> str:
    return "\n".join(step.get("run", "") for step in JOBS[job]["steps"])


def test_the_whole_suite_runs_as_ci_does_on_every_push():
    assert ".ci/run" in runs("test")
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_the_fast_tier_runs_on_macos_and_windows():
    assert {"macos-latest", "windows-latest"} <= set(JOBS["fast-tier"]["strategy"]["matrix"]["os"])
    assert '-m "not slow"' in runs("fast-tier")


def test_a_weekly_job_installs_the_wheel_with_the_newest_allowed_dependencies():
    on = WORKFLOW[True] if True in WORKFLOW else WORKFLOW["on"]  # (YAML 1.1 reads the key `on` as true)
    assert on["schedule"]
    job = JOBS["newest-dependencies"]
    assert "schedule" in job["if"]
    assert "--upgrade-strategy eager" in runs("newest-dependencies") and ".whl" in runs("newest-dependencies")
    assert '-m "not slow"' in runs("newest-dependencies")


def test_every_testing_job_keeps_its_evidence_when_it_fails():
    for name, job in JOBS.items():
        if name == "deploy":
            continue
        kept = [
            s
            for s in job["steps"]
            if s.get("uses", "").startswith("actions/upload-artifact") and s.get("if") == "failure()"
        ]
        assert kept, name
        assert "_build/reports/" in kept[0]["with"]["path"], name
    assert "--junitxml=_build/reports/" in (ROOT / "Makefile").read_text()


def test_pip_and_the_execution_cache_are_cached():
    cached = " ".join(s["with"]["path"] for s in JOBS["test"]["steps"] if s.get("uses", "").startswith("actions/cache"))
    assert "~/.cache/pip" in cached and "_build/.jupyter_cache" in cached
