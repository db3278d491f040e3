"""Self-check quizzes: well-formed questions, self-contained HTML, one quiz per chapter, every section a
quiz names found in the chapters, (where a Chromium is installed) answers that respond to clicks and keys
with no network, and (with the strict book build) every section link landing on its heading in the book."""

import html
import re
from pathlib import Path

import nbformat
import pytest

from book_build.strict_build import HTML
from posenc_course import quizzes
from posenc_course.quizzes import Choice, Question, Quiz, check_yourself, render
from tests.support.book import strict_build
from tests.test_cross_references import PLAIN_REFERENCE, prose
from tools import quiz_sections
from tools.quiz_sections import chapter_sections

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
REFERENCE = re.compile(r"\{ref\}`([^`<>]*?)\s*<([\w-]+)>`")
# a section's link as quizzes.py writes it: the notebook and cell, the label, the book's page and anchor, the text
LINK = re.compile(
    r'<a class="pe-quiz-ref" href="([^"#]+)#cell-id=([\w-]+)" data-label="([\w-]+)" '
    r'data-book="([^"#]+)#([\w-]+)">([^<]*)</a>'
)


def quiz_texts():
    """(chapter, text) of every prompt, choice and reason of every quiz."""
    for key, questions in quizzes.QUIZZES.items():
        for q in questions:
            for text in (q.prompt, *(t for c in q.choices for t in (c.text, c.why))):
                yield key, " ".join(text.split())


HOW_TO = (
    "add 2-4 questions as quizzes.QUIZZES[{n!r}] and, before the chapter's Summary, a markdown cell "
    "'## Check yourself' followed by a code cell tagged remove-input with "
    "`from posenc_course.quizzes import check_yourself` / `check_yourself({n!r})` "
    "(as in chapters/01_order_problem)"
)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_chapter_has_two_to_four_questions(path):
    n = path.name[:2]
    assert n in quizzes.QUIZZES, f"chapter {n} has no quiz: " + HOW_TO.format(n=n)
    assert 2 <= len(quizzes.QUIZZES[n]) <= 4, n


def test_every_quiz_belongs_to_a_chapter():
    assert CHAPTERS
    assert set(quizzes.QUIZZES) <= {p.name[:2] for p in CHAPTERS}
    for questions in quizzes.QUIZZES.values():
        for q in questions:
            assert sum(c.correct for c in q.choices) == 1
            assert all(c.why.strip() for c in q.choices)


def test_right_answers_are_not_always_in_the_same_place():
    letters = [[c.correct for c in q.choices].index(True) for qs in quizzes.QUIZZES.values() for q in qs]
    assert len(set(letters)) >= 3


@pytest.mark.parametrize(
    "choices, message",
    [
        ((Choice("a", True, "x"),), "2 to"),
        ((Choice("a", True, "x"), Choice("b", True, "y")), "exactly one"),
        ((Choice("a", False, "x"), Choice("b", False, "y")), "exactly one"),
        ((Choice("a", True, "x"), Choice("a", False, "y")), "same text"),
        ((Choice("a", True, ""), Choice("b", False, "y")), "reason"),
        ((Choice(" ", True, "x"), Choice("b", False, "y")), "needs a text"),
    ],
)
def test_malformed_questions_are_refused(choices, message):
    with pytest.raises(ValueError, match=message):
        Question("Which?", choices)


def test_bad_keys_and_chapters_are_refused():
    q = quizzes.QUIZZES["01"][0]
    with pytest.raises(ValueError, match="key"):
        render('x" onload="alert(1)', [q])
    with pytest.raises(ValueError, match="at least one"):
        render("x", [])
    first, last = (re.escape(repr(key)) for key in (min(quizzes.QUIZZES), max(quizzes.QUIZZES)))
    said = rf"chapter must be one of {first}, .*{last} \(the chapters with a quiz\), not '99'"
    with pytest.raises(ValueError, match=said):
        check_yourself("99")


@pytest.mark.parametrize("key", sorted(quizzes.QUIZZES))
def test_html_is_self_contained_accessible_and_deterministic(key):
    text = check_yourself(key)._repr_html_()
    assert text == check_yourself(key)._repr_html_()
    n_choices = sum(len(q.choices) for q in quizzes.QUIZZES[key])
    choice = r'<button type="button" class="pe-quiz-choice" aria-pressed="false" disabled'
    assert len(re.findall(choice, text)) == n_choices
    assert text.count('role="status" aria-live="polite"') == len(quizzes.QUIZZES[key])
    assert text.count("<legend>") == len(quizzes.QUIZZES[key])
    # nothing to fetch: no URLs, no external resources, no imports; the only links are the sections', to pages
    # of the book beside this one
    for forbidden in ("http:", "https:", "//", " src=", "@import", "url(", "fetch(", "XMLHttpRequest"):
        assert forbidden not in text, forbidden
    links = LINK.findall(text)
    assert len(links) == text.count(" href=") == text.count("<a "), "every link is a section's link"
    for notebook, _cell, label, page, anchor, _shown in links:
        assert re.fullmatch(r"\d\d_\w+\.ipynb", notebook) and page == notebook.replace(".ipynb", ".html"), links
        assert anchor == label
    assert text.count("<script>") == 1 and text.count("<style>") == 1
    # ... both of them the package's files, inlined
    assert f"<style>{quizzes.STYLE.read_text().strip()}</style>" in text
    assert f"<script>{quizzes.SCRIPT.read_text().strip()}</script>" in text


def test_text_is_escaped_and_backticks_become_code():
    q = Question("Is `a < b` <b>bold</b>?", (Choice("yes & no", True, "because `x`"), Choice("no", False, "y")))
    text = render("t", [q])
    assert "<code>a &lt; b</code> &lt;b&gt;bold&lt;/b&gt;?" in text
    assert "yes &amp; no" in text and "because <code>x</code>" in text


def test_dollar_math_becomes_mathjax_spans_and_is_escaped():
    q = Question(
        "Is $a < b$ and `x$`?",
        (Choice("$\\omega_i = b^{-2i/d}$", True, "since $p - q$ & more"), Choice("no", False, "y")),
    )
    text = render("t", [q])
    assert "and <code>x$</code>?" in text
    assert '<span class="math notranslate nohighlight">\\(a &lt; b\\)</span>' in text
    assert '<span class="math notranslate nohighlight">\\(\\omega_i = b^{-2i/d}\\)</span>' in text
    assert 'since <span class="math notranslate nohighlight">\\(p - q\\)</span> &amp; more' in text
    assert "$" not in re.sub(r"<code>.*?</code>", "", text.split("<script>")[0])


def test_every_section_a_quiz_names_is_a_labelled_heading_of_the_chapters():
    """Each {ref}`text <label>` names a label of the chapters and shows that section's number (or, for a chapter,
    its number), and quizzes.SECTIONS, which tools/quiz_sections.py writes, has its notebook and cell as they are
    now."""
    sections = chapter_sections()
    wrong, named = [], set()
    for key, text in quiz_texts():
        for shown, label in REFERENCE.findall(text):
            named.add(label)
            if label not in sections:
                wrong.append(f"quiz {key}: {label!r} is no label of a chapter heading (in {text!r})")
            elif re.findall(r"\d+(?:\.\d+)*", shown) != [sections[label]["number"]]:
                found = sections[label]
                wrong.append(
                    f"quiz {key}: {shown!r} links {label!r}, which is section {found['number']} ({found['heading']!r})"
                )
    assert not wrong, "\n".join(wrong)
    assert set(quizzes.SECTIONS) == named  # the tool reads the same labels from the source as the quizzes show
    assert quiz_sections.main(["--check"]) == 0, "quizzes.SECTIONS is stale: run make quiz-sections"


def test_the_sections_tool_rewrites_a_stale_block_and_its_check_fails_on_it(tmp_path, capsys):
    module = tmp_path / quiz_sections.MODULE
    module.parent.mkdir(parents=True)
    current = (ROOT / quiz_sections.MODULE).read_text(encoding="utf-8")
    module.write_text(current.replace('"ch01-05"', '"moved"'), encoding="utf-8")
    (tmp_path / "_toc.yml").symlink_to(ROOT / "_toc.yml")
    (tmp_path / "chapters").symlink_to(ROOT / "chapters")
    assert quiz_sections.main(["--check"], root=tmp_path) == 1 and "make quiz-sections" in capsys.readouterr().out
    assert quiz_sections.main([], root=tmp_path) == 0
    assert module.read_text(encoding="utf-8") == current
    assert quiz_sections.main(["--check"], root=tmp_path) == 0


def test_chapter_6_cast_table_question_keys_the_only_true_choice():
    """Chapter 6's second question: posenc's float64 table cast to float16 at the end keeps rows 4096 and 4097 apart
    (d = 64, as in the chapter), though the last pair's entries do round to the same values, and pair 0 turns by
    one radian from one row to the next: the choice that says the rows collide is false, and its reason true."""
    import numpy as np

    import posenc

    question = quizzes.QUIZZES["06"][1]
    assert "4096 and 4097 collide" in question.prompt
    said_yes = [c for c in question.choices if c.text.startswith("Yes")]
    assert [c.correct for c in question.choices].count(True) == 1 and all(not c.correct for c in said_yes)
    rows = posenc.sinusoidal([4096, 4097], 64).astype(np.float16).astype(np.float64)
    assert not np.array_equal(rows[0], rows[1])
    assert np.array_equal(rows[0, -2:], rows[1, -2:])  # the slowest pair: equal entries
    turn = np.arctan2(rows[1, 0], rows[1, 1]) - np.arctan2(rows[0, 0], rows[0, 1])
    assert abs(np.angle(np.exp(1j * turn)) - 1.0) < 1e-2  # pair 0: about a radian per step
    assert np.abs(rows - posenc.sinusoidal([4096, 4097], 64)).max() < 5e-4  # "errors of a few 10^-4"


def test_quizzes_name_sections_by_link_not_by_plain_number():
    plain = [
        f"quiz {key}: {m.group(0)!r} in {text!r}"
        for key, text in quiz_texts()
        for m in [*PLAIN_REFERENCE.finditer(prose(text)), *re.finditer(r"§\s*\d", text)]
    ]
    assert not plain, "write these as {ref}`section 2.5 <sec-2-5>`:\n" + "\n".join(plain)
    assert sum(len(REFERENCE.findall(text)) for _, text in quiz_texts()) >= 60


def test_a_section_reference_becomes_a_link_to_the_book_and_to_the_notebook():
    q = Question(
        "See {ref}`section 2.5 <sec-2-5>` & `x`.",
        (Choice("a", True, "as {ref}`Section 1.2 <sec-1-2>` shows"), Choice("b", False, "y")),
    )
    text = render("t", [q])
    notebook, cell = quizzes.SECTIONS["sec-2-5"]
    assert (
        f'See <a class="pe-quiz-ref" href="{notebook}.ipynb#cell-id={cell}" data-label="sec-2-5" '
        f'data-book="{notebook}.html#sec-2-5">section 2.5</a> &amp; <code>x</code>.'
    ) in text
    assert text.count('data-label="sec-1-2"') == 2  # the reason, and the written-out answers
    assert "{ref}" not in text
    assert repr(Quiz("t", [q])).splitlines()[1] == "1. See section 2.5 & `x`."


@pytest.mark.parametrize(
    "text, message",
    [
        ("see {ref}`section 10.9 <sec-10-9>`", "not in quizzes.SECTIONS"),
        ("see {ref}`<sec-2-5>`", "no text to show"),
        ("see {numref}`Figure 2.1 <fig-02-1>`", "role other than"),
        ("see {ref}`sec-2-5`", "role other than"),
    ],
)
def test_a_section_the_quizzes_cannot_link_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        Question("Which?", (Choice("a", True, text), Choice("b", False, "y")))


def test_unbalanced_dollars_are_refused():
    with pytest.raises(ValueError, match="unbalanced"):
        Question("Costs $5?", (Choice("a", True, "x"), Choice("b", False, "y")))


def test_quiz_text_uses_real_notation():
    """No plain-text math left outside $...$: exponents like base^(-2i/d), Greek letters, roots."""
    for key, questions in quizzes.QUIZZES.items():
        for q in questions:
            for text in (q.prompt, *(t for c in q.choices for t in (c.text, c.why))):
                outside = re.sub(r"\$[^$]*\$", "", re.sub(r"`[^`]*`", "", text))
                assert not re.search(r"\^\(|[ωλπ√ᵀ⊙⌈→]|PE\(|T\([a-z]|\b[pqks] [−-] [pqks]\b", outside), (key, text)
    html_ = check_yourself("02")._repr_html_()
    assert html_.count('<span class="math notranslate nohighlight">') >= 5


def test_every_reason_is_rendered_in_advance_with_its_verdict():
    q = quizzes.QUIZZES["03"][0]
    text = render("t", [q])
    whys = re.findall(
        r'<p class="pe-quiz-why pe-quiz-(right|wrong)" id="[^"]+" hidden>'
        r'<span class="pe-quiz-verdict">([^<]+)</span>',
        text,
    )
    assert [w[0] for w in whys] == ["right" if c.correct else "wrong" for c in q.choices]
    assert {w[1] for w in whys} == {"\u2713 Right.", "\u2717 Not this one."}
    region = re.search(r'<div class="pe-quiz-feedback" role="status" aria-live="polite">(.*?)</div>', text).group(1)
    assert region.count('class="pe-quiz-why') == len(q.choices)


def test_plain_text_repr_lists_questions_without_answers():
    quiz = check_yourself("01")
    text = repr(quiz)
    assert text.startswith("Check yourself (3 questions")
    assert all(c.text.split()[0] in text for q in quiz.questions for c in q.choices)
    assert not any(c.why in text for q in quiz.questions for c in q.choices)
    assert isinstance(quiz, Quiz)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_ends_with_its_quiz_before_the_summary(path):
    cells = nbformat.read(path, as_version=4).cells
    heading = [n for n, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("## Check yourself")]
    summary = [n for n, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("## Summary")]
    assert len(heading) == 1 and len(summary) == 1 and heading[0] < summary[0], HOW_TO.format(n=path.name[:2])
    calls = [c for c in cells if c.cell_type == "code" and "check_yourself(" in c.source]
    assert len(calls) == 1
    assert f'check_yourself("{path.name[:2]}")' in calls[0].source
    assert "remove-input" in calls[0].metadata.get("tags", [])  # the book shows the quiz, not its code
    assert cells.index(calls[0]) == heading[0] + 1 or cells.index(calls[0]) == heading[0] + 2


# --------------------------------------------------------------------------
# In a browser (skipped where no Chromium is installed)
# --------------------------------------------------------------------------


def open_quiz(chromium, key="02", javascript=True):
    page = chromium.new_page(java_script_enabled=javascript)
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.set_content(f"<!doctype html><html><body><main>{check_yourself(key)._repr_html_()}</main></body></html>")
    return page, requests


def test_clicks_give_feedback_without_any_request(chromium):
    page, requests = open_quiz(chromium)
    question = page.locator(".pe-quiz-question").first
    buttons = question.locator("button.pe-quiz-choice")
    # with scripts the written-out answers are for paper only: hidden on screen, printed
    assert not page.locator(".pe-quiz-fallback").is_visible()
    correct = [buttons.nth(i).get_attribute("data-correct") == "true" for i in range(buttons.count())]
    wrong, right = correct.index(False), correct.index(True)
    buttons.nth(wrong).click()
    feedback = question.locator(".pe-quiz-feedback")
    assert feedback.inner_text().startswith("\u2717 Not this one.")
    assert buttons.nth(wrong).get_attribute("aria-pressed") == "true"
    buttons.nth(right).click()
    assert feedback.inner_text().startswith("\u2713 Right.")
    assert quizzes.QUIZZES["02"][0].choices[right].why.split()[0] in feedback.inner_text()
    assert buttons.nth(wrong).get_attribute("aria-pressed") == "false"
    assert requests == []
    page.close()


def test_a_page_that_runs_the_script_without_current_script_still_gets_working_quizzes(chromium):
    """Classic Notebook runs an output's scripts by eval, where document.currentScript is null."""
    page = chromium.new_page()
    page.set_content("<!doctype html><html><body><main></main></body></html>")
    page.evaluate(
        "html => { document.querySelector('main').innerHTML = html; }",  # scripts set by innerHTML do not run
        check_yourself("02")._repr_html_() + check_yourself("03")._repr_html_(),
    )
    assert page.locator("button.pe-quiz-choice[disabled]").count() == page.locator("button.pe-quiz-choice").count()
    # a stand-in MathJax counts the typesetting calls: one per click, or a button was wired twice
    page.evaluate(
        "() => { window.MathJax = {typesetPromise: () => { window.typeset = (window.typeset || 0) + 1; } }; }"
    )
    page.evaluate(f"() => {{ {quizzes.SCRIPT.read_text()} }}")
    page.evaluate(f"() => {{ {quizzes.SCRIPT.read_text()} }}")  # a second run must not wire anything twice
    assert page.locator("button.pe-quiz-choice[disabled]").count() == 0
    for key in ("ch02", "ch03"):
        question = page.locator(f"#pe-quiz-{key} .pe-quiz-question").first
        buttons = question.locator("button.pe-quiz-choice")
        right = [buttons.nth(i).get_attribute("data-correct") for i in range(buttons.count())].index("true")
        buttons.nth(right).click()
        assert question.locator(".pe-quiz-feedback").inner_text().startswith("\u2713 Right.")
        assert "pe-quiz-right" in buttons.nth(right).get_attribute("class").split()
    assert page.evaluate("window.typeset") == 2
    page.close()


def test_keyboard_alone_answers(chromium):
    page, _ = open_quiz(chromium)
    page.keyboard.press("Tab")  # first focusable element: the first choice
    assert page.evaluate("document.activeElement.className") == "pe-quiz-choice"
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # answer with the second choice
    first = page.locator(".pe-quiz-question").first
    assert first.locator("button.pe-quiz-choice").nth(1).get_attribute("aria-pressed") == "true"
    assert first.locator(".pe-quiz-feedback").inner_text().strip() != ""
    page.keyboard.press("Space")
    assert first.locator(".pe-quiz-feedback").inner_text().strip() != ""
    page.close()


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_question_text_sits_inside_its_box(chromium, width, theme):
    page = chromium.new_page(viewport={"width": width, "height": 900})
    page.set_content(
        f'<!doctype html><html data-theme="{theme}"><body style="margin:0 12px">'
        f"<main>{check_yourself('04')._repr_html_()}</main></body></html>"
    )
    for n in range(page.locator(".pe-quiz-question").count()):
        box = page.locator(".pe-quiz-question").nth(n).bounding_box()
        legend = page.locator(".pe-quiz-question legend").nth(n).bounding_box()
        assert legend["y"] >= box["y"] + 4, (n, legend, box)  # below the top border, not on it
        assert legend["x"] >= box["x"] + 4 and legend["x"] + legend["width"] <= box["x"] + box["width"] - 4
        assert box["x"] + box["width"] <= width
    page.close()


def test_without_scripts_the_answers_are_still_available(chromium):
    page, _ = open_quiz(chromium, javascript=False)
    assert page.locator(".pe-quiz-fallback").count() == 1
    assert page.locator("button.pe-quiz-choice[disabled]").count() == page.locator("button.pe-quiz-choice").count()
    page.close()


def test_printed_quizzes_carry_their_answers(chromium):
    """On paper nothing can be clicked: a printed quiz lists its answers (and the screen does not)."""
    page, _ = open_quiz(chromium)
    answers = page.locator(".pe-quiz-fallback")
    assert not answers.is_visible()
    page.emulate_media(media="print")
    assert answers.is_visible()
    right = [c for c in quizzes.QUIZZES["02"][0].choices if c.correct][0]
    assert right.why.split()[0] in answers.inner_text()
    page.close()


def test_a_chosen_answer_keeps_its_colour_under_the_pointer(chromium):
    """After a click the pointer rests on the button: its border stays the verdict's, not the hover colour."""
    page, _ = open_quiz(chromium)
    question = page.locator(".pe-quiz-question").first
    buttons = question.locator("button.pe-quiz-choice")
    colours = {}
    for n in range(buttons.count()):
        buttons.nth(n).click()  # the pointer stays on it
        verdict = "right" if buttons.nth(n).get_attribute("data-correct") == "true" else "wrong"
        colours.setdefault(verdict, set()).add(buttons.nth(n).evaluate("b => getComputedStyle(b).borderLeftColor"))
    page.mouse.move(0, 0)
    buttons.nth(0).hover()
    assert len(colours["right"]) == 1 and len(colours["wrong"]) == 1 and colours["right"] != colours["wrong"]
    page.close()


@pytest.mark.parametrize("where", ["jupyter", "book", "book, section on this page", "colab"])
def test_section_links_point_where_the_reader_can_follow_them(chromium, where):
    """Jupyter gets the chapter notebook at the section's cell as written (JupyterLab resolves it before any script
    runs); a page Sphinx built gets the book's page, or "#label" for a section on the same page (which the
    single-page book and its PDF need); Colab, where no chapter is beside the notebook, plain text."""
    html_attributes = ' data-content_root="../"' if where.startswith("book") else ""
    head = "<script>window.google = {colab: {kernel: {}}};</script>" if where == "colab" else ""  # as Colab has it
    # a section further down the page than the quiz: not parsed yet when the quiz's script runs
    after = '<section><span id="sec-2-5"></span><h2>2.5. A section</h2></section>' if "this page" in where else ""
    page = chromium.new_page()
    page.set_content(
        f"<!doctype html><html{html_attributes}><head>{head}</head><body>"
        f"<main>{check_yourself('02')._repr_html_()}</main>{after}</body></html>"
    )
    links = page.locator("a.pe-quiz-ref")
    written = LINK.findall(check_yourself("02")._repr_html_())
    assert links.count() == len(written) > 0
    for n, (notebook, cell, label, book_page, anchor, _shown) in enumerate(written):
        expected = {
            "jupyter": f"{notebook}#cell-id={cell}",
            "book": f"{book_page}#{anchor}",
            "book, section on this page": f"#{label}" if label == "sec-2-5" else f"{book_page}#{anchor}",
            "colab": None,
        }[where]
        assert links.nth(n).get_attribute("href") == expected, (label, where)
    assert links.first.inner_text().strip()  # a link or plain text, the section's name is shown
    if where == "colab":
        colours = page.evaluate(
            "() => { const a = document.querySelector('a.pe-quiz-ref'), p = a.parentElement;"
            " return [getComputedStyle(a).color, getComputedStyle(p).color]; }"
        )
        assert colours[0] == colours[1]  # plain text, not something that looks like a link
    page.close()


# --------------------------------------------------------------------------
# In the built book (the strict build, shared with tests/test_book.py)
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def build():
    return strict_build()


def landing(page: Path, target: str, anchor: str) -> str | None:
    """The section number of the heading that carries ``#anchor`` on the built page ``target`` (relative to
    ``page``), or None where there is no such page or numbered heading."""
    where = (page.parent / target).resolve()
    if not where.is_file() or HTML.resolve() not in where.parents:
        return None
    heading = re.search(
        rf'<span id="{re.escape(anchor)}"></span><h[1-6]><span class="section-number">([\d.]+)\. </span>',
        where.read_text(encoding="utf-8"),
    )
    return heading and heading.group(1)


def shown_number(shown: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)*", html.unescape(shown))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_section_link_of_a_built_quiz_lands_on_its_heading(build, path):
    """Each quiz link of a built chapter page names, for the book, an existing page of the book and the label's
    anchor there, which sits on the heading whose number the link shows."""
    page = HTML / "chapters" / f"{path.stem}.html"
    assert page.exists(), build["stdout"][-3000:] + build["stderr"][-3000:]
    links = LINK.findall(page.read_text(encoding="utf-8"))
    assert links == LINK.findall(check_yourself(path.name[:2])._repr_html_()), "the page shows another quiz"
    wrong = []
    for _notebook, _cell, label, target, anchor, shown in links:
        number = landing(page, target, anchor)
        if anchor != label or number is None:
            wrong.append(f"{shown!r}: {target}#{anchor} is no numbered heading of the book")
        elif shown_number(shown) != [number]:
            wrong.append(f"{shown!r}: {target}#{anchor} is section {number}")
    assert not wrong, "\n".join(wrong)


def test_the_built_book_links_its_own_pages(book, chromium):
    """In the browser, a built chapter's quiz links point at the book (the script moved them off the notebooks),
    each at a numbered heading of the book with the number the link shows."""
    from book_build.book_server import serve

    wrong = []
    with serve(book) as base:
        tab = chromium.new_page()
        for path in CHAPTERS:
            tab.goto(f"{base}chapters/{path.stem}.html", wait_until="load")
            links = tab.eval_on_selector_all(
                "a.pe-quiz-ref", "links => links.map(a => [a.getAttribute('href'), a.textContent])"
            )
            assert links, path.name
            for href, shown in links:
                target, _, anchor = href.partition("#")
                number = landing(book / "chapters" / f"{path.stem}.html", target or f"{path.stem}.html", anchor)
                if number is None or shown_number(shown) != [number]:
                    wrong.append(f"{path.name}: {shown!r} -> {href} ({number})")
        tab.close()
    assert not wrong, "\n".join(wrong)
