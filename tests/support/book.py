"""The strict book build, done once for the whole test session (also across pytest-xdist workers).

``strict_build()`` builds the book as CI does (``jupyter-book build -W -n --keep-going``: warnings are
errors) unless the built HTML is current, and returns that build's outcome. Both ``tests/test_book.py``
(which checks the outcome and the pages) and the browser tests (the ``book`` fixture) use it, so the
book is built once per session, whichever worker gets there first: the others wait on a file lock.

The built HTML is current when no page is stale (``stale_pages``): every page is newer than its source,
the book's configuration and its build code (``book_build/``); the book's own ``_static/`` files are
copied as they are; and the learner-facing code the notebooks import is the one the last finished build
executed (``learner_sources.code_changed_since_build``).

With ``POSENC_REUSE_BUILD=1`` an existing build is used as it is, stale or not (for quick local reruns).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
OUTCOME = ROOT / "_build" / "strict-build.json"  # {"returncode", "stdout", "stderr", "seconds"} of the last build
LOCK = ROOT / "_build" / ".strict-build.lock"


def toc_pages() -> list[str]:
    """Every page of the table of contents, e.g. 'intro', 'chapters/01_order_problem'."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]
    for part in toc.get("parts", []):
        pages += [entry["file"] for entry in part["chapters"]]
    return pages


def toc_parts() -> list[list[str]]:
    """The pages of each part of the table of contents, in order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [[entry["file"] for entry in part["chapters"]] for part in toc.get("parts", [])]


def _source(page: str) -> Path | None:
    for suffix in (".ipynb", ".md"):
        if (ROOT / f"{page}{suffix}").exists():
            return ROOT / f"{page}{suffix}"
    return None


def stale_pages() -> list[str]:
    """Pages whose HTML is missing or older than their source, the configuration or the build code.

    Every page is stale when the book's build code (``book_build/``), the book's own ``_static/``
    files, or the learner-facing code the notebooks import (``learner_sources.code_changed_since_build``)
    changed since the last finished build: the tests then test what the code does now.
    """
    from book_build import learner_sources

    watched = [ROOT / "_config.yml", ROOT / "_toc.yml", *sorted((ROOT / "book_build").glob("*.*"))]
    config = max(path.stat().st_mtime for path in watched if path.exists())
    if learner_sources.code_changed_since_build(ROOT):
        return toc_pages()
    stale = []
    for page in toc_pages():
        html, source = HTML / f"{page}.html", _source(page)
        if not html.exists():
            stale.append(page)
        elif max(config, source.stat().st_mtime if source else 0) > html.stat().st_mtime:
            stale.append(page)
    # the book's own CSS and JavaScript: every page uses them
    for path in (ROOT / "_static").rglob("*"):
        built = HTML / "_static" / path.relative_to(ROOT / "_static")
        if path.is_file() and (not built.exists() or built.read_bytes() != path.read_bytes()):
            return toc_pages()
    return stale


def running_builds() -> list[int]:
    """Process ids of jupyter-book builds of this book running now (two builds at once break the cache)."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        words = [w.decode(errors="replace") for w in cmd]
        if (
            any(w.endswith("jupyter-book") for w in words)
            and "build" in words
            and (cwd == str(ROOT) or str(ROOT) in words)
            and int(proc.name) != os.getpid()
        ):
            pids.append(int(proc.name))
    return pids


def wait_for_running_builds(timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while running_builds():
        if time.monotonic() > deadline:
            pytest.fail(f"a jupyter-book build of {ROOT} has been running for {timeout:.0f} s")
        time.sleep(1)


def strict_build() -> dict:
    """The outcome of the strict build of the current sources: builds first unless the HTML is current.

    Returns ``{"returncode", "stdout", "stderr", "seconds", "built_now"}``. A build already running
    (``make book`` in another shell, or another test worker) is waited for, not doubled.
    """
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        wait_for_running_builds()
        reuse = os.environ.get("POSENC_REUSE_BUILD") == "1" and (HTML / "index.html").exists()
        stale = [] if reuse else stale_pages()
        if OUTCOME.exists() and not stale:
            return {**json.loads(OUTCOME.read_text()), "built_now": False}
        jb = Path(sys.executable).parent / "jupyter-book"
        # every page stale (the configuration, the build code or the learner-facing code changed): every page
        # is written again (--all), as Sphinx would otherwise skip the pages whose own source did not change
        # (notebooks still come from the execution cache unless the learner-facing code changed)
        everything = ["--all"] if set(stale) >= set(toc_pages()) else []
        start = time.monotonic()
        result = subprocess.run(
            [str(jb), "build", str(ROOT), "--builder", "html", "-W", "-n", "--keep-going", *everything],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        outcome = {
            "returncode": result.returncode,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "seconds": round(time.monotonic() - start, 1),
        }
        OUTCOME.write_text(json.dumps(outcome))
        return {**outcome, "built_now": True}


@pytest.fixture(scope="session")
def book() -> Path:
    """The built HTML book (the strict build of the current sources); fails if it did not build.

    Without Chromium nothing is built for the browser tests: they skip (or fail under CI=true) first.
    """
    from tests.support.browser import chromium_executable

    chromium_executable()
    outcome = strict_build()
    if not (HTML / "index.html").exists():
        pytest.fail(f"the book did not build:\n{outcome['stdout'][-3000:]}{outcome['stderr'][-3000:]}")
    return HTML
