"""Helpers the test modules share (test modules never import each other).

* ``support.battery``: the grader's battery of tries, built from the bank's declarations (also run by
  tools/grading_report.py)
* ``support.book``: the strict book build, done once per session (a file lock across workers)
* ``support.browser``: Chromium via Playwright, the ``chromium`` and ``book`` fixtures, the page guard
* ``support.explorer_settings``: the slider settings the browser and Node.js tests of the explorers share
* ``support.grading_session``: a fresh record of grading progress per test, one check's output
* ``support.learner_env``: fresh virtual environments outside the repository, as learners have them
* ``support.pytest_run``: pytest run in a subprocess, for the tests that need a fresh process
"""
