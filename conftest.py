"""Markers and tiers of the suite (at the repository's root: it applies to tests/ and to the notebooks).

``make check`` (the fast tier, for every change) runs ``-m "not slow"``;
``make test`` runs everything. A test is slow, and so left to ``make test``, if it

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

# Fixtures for every test module that names them: the built book, the session's Chromium, a fresh record of the
# grader's progress
pytest_plugins = ["tests.support.book", "tests.support.browser", "tests.support.grading_session"]

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


# Under pytest-xdist (make test: -n 2 --dist loadgroup) the tests of one file run on one worker, in order: a
# notebook's cells share a kernel, a module's fixtures start servers and browsers once. A file's tests marked
# ``xdist_group`` are a unit of their own: the second half of the browser tests' page visits (VISIT_GROUPS in
# tests/test_browser_book.py), which a second worker makes while the first makes the other half. Units are handed
# out longest first (LONGEST), the rest in collection order, so that no long one starts last. The browser
# tests of the built book come first: the strict build they need is done once (tests/support/book.py: a file lock), by
# whichever worker asks first; the dark half and tests/test_book.py, which need it too, come after two files that
# take about as long as the build, so that the second worker rarely waits for it. Two workers: the suite keeps both
# cores busy, and a third makes it slower, not faster.
LONGEST = [
    "test_browser_book.py",
    "test_grading.py",
    "test_learner_stacks.py",
    "test_grading_runner.py",
    "browser-book-dark",
    "test_book.py",
    "test_posenc_compile.py",
    "test_wheel.py",
    "test_explorers.py",
    "test_browser_lab.py",
    # then the fast tier's longer files
    "test_posenc_rope_scaling.py",
    "test_posenc_platform.py",
    "test_grading_bank.py",
    "test_make_exercises.py",
    "test_posenc_import.py",
    "test_grading_store.py",
]


def unit(item) -> str:
    """The unit of work ``item`` belongs to: its xdist_group, else its file."""
    group = item.get_closest_marker("xdist_group")
    return group.args[0] if group else item.path.name


def scope_of(nodeid: str) -> str:
    """The unit of work of a test id as the scheduler sees it: with --dist loadgroup a grouped test's id ends in
    "@<group>" (an "@" inside the parameters does not count); any other test goes with its file."""
    if nodeid.rfind("@") > nodeid.rfind("]"):
        return nodeid.rsplit("@", 1)[1]
    return nodeid.split("::", 1)[0]


def pytest_xdist_make_scheduler(config, log):
    """Units of work: each file (each xdist_group with --dist loadgroup), handed out in the order
    pytest_collection_modifyitems gives them."""
    from xdist.scheduler import LoadGroupScheduling

    class FilesAndGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    config.option.loadscopereorder = False  # keep that order (xdist would sort by number of tests)
    return FilesAndGroups(config, log)


def _name_groups(config, items) -> None:
    """In an xdist worker under --dist loadgroup: a grouped test's id ends in "@<group>", as the scheduler expects.

    pytest-xdist 3.8 appends it by assigning ``item._nodeid``, which pytest 9.2 no longer reads (its node ids are
    structured: ``item._id``), so every group would be scattered over the workers, both halves of the browser visits
    landing on one (https://github.com/pytest-dev/pytest-xdist/issues/1386). The structured id is set here.
    """
    if not getattr(config.option, "loadgroup", False):
        return
    from _pytest.nodeid import NodeId

    for item in items:
        group = item.get_closest_marker("xdist_group")
        if group is None or scope_of(item.nodeid) == group.args[0]:
            continue  # not grouped, or xdist named it already
        item._id = NodeId.parse(f"{item.nodeid}@{group.args[0]}")


def pytest_collection_modifyitems(config, items):
    """Markers by what a test needs; every notebook executed once (see LAB_NOTEBOOK); groups in node ids."""
    from tests.support.browser import LAB_NOTEBOOK, ROOT  # (a plugin: imported by pytest, assertions rewritten)

    _name_groups(config, items)
    lab_runs_it = shutil.which("chromium") is not None and any(i.path.name == "test_browser_lab.py" for i in items)
    if lab_runs_it:
        twice = [i for i in items if i.path == ROOT / LAB_NOTEBOOK]
        if twice:
            config.hook.pytest_deselected(items=twice)
            items[:] = [i for i in items if i.path != ROOT / LAB_NOTEBOOK]
    rank = {name: n for n, name in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(unit(item), len(LONGEST)))  # stable: in a file, the order stays
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
