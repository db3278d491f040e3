"""The markers the suite's two tiers select on (the tiers: the README, "Tests in two tiers"), and the order the
full tier hands files to its workers. At the repository's root: it applies to tests/ and to the notebooks.

``make check`` runs ``-m "not slow"``. A test is slow, and so left to ``make test``, if it

* drives Chromium (``browser``: every test of a ``test_browser_*`` module, and any test using the
  ``chromium`` fixture),
* needs the strict book build (``book``: any test using the ``book`` or ``build`` fixture),
* or is marked ``slow`` itself (compiling C++, installing the wheel, starting JupyterLab, ...).

``browser`` and ``book`` imply ``slow``, so ``-m "not slow"`` is the whole fast tier.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Fixtures for every test module that names them: the built book, the session's Chromium, the served book and its
# visits, a fresh record of the grader's progress
pytest_plugins = [
    "tests.support.book",
    "tests.support.browser",
    "tests.support.book_site",
    "tests.support.grading_session",
]

BROWSER_FIXTURES = {"chromium"}
BOOK_FIXTURES = {"book", "build"}


def pytest_configure(config):
    # every check the tests run, here or in a notebook kernel they start, records progress in a file of the
    # session's own, never in the progress file of the person running the tests (grading/store.py)
    if "POSENC_PROGRESS" not in os.environ:
        os.environ["POSENC_PROGRESS"] = str(Path(tempfile.mkdtemp(prefix="posenc-progress-")) / "progress.json")
    config.addinivalue_line("markers", "slow: left to the full tier (make test), not run by make check")
    config.addinivalue_line("markers", "browser: drives Chromium through Playwright (implies slow)")
    config.addinivalue_line("markers", "book: needs the strict book build (implies slow)")
    config.addinivalue_line("markers", "environments: builds a learner's stack in fresh virtual environments (slow)")


# Under pytest-xdist (make test: -n 2 --dist loadfile --no-loadscope-reorder) each file is one unit of work, run on
# one worker in order (a notebook's cells share a kernel, a module's fixtures start servers and browsers once), and the
# units are handed out in the order collected here. Files whose tests take longest go first, so that no long one
# starts last: TIERS, from the first handed out. The book is built before pytest starts (make book-strict). The first
# worker starts with one half of the browser tests' visits of the built book (test_browser_book.py), the second with
# the fresh virtual environments of the learner's stacks, minutes of installs, and then takes the other half of the
# visits (test_browser_book_dark.py): the three longest files, minutes each, spread over both workers. Two workers:
# the suite keeps both cores busy, and a third makes it slower, not faster.
TIERS = (
    "the first half of the visits of the built book",
    "fresh virtual environments",  # minutes of installs: the other worker's start
    "browser tests of the built book",  # the other half of the visits, each half minutes long
    "browser or book",  # Chromium, JupyterLab, the strict build's outcome and the PDF
    "slow",  # compiling, the grader's worker processes
    "notebook",  # one kernel each
    "fast",
)
FIRST_VISITS = "test_browser_book.py"


def tier(item) -> int:
    """The index in TIERS of what ``item`` needs (its markers, set below)."""
    browser, book = item.get_closest_marker("browser"), item.get_closest_marker("book")
    if browser and book:
        return 0 if item.path.name == FIRST_VISITS else 2
    if item.get_closest_marker("environments"):
        return 1
    if browser or book:
        return 3
    if item.path.suffix == ".ipynb":
        return 5
    return 4 if item.get_closest_marker("slow") else 6


def pytest_collection_modifyitems(config, items):
    """Markers by what a test needs; every notebook executed once (see LAB_NOTEBOOK); files in TIERS order."""
    from book_build.strict_build import ROOT
    from tests.support.browser import LAB_NOTEBOOK  # (a plugin: imported by pytest, assertions rewritten)

    lab_runs_it = shutil.which("chromium") is not None and any(i.path.name == "test_browser_lab.py" for i in items)
    if lab_runs_it:
        twice = [i for i in items if i.path == ROOT / LAB_NOTEBOOK]
        if twice:
            config.hook.pytest_deselected(items=twice)
            items[:] = [i for i in items if i.path != ROOT / LAB_NOTEBOOK]
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if item.path.name.startswith("test_browser_") or fixtures & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if fixtures & BOOK_FIXTURES:
            item.add_marker(pytest.mark.book)
        if any(item.get_closest_marker(name) for name in ("browser", "book")):
            item.add_marker(pytest.mark.slow)
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
    # a file goes with its most demanding test; sorted is stable: the files of a tier, and the tests of a file, keep
    # their order
    file_tier: dict = {}
    for item in items:
        file_tier[item.path] = min(file_tier.get(item.path, len(TIERS)), tier(item))
    items.sort(key=lambda item: file_tier[item.path])
