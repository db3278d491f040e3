"""The quizzes' section links in JupyterLab: a link opens the chapter notebook at the section's heading.

A quiz link's href is the chapter notebook and the id of the cell holding the section's heading
(``10_rope_in_practice.ipynb#cell-id=ch10-31``, ``posenc_course/quizzes.py``); JupyterLab resolves it when it
renders the output and, on a click, opens that notebook (or goes back to it) and scrolls to the cell. This test
runs chapter 10's quiz in JupyterLab, beside a copy of chapter 1, and follows one link within the notebook and one
to the other chapter. JupyterLab 4.6 opens the other chapter, and scrolls to the cell once that notebook is open:
on the first open it may apply the fragment before the notebook has cells, and stay at the top. The chapter
copies keep their markdown cells (every heading, with its cell id) and the quiz's cell only, so that nothing but
the quiz has to run.

It starts the JupyterLab of ``tests/test_browser_lab.py`` (127.0.0.1, a random port and token); requests to other
hosts are blocked and recorded. Run alone: ``.venv/bin/python -m pytest tests/test_browser_lab_quizzes.py -q``.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from book_build.book_visits import SCREENSHOTS
from book_build.page_guard import Guard
from book_build.strict_build import ROOT
from posenc_course import quizzes
from tests.support.browser import chromium_executable, new_context
from tests.test_browser_lab import jupyterlab, wait_for_idle_kernel

QUIZ = "10_rope_in_practice"
OTHER = "01_order_problem"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    chromium_executable()  # skip (or fail under CI) before starting anything
    tmp = tmp_path_factory.mktemp("lab")
    with jupyterlab(tmp) as (base, token, root, _pid, _progress):
        # the learner's windowing mode, JupyterLab's default, instead of the harness's "none" (every cell attached
        # at once), with which JupyterLab 4.6 opens the other notebook but does not land on the cell; the settings
        # are read when the page loads
        (tmp / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text("{}")
        chapters = root / "chapters"
        chapters.mkdir()
        for name in (QUIZ, OTHER):
            nb = nbformat.read(ROOT / "chapters" / f"{name}.ipynb", as_version=4)
            nb.cells = [c for c in nb.cells if c.cell_type == "markdown" or "check_yourself(" in c.source]
            nbformat.write(nb, chapters / f"{name}.ipynb")
        yield base, token


# a heading of the notebook shown now starts with the text and lies within the window
IN_VIEW = """text => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) :is(h1, h2, h3)')]
    .some(h => h.textContent.startsWith(text)
               && h.getBoundingClientRect().top >= 0 && h.getBoundingClientRect().bottom <= window.innerHeight)"""


def test_a_quiz_link_opens_the_chapter_at_its_section(lab, chromium):
    base, token = lab
    context = new_context(chromium, viewport={"width": 1400, "height": 900})
    guard = Guard(context)
    tab = guard.watch(context.new_page())
    tab.set_default_timeout(60000)
    try:
        tab.goto(f"{base}lab/tree/chapters/{QUIZ}.ipynb?token={token}", wait_until="domcontentloaded")
        tab.locator(".jp-NotebookPanel:visible .jp-Cell").first.wait_for()
        wait_for_idle_kernel(tab)
        tab.locator(".lm-MenuBar-itemLabel").get_by_text("Run", exact=True).click()
        tab.get_by_text("Run All Cells", exact=True).click()
        quiz = tab.locator(".jp-NotebookPanel:visible .pe-quiz")
        quiz.locator("button.pe-quiz-choice:not([disabled])").first.wait_for()  # its script ran
        # the reason of question 4's choice B names sections 1.2.1 (chapter 1) and 10.5 (this chapter)
        question = quiz.locator(".pe-quiz-question").nth(3)
        question.locator("button.pe-quiz-choice").nth(1).click()
        reason = question.locator(".pe-quiz-why:visible")
        here = reason.locator("a.pe-quiz-ref", has_text="10.5")
        there = reason.locator("a.pe-quiz-ref", has_text="1.2.1")
        assert re.search(rf"/{QUIZ}\.ipynb\b.*#cell-id={quizzes.SECTIONS['sec-10-5'][1]}$", here.get_attribute("href"))

        assert not tab.evaluate(IN_VIEW, "Layers without positions")
        here.click()
        tab.wait_for_function(IN_VIEW, arg="Layers without positions", timeout=60000)

        # the other chapter opens; JupyterLab 4.6 applies the fragment as soon as it opens the notebook, before its
        # cells exist, so on a first open it may stay at the top: once the notebook is open, the link lands
        reason.scroll_into_view_if_needed()
        there.click()
        tab.locator(".lm-TabBar-tab.lm-mod-current", has_text=f"{OTHER}.ipynb").wait_for()
        tab.locator(".jp-NotebookPanel:visible .jp-Cell").first.wait_for()
        tab.locator(".lm-TabBar-tab", has_text=f"{QUIZ}.ipynb").click()
        reason.scroll_into_view_if_needed()
        there.click()
        tab.locator(".lm-TabBar-tab.lm-mod-current", has_text=f"{OTHER}.ipynb").wait_for()
        tab.wait_for_function(IN_VIEW, arg="The exception: a causal mask", timeout=60000)
        SCREENSHOTS.joinpath("lab").mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SCREENSHOTS / "lab" / "quiz_link_to_chapter_1.png"))
    finally:
        context.close()
    problems = guard.problems()
    assert not any(problems.values()), "\n".join(f"{kind}: {items}" for kind, items in problems.items() if items)
