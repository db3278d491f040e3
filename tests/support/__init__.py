"""Helpers the test modules share (test modules never import each other).

* ``tests.support.battery``: the grader's battery of tries, built from the bank's declarations (also run by
  tools/grading_report.py)
* ``tests.support.book``: the strict book build, done once per session (a file lock across workers);
  the ``book`` fixture
* ``tests.support.browser``: Chromium via Playwright, the ``chromium`` fixture, the page guard
* ``tests.support.book_visits``: one visit of a page of the book in Chromium, and what the browser tests read from it
* ``tests.support.book_site``: the ``site`` fixture: the served book, visited once per mode by each module that asks
* ``tests.support.book_checks``: the checks every page of the book gets in each mode (both browser modules of the book)
* ``tests.support.explorer_settings``: the slider settings the browser and Node.js tests of the explorers share
* ``tests.support.grading_session``: a grader of its own per test (fresh progress, its settings), one check's output
* ``tests.support.learner_env``: fresh virtual environments outside the repository, as learners have them
* ``tests.support.pytest_run``: pytest run in a subprocess, for the tests that need a fresh process
"""
