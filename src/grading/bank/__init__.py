"""The question bank: one module per chapter (``ch01.py``, ``ch02.py`` ...), collected here.

Each chapter module lists its questions, in order, in its own ``QUESTIONS`` (a list, filled by its ``_add(...)``
calls) and imports nothing from this package's ``__init__``; this registry imports every ``chNN`` module of the
package, in the order of their numbers, and collects their questions into ``QUESTIONS`` (id -> question). To add a
question to chapter 04, open ``ch04.py`` and ``_add(...)`` it there, with its test data in the same declaration
(``known_mistakes``, ``alternatives``, ``covers``: see ``grading.kinds.Question``), from which
tools/grading_battery.py builds the tries, and the results its texts report (``states``), which
tests/test_numbers_in_prose.py checks. A new chapter is a new ``chNN.py``, found here by its name.
``grading.kinds`` has the four kinds, ``common.py`` what chapters share, ``learner_code.py`` the code written as
learners write it that several chapters' test data use.
"""

from __future__ import annotations

import importlib
import pkgutil
import re


def question(qid):
    """The bank's question ``qid``: how a spawned worker finds the question it was sent (its own bank's)."""
    return QUESTIONS[qid]


def collect(chapters) -> dict:
    """{question id: question} of ``chapters``, pairs (module name "chNN", its questions), in their order; an id
    outside its chapter or declared twice is refused. Gives each question how a spawned worker finds it."""
    found = {}
    for name, questions in chapters:
        for q in questions:
            if not q.qid.startswith(f"{name[2:]}."):
                raise ValueError(f"{name}.py declares question {q.qid}: its ids are {name[2:]}.1, {name[2:]}.2, ...")
            if q.qid in found:
                raise ValueError(f"{name}.py declares question {q.qid} twice")
            q.found_by = (question, (q.qid,))  # sent to a spawned worker by its id
            found[q.qid] = q
    return found


def _chapters():
    """(name, questions) of every chNN module of this package, in the order of their numbers."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if re.fullmatch(r"ch\d\d", m.name))
    return [(name, importlib.import_module(f"{__name__}.{name}").QUESTIONS) for name in names]


QUESTIONS: dict = collect(_chapters())  # question id -> Question, in the order of the chapters and their declarations
