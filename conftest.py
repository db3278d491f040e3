"""Markers and tiers of the suite.

``make check`` (the fast tier, for every change) runs ``-m "not slow"``;
``make test`` runs everything. A test is slow, and so left to ``make test``, if it

* drives Chromium (``browser``: every test of a ``test_browser_*`` module, and any test using the
  ``chromium`` fixture),
* needs the strict book build (``book``: any test using the ``book`` or ``build`` fixture),
* or is marked ``slow`` itself (compiling C++, installing the wheel, starting JupyterLab, ...).

``browser`` and ``book`` imply ``slow``, so ``-m "not slow"`` is the whole fast tier.
"""

from __future__ import annotations

import pytest

# the session's Chromium and the built book, for every test module that names them
from support.book import book  # noqa: F401
from support.browser import chromium  # noqa: F401

BROWSER_FIXTURES = {"chromium"}
BOOK_FIXTURES = {"book", "build"}


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: left to the full tier (make test), not run by make check")
    config.addinivalue_line("markers", "browser: drives Chromium through Playwright (implies slow)")
    config.addinivalue_line("markers", "book: needs the strict book build (implies slow)")


# Under pytest-xdist (make test: -n 2 --dist loadgroup) the tests of one file run on one worker, in order (a
# notebook's cells share a kernel; a module's fixtures start servers and browsers once), and the strict build and
# the browser tests of the built book share one worker: the build comes first, the other worker meanwhile runs
# everything else.
BOOK_GROUP = {"test_book.py", "test_browser_book.py"}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
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
        group = "the built book" if item.path.name in BOOK_GROUP else str(item.path)
        item.add_marker(pytest.mark.xdist_group(group))
