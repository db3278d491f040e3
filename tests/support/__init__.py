"""Helpers the test modules share (test modules never import each other).

* ``support.browser``: Chromium via Playwright, the built book, the page guard
* ``support.grading_session``: a fresh record of grading progress per test, one check's output
"""
