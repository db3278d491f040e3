"""The question bank: one module per chapter, each adding its questions here.

To add a question to chapter 04, open ``ch04.py`` and ``_add(...)`` it there,
with its test data in the same declaration (``known_mistakes``,
``alternatives``, ``covers``: see ``grading.kinds.Question``), from which
tests/support/battery.py builds the tries, and the results its texts report
(``states``), which tests/test_numbers_in_prose.py checks. ``grading.kinds`` has the four
kinds, ``common.py`` what chapters share, ``learner_code.py`` the code written
as learners write it that several chapters' test data use.
"""

from __future__ import annotations

QUESTIONS: dict = {}  # question id -> Question, in the order the chapters add them


def _add(question):
    QUESTIONS[question.qid] = question


from grading.bank import ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11, ch12, ch13  # noqa: E402,F401  (each adds its questions)
