"""The served book and its visits, for the browser tests of the book: the ``site`` fixture (a plugin: the root
conftest.py lists this module in ``pytest_plugins``).

``site(page, mode)`` is the visit of ``page`` in ``mode``; the first call for a mode visits every page in every
mode of that mode's group (``VISIT_GROUPS``), concurrently. The fixture is module-scoped: each test module makes its
own visits, so the two groups are made by the two modules (test_browser_book.py and test_browser_book_dark.py) and,
under pytest-xdist, by two workers side by side. The tests take no screenshots and write no report: ``make
screenshots`` (``tools/book_report.py``) makes the same visits for that.
"""

from __future__ import annotations

import pytest

from book_build.book_server import serve
from book_build.book_visits import VISIT_GROUPS, Visit, visit_group


class Site:
    """The served book; the first call for a mode visits every page in that mode's group (concurrently), later
    calls look up."""

    def __init__(self, chromium, base):
        self.chromium, self.base, self.visits = chromium, base, {}

    def __call__(self, page: str, mode: str = "laptop") -> Visit:
        if (page, mode) not in self.visits:
            (group,) = [name for name, modes in VISIT_GROUPS.items() if mode in modes]
            self.visits.update(visit_group(self.base, group))
        return self.visits[page, mode]


@pytest.fixture(scope="module")
def site(chromium, book):
    """Serve the built book on 127.0.0.1; the tests of a module share one visit of each page in each mode."""
    with serve(book) as base:
        yield Site(chromium, base)
