"""The built book, for the tests that read it: the ``book`` fixture (a plugin: the root conftest.py lists it).

The tests never build: ``make test`` makes the strict build first (``book_build/strict_build.py``, ``make
book-strict``), and the tests read its pages and its outcome. A test run without a current build fails at once and
says what to run. With ``POSENC_REUSE_BUILD=1`` an existing build is used as it is, stale or not (quick local reruns).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from book_build.strict_build import HTML, OUTCOME, stale_pages, toc_pages


def strict_build() -> dict:
    """The outcome of the strict build of the current sources (``{"returncode", "stdout", "stderr", "seconds"}``);
    fails the test when there is none."""
    if os.environ.get("POSENC_REUSE_BUILD") == "1" and OUTCOME.exists():
        return json.loads(OUTCOME.read_text())
    stale = stale_pages() if OUTCOME.exists() else toc_pages()
    if stale:
        pytest.fail(
            f"no strict build of the current sources ({len(stale)} of {len(toc_pages())} pages stale): "
            "run `make book-strict` (make test does) or set POSENC_REUSE_BUILD=1 to use the build there is"
        )
    return json.loads(OUTCOME.read_text())


@pytest.fixture(scope="session")
def book() -> Path:
    """The built HTML book (the strict build of the current sources); fails if it did not build.

    Without Chromium the browser tests skip (or fail under CI=true) first.
    """
    from tests.support.browser import chromium_executable

    chromium_executable()
    outcome = strict_build()
    if not (HTML / "index.html").exists():
        pytest.fail(f"the book did not build:\n{outcome['stdout'][-3000:]}{outcome['stderr'][-3000:]}")
    return HTML
