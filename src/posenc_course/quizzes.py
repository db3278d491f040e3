"""Self-check quizzes: multiple-choice questions that answer when clicked.

A chapter ends with::

    from posenc_course.quizzes import check_yourself
    check_yourself("01")

which displays that chapter's questions (from ``QUIZZES`` below) as one
self-contained block of HTML: the questions, one ``<button>`` per choice, a
feedback line, and the package files ``quizzes.css`` and ``quizzes.js`` inlined.
It works in the static book (no kernel), in JupyterLab, Notebook and Colab, and
it loads nothing from anywhere: no fonts, scripts or images from other hosts.

A quiz question is a question of the course's one choice engine
(``posenc_course.choices``, which the grader's choice questions use too), with
exactly one right choice. The engine judges every click when the HTML is made;
the script only shows the feedback a click picks.

* Keyboard: every choice is a real button (Tab to it, Enter or Space to
  choose); the feedback line is an ARIA live region, so screen readers
  announce it; the chosen button gets ``aria-pressed="true"``.
* Right and wrong are told by text (a check mark or a cross and a word), not
  by colour alone; the colours follow the book's light and dark themes.
* Without scripts (disabled, or an untrusted notebook) the buttons stay
  disabled and a "Show the answers" box lists each answer with its reason.
* The output is deterministic (ids come from the chapter key), so executing
  a chapter twice gives the same HTML.

* Math: ``$...$`` in a prompt, a choice or a reason is TeX, written out as
  ``<span class="math notranslate nohighlight">\\(...\\)</span>``, which the book
  typesets when it is built (``math_prerender.py``) and JupyterLab's MathJax
  when the output is shown. Every reason is in the HTML in advance, hidden,
  and only revealed on a click (where a MathJax 3 runs in the page, the script
  asks it to typeset the revealed element, in case it was skipped while hidden).

* Sections: a question names a section as the chapters' prose does, by its MyST label,
  ``{ref}`section 2.5 <sec-2-5>``` (the text shown, then the label). ``SECTIONS`` says where
  each label is: its chapter notebook and the id of the cell holding the label and the heading.
  The link's ``href`` is that notebook at that cell (``02_sinusoidal_formula.ipynb#cell-id=ch02-19``),
  which JupyterLab opens and scrolls to by itself (a notebook it has just opened for the link may
  stay at the top: JupyterLab 4.6 can apply the fragment before the notebook has cells). A learner
  in Jupyter has the chapters beside the notebook, offline, in the version they run, while the book
  may not be published yet or may be another version. JupyterLab resolves an output's links when it
  renders it, before the output's script can run, so the link Jupyter follows is the one written
  here. On a page Sphinx built, the script puts the book's page and the anchor Sphinx gives the
  label instead (``data-book``, ``02_sinusoidal_formula.html#sec-2-5``). A label and a cell id stay
  put when a heading is reworded; ``tools/quiz_sections.py`` writes ``SECTIONS`` from the chapters
  (``make quiz-sections``), and ``tests/test_quizzes.py`` checks that it is current, every section
  number against the chapters, and every link against the built book.

Nothing is graded or recorded: the graded practice lives in ``exercises/``.
Question text is plain text, HTML-escaped; `backticks` mark code, ``$...$`` math, ``{ref}`text <label>``` a
section.
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

from posenc_course.arguments import InstanceOf, Items, OneOf, Text, accepts, refuse
from posenc_course.choices import LETTERS, Choice, ChoiceQuestion

__all__ = ["Choice", "Question", "Quiz", "QUIZZES", "SECTIONS", "check_yourself", "render"]

TITLE = "Check yourself"
STYLE = Path(__file__).with_name("quizzes.css")
SCRIPT = Path(__file__).with_name("quizzes.js")

# Where each section a quiz names is: its MyST label -> (the chapter notebook's name, the id of the cell holding the
# label and its heading). The learner's package has no chapters to look in, so the quizzes carry this much of them.
# BEGIN SECTIONS, written by `make quiz-sections` (tools/quiz_sections.py) from the chapters: do not edit
SECTIONS: dict[str, tuple[str, str]] = {
    "ch-1": ("01_order_problem", "ch01-00"),
    "sec-1-2": ("01_order_problem", "ch01-05"),
    "sec-1-2-1": ("01_order_problem", "7310bdc9"),
    "sec-1-3": ("01_order_problem", "ch01-08"),
    "sec-1-4": ("01_order_problem", "ch01-16"),
    "sec-1-5": ("01_order_problem", "ch01-20"),
    "sec-2-1": ("02_sinusoidal_formula", "ch02-03"),
    "sec-2-5": ("02_sinusoidal_formula", "ch02-19"),
    "sec-2-8": ("02_sinusoidal_formula", "ch02-42"),
    "sec-2-9": ("02_sinusoidal_formula", "ch02-50"),
    "sec-2-10": ("02_sinusoidal_formula", "ch02-57"),
    "sec-3-1": ("03_frequency_analysis", "ch03-03"),
    "sec-3-5": ("03_frequency_analysis", "ch03-27"),
    "sec-3-6": ("03_frequency_analysis", "ch03-37"),
    "sec-3-8": ("03_frequency_analysis", "ch03-54"),
    "ch-4": ("04_linearity", "ch04-00"),
    "sec-4-3": ("04_linearity", "ch04-15"),
    "sec-4-5": ("04_linearity", "ch04-21"),
    "sec-4-6": ("04_linearity", "ch04-24"),
    "sec-4-7": ("04_linearity", "ch04-37"),
    "sec-4-9": ("04_linearity", "ch04-53"),
    "ch-5": ("05_learned_vs_fixed", "ch05-00"),
    "sec-5-1": ("05_learned_vs_fixed", "ch05-03"),
    "sec-5-2": ("05_learned_vs_fixed", "ch05-07"),
    "sec-5-5": ("05_learned_vs_fixed", "ch05-28"),
    "sec-5-7": ("05_learned_vs_fixed", "ch05-43"),
    "sec-5-8": ("05_learned_vs_fixed", "ch05-53"),
    "sec-6-3": ("06_precision", "ch06-18"),
    "sec-7-2": ("07_implementations", "ch07-40"),
    "sec-7-3": ("07_implementations", "ch07-49"),
    "sec-7-7": ("07_implementations", "ch07-74"),
    "sec-8-1": ("08_rope", "ch08-03"),
    "sec-8-3": ("08_rope", "ch08-17"),
    "sec-8-4": ("08_rope", "ch08-21"),
    "sec-8-6": ("08_rope", "ch08-29"),
    "sec-8-7": ("08_rope", "ch08-32"),
    "sec-9-1": ("09_relative_biases", "ch09-21"),
    "sec-9-2": ("09_relative_biases", "ch09-family"),
    "sec-9-3": ("09_relative_biases", "ch09-33"),
    "sec-9-4": ("09_relative_biases", "ch09-46"),
    "sec-10-1": ("10_rope_in_practice", "ch10-03"),
    "sec-10-2-2": ("10_rope_in_practice", "ch10-63"),
    "sec-10-3": ("10_rope_in_practice", "ch10-07"),
    "sec-10-3-3": ("10_rope_in_practice", "ch10-12"),
    "sec-10-3-5": ("10_rope_in_practice", "ch10-18"),
    "sec-10-3-7": ("10_rope_in_practice", "ch10-22"),
    "sec-10-5": ("10_rope_in_practice", "ch10-31"),
    "sec-11-1": ("11_positions_at_inference", "ch11-03"),
    "sec-11-2": ("11_positions_at_inference", "ch11-12"),
    "sec-11-3": ("11_positions_at_inference", "ch11-19"),
    "sec-11-4": ("11_positions_at_inference", "ch11-24"),
    "sec-12-1": ("12_rope_checkpoints", "ch12-03"),
    "sec-12-2": ("12_rope_checkpoints", "ch12-16"),
    "sec-12-3": ("12_rope_checkpoints", "ch12-28"),
    "sec-13-1": ("13_positions_while_serving", "ch13-03"),
    "sec-13-2": ("13_positions_while_serving", "ch13-16"),
    "sec-13-3": ("13_positions_while_serving", "ch13-23"),
}
# END SECTIONS

# {ref}`text <label>`, as in the chapters' prose; any other role is refused
_REFERENCE = re.compile(r"\{ref\}`([^`<>]*?)\s*<([\w-]+)>`")
_ROLE = re.compile(r"\{[\w:-]+\}`")


@accepts(
    prompt=Text(what="a non-empty string (the question)"), choices=Items(InstanceOf(Choice), what="a tuple of Choice")
)
class Question(ChoiceQuestion):
    """A quiz question: a choice question (``posenc_course.choices``) with exactly one right choice, since one
    click answers it, and a text for every choice, shown on its button."""

    several = False

    def __init__(self, prompt: str, choices):
        super().__init__(prompt, choices)
        if len({c.text for c in self.choices}) != len(self.choices):
            refuse("choices", message=f"choices must differ, but two choices have the same text: {self.prompt!r}.")
        if not all(c.text.strip() for c in self.choices):
            refuse("choices", message=f"every choice needs a text: {self.prompt!r}.")
        for name, text in (("prompt", self.prompt), *(("choices", t) for c in self.choices for t in (c.text, c.why))):
            if re.sub(r"`[^`]+`", "", text).count("$") % 2:
                refuse(name, message=f"{name} has an unbalanced $ (math is written $...$): {text!r}.")
            for shown, label in _REFERENCE.findall(text):
                if label not in SECTIONS:
                    refuse(name, message=f"{name} names {label!r}, which is not in quizzes.SECTIONS: {text!r}.")
                if not shown:
                    refuse(name, message=f"{name} links {label!r} with no text to show: {text!r}.")
            if _ROLE.search(_REFERENCE.sub("", text)):
                refuse(name, message=f"{name} has a role other than {{ref}}`text <label>`: {text!r}.")

    def __repr__(self) -> str:
        return f"Question({self.prompt!r}, {self.choices!r})"


def _q(prompt: str, *choices: tuple[str, bool, str], right: str | None = None) -> Question:
    """A question; ``right`` (a letter) moves the right choice to that place, the others keep their order."""
    order = list(choices)
    if right is not None:
        correct = next(c for c in order if c[1])
        order.remove(correct)
        order.insert(LETTERS.index(right), correct)
    return Question(prompt, tuple(Choice(*c) for c in order))


_MARKUP = re.compile(_REFERENCE.pattern + r"|`([^`]+)`|\$([^$]+)\$")


def _link(shown: str, label: str) -> str:
    """A section's link: the chapter notebook at the section's cell, and (for the script, in the book) the book's
    page and anchor."""
    notebook, cell = SECTIONS[label]
    return (
        f'<a class="pe-quiz-ref" href="{notebook}.ipynb#cell-id={html.escape(cell)}" data-label="{label}" '
        f'data-book="{notebook}.html#{label}">{html.escape(shown, quote=False)}</a>'
    )


def _inline(text: str) -> str:
    """Question text to HTML: `code` -> <code>, ``$tex$`` -> a MathJax span ``\\(tex\\)``, ``{ref}`text <label>```
    -> a link to that section, everything else (and the inside of all three) HTML-escaped."""
    text = " ".join(text.split())
    parts, end = [], 0
    for m in _MARKUP.finditer(text):
        parts.append(html.escape(text[end : m.start()], quote=False))
        shown, label, code, tex = m.groups()
        if label is not None:
            parts.append(_link(shown, label))
        elif code is not None:
            parts.append(f"<code>{html.escape(code, quote=False)}</code>")
        else:
            parts.append(f'<span class="math notranslate nohighlight">\\({html.escape(tex, quote=False)}\\)</span>')
        end = m.end()
    parts.append(html.escape(text[end:], quote=False))
    return "".join(parts)


def _plain(text: str) -> str:
    """Question text as plain text: a section reference shows its text."""
    return " ".join(_REFERENCE.sub(r"\1", text).split())


@functools.cache
def _inlined(path: Path, closing: str) -> str:
    """The package file ``path``, to be inlined in the HTML (a quiz loads nothing from anywhere)."""
    text = path.read_text(encoding="utf-8").strip()
    if closing in text.lower():
        raise RuntimeError(f"{path.name} contains {closing!r}, which would end its own inline element")
    return text


KEY = Text(r"[A-Za-z0-9_-]+", what="a quiz key of letters, digits, '-' or '_'")
QUESTIONS = Items(InstanceOf(Question), min_len=1, what="a list of at least one Question")


@accepts(key=KEY, questions=QUESTIONS)
def render(key: str, questions: list[Question] | tuple[Question, ...]) -> str:
    """The HTML block for ``questions``; ``key`` (letters, digits, -, _) makes the ids unique on a page.

    Every click is judged here, by the choice engine: each button carries its verdict and the id of its
    feedback, which is in the page already, hidden; ``quizzes.js`` shows it on a click.
    """
    base = f"pe-quiz-{key}"
    parts = [
        f'<div class="pe-quiz" id="{base}">',
        f"<style>{_inlined(STYLE, '</style')}</style>",
        '<p class="pe-quiz-intro">Choose an answer to see whether it is right, and why. '
        "You can try every choice; nothing is recorded.</p>",
    ]
    fallback = []
    for n, q in enumerate(questions, 1):
        qid = f"{base}-q{n}"
        parts.append(f'<fieldset class="pe-quiz-question" id="{qid}">')
        parts.append(f'<legend><span class="pe-quiz-number">Question {n}.</span> {_inline(q.prompt)}</legend>')
        parts.append('<div class="pe-quiz-choices">')
        reasons = []
        for letter, c in zip(q.letters, q.choices):
            wid = f"{qid}-{letter.lower()}-why"
            click = q.judgement({letter})
            parts.append(
                f'<button type="button" class="pe-quiz-choice" aria-pressed="false" disabled '
                f'data-correct="{"true" if click.correct else "false"}" data-why="{wid}">'
                f'<span class="pe-quiz-letter">{letter}.</span>{_inline(c.text)}</button>'
            )
            verdict = "\u2713 Right." if click.correct else "\u2717 Not this one."
            reasons.append(
                f'<p class="pe-quiz-why pe-quiz-{"right" if click.correct else "wrong"}" id="{wid}" hidden>'
                f'<span class="pe-quiz-verdict">{verdict}</span> {_inline(click.why)}</p>'
            )
            if click.correct:
                fallback.append(f"<li>Question {n}: <strong>{letter}</strong>. {_inline(click.why)}</li>")
        parts.append("</div>")
        parts.append(f'<div class="pe-quiz-feedback" role="status" aria-live="polite">{"".join(reasons)}</div>')
        parts.append("</fieldset>")
    parts.append(
        '<details class="pe-quiz-fallback"><summary>Answers</summary>'
        f'<ol style="list-style:none;padding-left:0">{"".join(fallback)}</ol></details>'
    )
    parts.append(f"<script>{_inlined(SCRIPT, '</script')}</script>")
    parts.append("</div>")
    return "\n".join(parts)


@accepts(key=KEY, questions=QUESTIONS, title=Text())
class Quiz:
    """A displayable quiz: HTML in Jupyter and the book, the bare questions as text elsewhere."""

    def __init__(self, key: str, questions, title: str = TITLE):
        self.key, self.questions, self.title = key, tuple(questions), title
        self._html = render(key, self.questions)

    def _repr_html_(self) -> str:
        return self._html

    def __repr__(self) -> str:
        lines = [
            f"{self.title} ({len(self.questions)} questions; open the notebook in Jupyter "
            "or read the book to answer them)"
        ]
        for n, q in enumerate(self.questions, 1):
            lines.append(f"{n}. {_plain(q.prompt)}")
            lines += [f"   {letter}. {_plain(c.text)}" for letter, c in zip(q.letters, q.choices)]
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# The questions. Each restates something its chapter checks in code; the
# reasons link the section that does ({ref}`section 2.5 <sec-2-5>`). No numbers that code computes.
# ---------------------------------------------------------------------------

QUIZZES: dict[str, tuple[Question, ...]] = {
    "01": (
        _q(
            "Two sentences hold the same words in a different order, no position information is added, "
            "and there is no causal mask. Why does self-attention return the same output vectors for "
            "both, only reordered?",
            (
                "The softmax blurs small differences between the two orders, so the outputs are only "
                "approximately the same.",
                False,
                "The match is exact, not approximate: {ref}`section 1.2 <sec-1-2>` finds differences at rounding "
                "level. The softmax only normalises each row of scores.",
            ),
            (
                "Each output row is computed from its own token's query and from every token's key and "
                "value, and none of these depends on where a token sits; reordering the input only "
                "reorders the output.",
                True,
                "Attention is permutation equivariant: $\\operatorname{Attn}(PX) = P\\,\\operatorname{Attn}(X)$, "
                "exactly, so a mean over positions is identical for both sentences (sections {ref}`1.2 <sec-1-2>` and "
                "{ref}`1.3 <sec-1-3>`).",
            ),
            (
                "The attention-weight matrix is the same matrix for both sentences.",
                False,
                "It is the same matrix with its rows and columns reordered (the figure of "
                "{ref}`section 1.3 <sec-1-3>`), "
                "which is in general a different matrix.",
            ),
            (
                "The word embeddings are random here; trained embeddings would keep the order.",
                False,
                "Equivariance follows from the form of the computation, whatever the embeddings are. "
                "Only a position signal, or a causal mask ({ref}`section 1.2.1 <sec-1-2-1>`), breaks it.",
            ),
        ),
        _q(
            "Why is the raw index $p$ a poor feature to add to token embeddings?",
            (
                "Integers cannot be added to floating-point vectors.",
                False,
                "They can; the trouble is their size and their range.",
            ),
            (
                "Neighbouring positions get the same value.",
                False,
                "Raw indices are all different. Squeezing neighbours together is the problem of $p/L$.",
            ),
            (
                "It grows with the position, so late tokens are swamped by it, and a longer input brings "
                "values the model never saw in training.",
                True,
                "{ref}`Section 1.4 <sec-1-4>` measures both: the position part outgrows the token by far in long "
                "sequences, and positions past the training length lie outside every value seen.",
            ),
        ),
        _q(
            "The repair $p/L$ keeps every feature in $[0, 1)$. What goes wrong with it?",
            (
                "One value means different positions at different lengths: 0.4 is position 2 when "
                "$L = 5$ and position 4 when $L = 10$.",
                True,
                "{ref}`Section 1.5 <sec-1-5>` checks it; neighbours also move closer together as $L$ grows, and $L$ is "
                "not even known while a decoder is still generating.",
            ),
            ("The values still grow without bound.", False, "$p/L$ is below 1 at every position of every sequence."),
            (
                "Two positions of the same sequence can get the same value.",
                False,
                "Within one sequence $p/L$ takes a different value at each position; the trouble is "
                "across sequences of different lengths.",
            ),
        ),
    ),
    "02": (
        _q(
            "In $\\sin(p\\,\\omega_i)$ and $\\cos(p\\,\\omega_i)$ with $\\omega_i = \\mathrm{base}^{-2i/d}$, "
            "what does the index $i$ count?",
            (
                "Channels: $i$ runs over $0, \\dots, d - 1$.",
                False,
                "Then the exponent $2i/d$ would run up to almost 2, and half of the frequencies would fall "
                "below $1/\\mathrm{base}$: the doubled-exponent bug of {ref}`section 2.5 <sec-2-5>`.",
            ),
            (
                "Sine/cosine pairs: pair $i$ fills channels $2i$ and $2i + 1$.",
                True,
                "There are $\\lceil d/2 \\rceil$ pairs, and the exponent $2i/d$ runs from 0 towards, but never "
                "reaching, 1 ({ref}`section 2.1 <sec-2-1>`).",
            ),
            ("Positions in the sequence.", False, "The position is $p$; $i$ picks the frequency."),
        ),
        _q(
            "A loop steps through the channels, `for c in range(0, d, 2)`, and uses the exponent "
            "`2 * c / d`. What happens?",
            (
                "It raises an IndexError for the last channel.",
                False,
                "Nothing crashes: the table has the right shape and values in $[-1, 1]$.",
            ),
            (
                "Nothing: only the name of the loop variable changed.",
                False,
                "`c` is already the channel number $2i$, so the exponent becomes $4i/d$.",
            ),
            (
                "It returns a plausible-looking table with the wrong frequencies: pair $i$ gets the "
                "frequency of pair $2i$.",
                True,
                "{ref}`Section 2.5 <sec-2-5>` catches it two ways: against a reference table, and by the frequency of "
                "pair $d/4$, which must be $\\mathrm{base}^{-1/2}$.",
            ),
            (
                "Only an odd `d_model` is affected.",
                False,
                "Every width is affected; odd widths have a different problem ({ref}`section 2.9 <sec-2-9>`).",
            ),
        ),
        _q(
            "How does the Transformer combine the position encoding with the token embeddings?",
            (
                "It concatenates them, doubling the width of the input.",
                False,
                "Concatenation would double the width every later layer works with; the original "
                "Transformer does not do it.",
            ),
            (
                "It multiplies them entry by entry.",
                False,
                "A product would wipe out token channels wherever the encoding is 0: at position 0, "
                "every sine channel.",
            ),
            (
                "It adds them entry by entry; both have width $d$.",
                True,
                "Addition keeps the width and costs no parameters. How much of the sum is position depends "
                "on the embeddings' scale, including the $\\sqrt{d}$ factor ({ref}`section 2.8 <sec-2-8>`).",
            ),
        ),
        _q(
            "The interleaved layout (sin, cos, sin, cos, …) and the concatenated one (all sines, then "
            "all cosines): which statement is true?",
            (
                "They use different frequencies, so they are different encodings.",
                False,
                "The numbers are the same; only the channel order differs, by a fixed permutation.",
            ),
            (
                "They hold the same numbers in another channel order, and weights trained with one layout "
                "give wrong results with the other, without any error.",
                True,
                "Norms and dot products are the same, but a trained model's weights are tied to the "
                "channel order: the read-out of {ref}`section 2.10 <sec-2-10>` fails until it is permuted too.",
            ),
            (
                "They are interchangeable even for pretrained models, since dot products are the same.",
                False,
                "Dot products between positions are preserved, but each weight multiplies a particular "
                "channel ({ref}`section 2.10 <sec-2-10>`).",
            ),
            right="A",
        ),
    ),
    "03": (
        _q(
            "For `d_model = 512`, which pair has the lowest frequency?",
            (
                "Pair 256, with frequency exactly $1/\\mathrm{base}$ and wavelength $2\\pi\\,\\mathrm{base}$.",
                False,
                "There is no pair 256: the 256 pairs are $i = 0, \\dots, 255$, "
                "and $2\\pi\\,\\mathrm{base}$ is a limit that is never reached.",
            ),
            ("Pair 0.", False, "Pair 0 has frequency 1 for any base, the highest of all."),
            (
                "Pair 255, the last one, with a wavelength a little below $2\\pi\\,\\mathrm{base}$.",
                True,
                "Its exponent is $510/512$, just under 1, so its frequency is just above $1/\\mathrm{base}$ "
                "({ref}`section 3.1 <sec-3-1>`).",
            ),
        ),
        _q(
            "The base is raised, with `d_model` fixed. What happens?",
            (
                "More pairs stay at high frequency, so neighbours are told apart better.",
                False,
                "That is backwards, although it circulates in tutorials: {ref}`section 3.5 <sec-3-5>` counts fewer "
                "fast pairs for a larger base.",
            ),
            (
                "Frequencies fall faster with $i$: fewer fast pairs and a longer longest wavelength, so "
                "longer contexts are covered at a coarser resolution.",
                True,
                "The ratio between neighbouring frequencies is $\\mathrm{base}^{-2/d}$, so a larger base makes it "
                "smaller. This is why long-context models raise the base ({ref}`section 3.5 <sec-3-5>`).",
            ),
            (
                "Positions are just rescaled, as if $p$ were divided by the base.",
                False,
                "Pair 0 keeps frequency 1 for every base, while the other pairs change by different "
                "factors; that is not a rescaling of positions.",
            ),
        ),
        _q(
            "For an even `d_model`, what does the dot product $\\mathrm{PE}(p) \\cdot \\mathrm{PE}(s)$ depend on?",
            (
                "On $p$ and $s$ separately.",
                False,
                "Each pair contributes $\\sin a \\sin b + \\cos a \\cos b = \\cos(a - b)$, which involves only the "
                "difference.",
            ),
            (
                "Only on the offset $p - s$: it is $\\sum_i \\cos(\\omega_i (p - s))$.",
                True,
                "So the matrix of all dot products is constant along its diagonals ({ref}`section 3.6 <sec-3-6>`).",
            ),
            (
                "Only on $p + s$.",
                False,
                "The sum $p + s$ would appear if sine and cosine were weighted differently ({ref}`chapter 5 <ch-5>`); "
                "with equal weights it cancels.",
            ),
            right="A",
        ),
        _q(
            "What is special about position 0?",
            (
                "It has the largest norm of all positions.",
                False,
                "Every position has the norm $\\sqrt{d/2}$, since each pair is a unit vector.",
            ),
            (
                "Every sine channel is exactly 0 and every cosine 1, but its norm and its distances to "
                "the next positions are the same as for any other position.",
                True,
                "Distances depend only on the offset, so going from $0$ to $k$ is like going from $p$ to $p + k$ "
                "({ref}`section 3.8 <sec-3-8>`).",
            ),
            (
                "It is far from all other positions, so the first token stands out.",
                False,
                "Its distance to position $k$ equals the distance between any $p$ and $p + k$.",
            ),
            right="C",
        ),
    ),
    "04": (
        _q(
            "A model must read two things off its position vectors: where each token stands, and how far "
            "apart two tokens are. What in the sinusoidal table gives it both?",
            (
                "Values that grow with the position, and the same vector for neighbouring positions.",
                False,
                "Growing values are the problem of the raw index ({ref}`chapter 1 <ch-1>`), and identical neighbours "
                "could not be told apart.",
            ),
            (
                "A distinct, bounded vector for every position, and a shift by $k$ that acts as one fixed "
                "rotation $T(k)$, the same at every position.",
                True,
                "The first says where; the second makes offsets a linear, position-independent operation, "
                "so dot products depend only on $k$ (sections {ref}`4.3 <sec-4-3>` and {ref}`4.7 <sec-4-7>`).",
            ),
            (
                "Vectors learned in training, each orthogonal to all the others.",
                False,
                "The encoding has no parameters, and its vectors are not orthogonal: the dot product of "
                "neighbours is large ({ref}`section 4.7 <sec-4-7>`).",
            ),
            right="A",
        ),
        _q(
            "Why does every sine channel need its cosine partner?",
            ("To give the model more parameters to learn.", False, "The encoding has no parameters at all."),
            ("Because a sine alone cannot take negative values.", False, "A sine takes every value in $[-1, 1]$."),
            (
                "Because shifting an angle needs both its sine and its cosine (angle addition); with sines "
                "only, $\\mathrm{PE}(0)$ is the zero vector and no matrix maps it to $\\mathrm{PE}(k)$.",
                True,
                "{ref}`Section 4.6 <sec-4-6>` proves it and measures a large residual for the best sine-only fit; an "
                "odd `d_model` has one such lone sine, and `posenc.rotation` refuses it.",
            ),
        ),
        _q(
            "How does $\\mathrm{PE}(p) \\cdot \\mathrm{PE}(p + k)$ behave as the offset $k$ grows from 0?",
            (
                "It decreases steadily: a larger offset always means a smaller dot product.",
                False,
                "The curve of {ref}`section 4.7 <sec-4-7>` has bumps: some offsets are slightly more similar than "
                "smaller ones.",
            ),
            (
                "It depends on $k$ only, is largest at $k = 0$ and is symmetric, $f(k) = f(-k)$, but it is not "
                "monotone.",
                True,
                "Each pair adds $\\cos(k\\,\\omega_i)$; the fast pairs wrap around and make ripples "
                "({ref}`section 4.7 <sec-4-7>`). "
                "The symmetry means the dot product cannot tell ahead from behind, while $T(k)$ can.",
            ),
            (
                "It is different for $k$ and $-k$, so it tells ahead from behind.",
                False,
                "$\\cos$ is even, so $f(-k) = f(k)$; only $T(k)$ itself differs from $T(-k) = T(k)^\\top$.",
            ),
        ),
        _q(
            "How do rotary embeddings (RoPE) use this chapter's rotation?",
            (
                "They add $T(p)$ to each token embedding.",
                False,
                "$T(p)$ is a matrix that acts on vectors; RoPE adds nothing to the input.",
            ),
            (
                "They rotate the query at position $p$ by $T(p)^\\top$ and the key at position $s$ by $T(s)^\\top$, so "
                "the score depends on the positions only through $k = p - s$.",
                True,
                "$T(p)\\,T(s)^\\top = T(p - s)$ by the algebra of shifts (sections {ref}`4.5 <sec-4-5>` and "
                "{ref}`4.9 <sec-4-9>`).",
            ),
            (
                "They multiply each attention score by $\\cos(p - s)$.",
                False,
                "The rotation acts on every pair of query and key channels, each at its own frequency, "
                "not on the score as a whole.",
            ),
            right="C",
        ),
    ),
    "05": (
        _q(
            "Set a learned position table against the sinusoidal formula: what does each give, and what does "
            "each cost?",
            (
                "A learned table takes a large share of the model's weights.",
                False,
                "For a BERT-sized model it is below one percent of the weights ({ref}`section 5.1 <sec-5-1>`); its "
                "price is the length limit.",
            ),
            (
                "A learned table fits whatever the task needs but has no row past `max_len`; the formula "
                "has a vector for every position and no parameters, yet a trained model still handles "
                "positions past its training length poorly.",
                True,
                "{ref}`Section 5.2 <sec-5-2>` shows the hard stop, {ref}`section 5.5 <sec-5-5>` measures the "
                "sinusoidal models beyond the "
                "training length: far below their training accuracy.",
            ),
            (
                "The sinusoidal encoding extends to any length with no loss of accuracy, so there is no trade-off.",
                False,
                "The formula extends; the trained model mostly does not ({ref}`section 5.5 <sec-5-5>`).",
            ),
            right="C",
        ),
        _q(
            "In the offset-copy experiment at twice the training length $L$, where did the model with a "
            "learned table fail?",
            (
                "Equally at every position.",
                False,
                "The positions before $L$ kept their accuracy (figure of {ref}`section 5.5 <sec-5-5>`).",
            ),
            (
                "At the positions from $L$ on, whose rows never received a gradient; the positions before $L$ "
                "stayed accurate.",
                True,
                "Untrained rows keep their small random initial values, so those positions look almost "
                "position-less ({ref}`section 5.5 <sec-5-5>`).",
            ),
            (
                "Only before $L$, because the new positions disturbed the old ones.",
                False,
                "That disturbance was seen in the sinusoidal models; the learned model's early positions "
                "hardly attend to the new keys.",
            ),
        ),
        _q(
            "Which way of encoding positions do most current open language models use?",
            (
                "Learned position tables.",
                False,
                "That was the choice of BERT and GPT-2; the advice to prefer them is dated.",
            ),
            (
                "The original sinusoidal encoding, added to the input.",
                False,
                "It is the 2017 Transformer's choice; current models act inside attention instead.",
            ),
            (
                "Rotary embeddings (RoPE), and some use ALiBi: both act inside attention.",
                True,
                "LLaMA and most open models since use RoPE; BLOOM and MPT use ALiBi ({ref}`section 5.8 <sec-5-8>`).",
            ),
        ),
        _q(
            "The input is $x + w \\odot \\mathrm{PE}$ with one learned weight per channel, all nonzero, and the sine "
            "and cosine of a pair get different weights. Which of {ref}`chapter 4 <ch-4>`'s properties survive?",
            (
                "Both: the waves are still sines and cosines, so nothing changes.",
                False,
                "Unequal weights within a pair add a $\\cos(a + b)$ term to each pair's share of the dot product, an "
                "absolute-position component ({ref}`section 5.7 <sec-5-7>`).",
            ),
            (
                "Neither: once the weights are learned, no fixed map relates $p$ and $p + k$.",
                False,
                "With $D = \\operatorname{diag}(w)$ the map $D\\,T(k)\\,D^{-1}$ shifts every scaled encoding by $k$ "
                "({ref}`section 5.7 <sec-5-7>` checks it for many $p$ and $k$).",
            ),
            (
                "A shift by $k$ is still one fixed linear map, $D\\,T(k)\\,D^{-1}$ with $D = \\operatorname{diag}(w)$, "
                "but not a rotation, and dot products no longer depend on $p - s$ alone.",
                True,
                "The map exists for any $w$ without zeros; dot products depend only on $p - s$, and the map is a "
                "rotation, only when the two weights of each pair are equal in size, $|w_s| = |w_c|$ "
                "({ref}`section 5.7 <sec-5-7>`).",
            ),
            (
                "Dot products still depend only on $p - s$, but no linear map shifts the positions any more.",
                False,
                "It is the other way round: the dot-product property needs weights of equal size within each pair, the "
                "linear shift map does not.",
            ),
            right="C",
        ),
    ),
    "06": (
        _q(
            "Positions 4096 and 4097 get the same encoding vector when the angles are computed in float16. Why?",
            (
                "float16 cannot hold numbers above 4096.",
                False,
                "Its largest finite value is 65,504 (from 65,520 on, values round to infinity); what it lacks "
                "above 2048 is spacing finer than 2.",
            ),
            (
                "float16 holds every integer only up to 2048; above that its spacing is 2, then 4, so "
                "4097 is rounded to 4096 before any angle is formed.",
                True,
                "Same position in, same angles out: {ref}`section 6.3 <sec-6-3>` counts such collisions.",
            ),
            (
                "The sine of a float16 angle is only accurate to three digits.",
                False,
                "Rounding the final values keeps positions apart; the collision happens earlier, in the "
                "position itself.",
            ),
            right="B",
        ),
        _q(
            "A float64 table from posenc is cast to float16 at the end. Do positions 4096 and 4097 collide now?",
            (
                "Yes: any float16 table collides above 2048.",
                False,
                "The collisions come from rounding the position and the angle, not the final values.",
            ),
            (
                "No: the angles were exact, only the final values are rounded (errors of a few $10^{-4}$), and "
                "the two rows still differ.",
                True,
                "{ref}`Section 6.3 <sec-6-3>` counts 0 collisions for the accurate table cast to float16.",
            ),
            (
                "Yes: the slowest pairs change by less than float16's spacing from 4096 to 4097, so the two rows "
                "round to the same values.",
                False,
                "Those entries do round to equal values (the last pair's are the same in both rows), but two rows "
                "collide only if every entry does, and the fast pairs move by about a radian per step.",
            ),
            right="B",
        ),
    ),
    "07": (
        _q(
            "Row 0 of a table of unknown origin reads sixteen 0s, then sixteen 1s ($d = 32$). What does that "
            "row tell you?",
            (
                "The sines come first; whether it is posenc's concatenated layout or the $h - 1$ schedule of "
                "tensor2tensor and fairseq, only the slowest frequency, read off row 1, can say.",
                True,
                "At $p = 0$ every sine is 0 and every cosine 1, so row 0 shows where the cosines are; both "
                "sines-first variants share it ({ref}`section 7.2 <sec-7-2>`).",
            ),
            (
                "It is the paper's interleaved table.",
                False,
                "The interleaved row 0 alternates: 0, 1, 0, 1, ...",
            ),
            (
                "It is fairseq's table: fairseq is the one that puts the sines first.",
                False,
                "posenc's concatenated layout puts the sines first too; the two differ in their frequencies, "
                "not in row 0 ({ref}`section 7.2 <sec-7-2>`).",
            ),
            right="A",
        ),
        _q(
            "A table built with the doubled exponent (`2 * i / d` with `i` the channel index) is still made "
            "of sine and cosine pairs. Which check catches it?",
            (
                "Its Gram matrix $\\mathrm{PE}\\,\\mathrm{PE}^\\top$, which is no longer constant along diagonals.",
                False,
                "It still is: every pair is a sine and a cosine of one frequency, so dot products depend "
                "only on $p - s$ (the scorecard of {ref}`section 7.3 <sec-7-3>`).",
            ),
            (
                "Comparing it with posenc's table, or applying posenc's $T(k)$: the frequencies are wrong.",
                True,
                "Pair $i$ runs at the frequency of pair $2i$; only a check that knows the right frequencies "
                "sees it ({ref}`section 7.3 <sec-7-3>`).",
            ),
            (
                "A search for duplicate rows.",
                False,
                "Its positions stay distinct; the encoding is valid, just not the one the paper defines.",
            ),
            right="B",
        ),
        _q(
            "A module adds `pe[:x.size(0)]`, with a table `pe` of shape `(max_len, d)`, to a batch-first input. "
            "A test feeds 10 sequences of length 10 and compares the output with posenc. Does it fail?",
            (
                "Yes: any comparison with posenc catches a wrong slice.",
                False,
                "Not this one: with batch equal to seq the slice happens to select positions "
                "$0 \\dots 9$ ({ref}`section 7.7 <sec-7-7>`).",
            ),
            (
                "No: a batch exactly as long as the sequence makes the wrong slice right by coincidence; a "
                "test should use a batch size different from the sequence length.",
                True,
                "With batch 1 every position would get $\\mathrm{PE}(0)$, and batch 4 crashes "
                "({ref}`section 7.7 <sec-7-7>`).",
            ),
            (
                "No: the output has the right shape, and a shape test is all it needs.",
                False,
                "The shape is right for every batch size that does not crash; the values are what is wrong.",
            ),
            right="B",
        ),
    ),
    "08": (
        _q(
            "RoPE rotates the query at position $p$ and the key at position $s$ by angles that grow with "
            "their positions. On what does their attention score depend?",
            (
                "On the two contents and on both positions $p$ and $s$.",
                False,
                "That is the added encoding: its cross terms mix content with absolute positions "
                "({ref}`section 8.3 <sec-8-3>`).",
            ),
            (
                "On the two contents and on the offset $k = p - s$ only.",
                True,
                "$T(p)\\,T(s)^\\top = T(p - s)$: the score is $q^\\top T(k)\\, \\kappa$ (key vector $\\kappa$), "
                "checked for $200 \\times 200$ position pairs in {ref}`section 8.1 <sec-8-1>`.",
            ),
            (
                "On the offset $p - s$ only, not on the contents.",
                False,
                "Rotations keep norms and only turn $q$ and $\\kappa$; the contents still set the score "
                "({ref}`section 8.1 <sec-8-1>`).",
            ),
            right="B",
        ),
        _q(
            "Ask that the score of a query at $p$ and a key at $s$ depend only on their contents and on "
            "$p - s$, and read one pair as a complex number. What does that force the encoding $f(x, p)$ to do?",
            (
                "Keep the length of $x$ and turn it by an angle $p\\,\\omega$ that grows by the same step at "
                "every position.",
                True,
                "Setting $s = p$ shows that the lengths cannot change and that every vector turns by one angle "
                "$\\phi(p)$; setting $s = p - 1$ shows that $\\phi$ grows by a fixed step: "
                "$f(x, p) = x\\,e^{ip\\omega}$ ({ref}`section 8.4 <sec-8-4>`).",
            ),
            (
                "Add a vector that depends on $p$ alone, as the sinusoidal encoding does.",
                False,
                "An added vector leaves cross terms of content with position, each tied to one absolute "
                "position ({ref}`section 8.4 <sec-8-4>`).",
            ),
            (
                "Turn it by any angle that grows with $p$, such as $p^2\\,\\omega$.",
                False,
                "Two positions with the same offset must get the same angle difference; "
                "$p^2 - s^2$ is not a function of $p - s$ ({ref}`section 8.4 <sec-8-4>`).",
            ),
            right="C",
        ),
        _q(
            'RoFormer\'s "long-term decay" is a curve that falls with the offset $k$. What does it bound, and '
            "what did the measurements of random queries and keys show?",
            (
                "It is the mean score itself, which falls for every query and key.",
                False,
                "The curve is the offset factor of an upper bound, not a score; the mean size of the score of "
                "random $q$ and $\\kappa$ stays the same at every offset ({ref}`section 8.6 <sec-8-6>`).",
            ),
            (
                "An upper bound on the size of the score; the mean size of the score of random $q$ and "
                "$\\kappa$ does not fall, and stays far below the bound.",
                True,
                "The mean size stays near $\\sqrt{2d/\\pi}$ at every offset, hundreds to thousands of times "
                "below the bound; only aligned queries and keys, such as $q = \\kappa$, see their score fall on "
                "average ({ref}`section 8.6 <sec-8-6>`).",
            ),
            (
                "The attention weights after the softmax, which RoPE pushes to zero beyond the longest wavelength.",
                False,
                "The bound concerns the score before the softmax, and nothing in RoPE zeroes distant weights; "
                "the trained model of {ref}`section 8.7 <sec-8-7>` scores far offsets as high as near ones.",
            ),
            right="B",
        ),
    ),
    "09": (
        _q(
            "An ALiBi head has all its content scores equal. How does its attention spread over the "
            "keys before the query?",
            (
                "Evenly over all earlier keys.",
                False,
                "The bias $-m\\,(p - s)$ is still there: the softmax turns it into weights that fall with the "
                "distance ({ref}`section 9.1 <sec-9-1>`).",
            ),
            (
                "Only on the key a fixed number of steps back.",
                False,
                "The bias ranks every nearer key above every farther one; it cannot single out one "
                "distance, which is why the one-layer ALiBi model of {ref}`section 9.4 <sec-9-4>` could not copy the "
                "token two back.",
            ),
            (
                "It decays geometrically with the distance: steep heads look at the last few tokens, "
                "heads with small slopes spread their attention far back.",
                True,
                "The weights are proportional to $e^{-m(p - s)}$; the half-attention distance roughly "
                "doubles from one head to the next ({ref}`section 9.1 <sec-9-1>`).",
            ),
            right="C",
        ),
        _q(
            "A T5 decoder uses 32 buckets up to `max_distance` 128. What does its bias give two keys 200 and "
            "2,000 tokens behind the query?",
            (
                "The farther key a lower bias, as ALiBi would.",
                False,
                "T5's bias is a table lookup, not a slope: the buckets end, and every distance from 113 on "
                "shares the last one ({ref}`section 9.2 <sec-9-2>`).",
            ),
            (
                "The same bias: both distances fall in the last bucket.",
                True,
                "From the last bucket's start on, the bias is flat; only the content scores can tell the two "
                "keys apart ({ref}`section 9.2 <sec-9-2>`).",
            ),
            (
                "Nothing: keys beyond `max_distance` are masked out.",
                False,
                "Nothing is masked; `max_distance` only ends the logarithmic buckets, and every longer distance "
                "shares the last one ({ref}`section 9.2 <sec-9-2>`).",
            ),
            right="B",
        ),
        _q(
            "In the experiment, the T5 and Shaw models kept their accuracy at four times the training length, "
            "the RoPE models did not. Why?",
            (
                "Every offset beyond the training window fell in a bucket or clipped vector that training had "
                "already reached, so the new positions brought more keys but no untrained terms.",
                True,
                "With T5's own 32 buckets up to 128, the far offsets fell in untrained buckets instead, and the "
                "accuracy beyond $L$ dropped ({ref}`section 9.4 <sec-9-4>`).",
            ),
            (
                "Their scores depend on the offset only, and that is enough to extrapolate.",
                False,
                "RoPE's scores depend on the offset only too, and its models failed at the offsets they never "
                "saw in training ({ref}`section 9.4 <sec-9-4>`).",
            ),
            (
                "They have more position parameters than the other schemes.",
                False,
                "The learned table has far more (2,048 here) and got almost nothing right beyond $L$ "
                "({ref}`section 9.3 <sec-9-3>`).",
            ),
            right="A",
        ),
    ),
    "10": (
        _q(
            "A RoPE head was trained at $L = 8192$. Which of its pairs meet rotation angles at $4L$ that they "
            "never took in training?",
            (
                "Every pair: all angles grow with the position.",
                False,
                "A pair with $\\lambda_i \\le L$ already went through its whole circle in training; at $4L$ it "
                "only repeats angles it has seen ({ref}`section 10.1 <sec-10-1>`).",
            ),
            (
                "Only the pairs whose wavelength is longer than $L$, which never completed a turn.",
                True,
                "They saw only an arc of their circle; that is why YaRN and Llama 3 interpolate exactly those "
                "pairs (sections {ref}`10.1 <sec-10-1>`, {ref}`10.3 <sec-10-3>`).",
            ),
            (
                "Only the fastest pairs, which turn most often.",
                False,
                "The fastest pairs turn many times in training and know their whole circle "
                "({ref}`section 10.1 <sec-10-1>`).",
            ),
            right="B",
        ),
        _q(
            "Position interpolation was applied, without fine-tuning, to RoPE models trained to copy "
            "the token $k$ places back. What happened?",
            (
                "They copied the token $s\\,k$ places back: the angle they learned for $k$ now belongs to the "
                "offset $s\\,k$.",
                True,
                "Scored against that target they were right far more often than the no-order baseline "
                "({ref}`section 10.2.2 <sec-10-2-2>`).",
            ),
            (
                "They improved at the new positions and kept the old ones intact.",
                False,
                "That was the raised base; interpolation broke the models ({ref}`section 10.2.2 <sec-10-2-2>`).",
            ),
            (
                "Nothing changed before the training length; only the new positions suffered.",
                False,
                "Interpolation rescales every position, so the old positions broke too "
                "({ref}`section 10.2.2 <sec-10-2-2>`).",
            ),
            right="A",
        ),
        _q(
            "How do YaRN and Llama 3.1 treat the fastest pairs of a head they stretch by $s$?",
            (
                "They divide their frequency by $s$, like position interpolation.",
                False,
                "That is the rule for the slow pairs only; dividing the fast ones would squeeze neighbouring "
                "tokens together ({ref}`section 10.3.3 <sec-10-3-3>`).",
            ),
            (
                "They raise their frequency to make up for the slow pairs.",
                False,
                "No rule of this chapter makes any pair faster ({ref}`section 10.3.7 <sec-10-3-7>`).",
            ),
            (
                "They keep them as trained.",
                True,
                "Pairs with more than $\\beta_\\text{fast}$ turns (YaRN) or a wavelength below "
                "$L / \\mathtt{high\\_freq\\_factor}$ (Llama 3) keep $\\omega_i$ (sections {ref}`10.3.3 <sec-10-3-3>`, "
                "{ref}`10.3.5 <sec-10-3-5>`).",
            ),
            right="C",
        ),
        _q(
            "A causal attention layer has no position encoding. What can its output at position $p$ depend on?",
            (
                "The contents of the tokens $0, \\dots, p$ and how many there are, but not their order.",
                True,
                "Shuffling the first $p$ tokens leaves the output at $p$ unchanged, while a uniform average "
                "reads $1/(p+1)$ ({ref}`section 10.5 <sec-10-5>`).",
            ),
            (
                "Nothing about position: it is permutation equivariant.",
                False,
                "That holds without the causal mask; with it, each position sees a prefix of its own length "
                "(sections {ref}`1.2.1 <sec-1-2-1>` and {ref}`10.5 <sec-10-5>`).",
            ),
            (
                "The exact offset to every earlier token.",
                False,
                "Its weights depend on contents only; offsets need RoPE or another encoding "
                "({ref}`section 10.5 <sec-10-5>`).",
            ),
            right="A",
        ),
    ),
    "11": (
        _q(
            "A decoding loop has a prompt of $P$ tokens and $g$ generated ones in its cache. It rotates the next "
            "token's query and key at position 0. What does that query see?",
            (
                "Nothing wrong: RoPE scores depend only on offsets, and every token is rotated the same way.",
                False,
                "The cached keys keep the positions they were rotated at; only the new token moved, so every offset "
                "to the past changed ({ref}`section 11.1 <sec-11-1>`).",
            ),
            (
                "Every cached key at a negative offset, as if the whole past lay ahead of it.",
                True,
                "Key $s$ sits at $s$ and the query at 0: the offset is $-s$. On the tiny Llama most greedy choices "
                "changed ({ref}`section 11.1 <sec-11-1>`).",
            ),
            (
                "Only its own key is misplaced; its scores to the cached keys are right.",
                False,
                "The query is rotated at 0 too, so its score to every cached key uses a wrong offset "
                "({ref}`section 11.1 <sec-11-1>`).",
            ),
            right="B",
        ),
        _q(
            "Prompts of different lengths are left-padded into one batch with an attention mask, and no "
            "`position_ids` are passed. For which model do the logits of a short prompt change?",
            (
                "A RoPE model such as Llama: its positions start at the number of pads.",
                False,
                "They do start there, but a uniform shift keeps every offset, and RoPE scores see only offsets: the "
                "change is rounding ({ref}`section 11.2 <sec-11-2>`).",
            ),
            (
                "Neither: the attention mask removes the pads.",
                False,
                "The mask removes the pads' content, not their effect on the numbering of the columns "
                "({ref}`section 11.2 <sec-11-2>`).",
            ),
            (
                "A model with a learned table of absolute positions, such as GPT-2.",
                True,
                "Its real tokens read the table at shifted rows; `position_ids` computed from the mask repair it, as "
                "`generate` does ({ref}`section 11.2 <sec-11-2>`).",
            ),
            right="C",
        ),
        _q(
            "Documents are packed into one row with a block-diagonal causal mask, but their positions run on "
            "through the row instead of restarting. What happens to a RoPE model's outputs?",
            (
                "Nothing: inside a document every offset is the same wherever the document starts.",
                True,
                "The mask keeps the documents apart and RoPE sees offsets only; a learned table would read wrong "
                "rows ({ref}`section 11.3 <sec-11-3>`).",
            ),
            (
                "The later documents attend to the earlier ones.",
                False,
                "That is what a missing mask does; positions decide no visibility ({ref}`section 11.3 <sec-11-3>`).",
            ),
            (
                "The later documents are encoded as if they were longer, and their outputs drift.",
                False,
                "A RoPE score depends on the offset between two tokens of the same document, which does not change "
                "({ref}`section 11.3 <sec-11-3>`).",
            ),
            right="A",
        ),
        _q(
            "An evicting cache keeps a few sinks and a window of recent tokens, and renumbers the kept keys "
            "$0, 1, 2, \\dots$ in cache order, as StreamingLLM does. What must happen to a kept key whose position "
            "drops by $\\delta$?",
            (
                "Nothing: the key was rotated once, when it was cached.",
                False,
                "Then it still sits at its old position, and the query's offsets to it are wrong "
                "({ref}`section 11.4 <sec-11-4>`).",
            ),
            (
                "It is recomputed from its token.",
                False,
                "Beyond the first layer a key depends on everything its token attended to, evicted tokens "
                "included; a rotation moves it exactly ({ref}`section 11.4 <sec-11-4>`).",
            ),
            (
                "It is turned by $-\\delta$: rotations compose, so $R(-\\delta)R(p) = R(p - \\delta)$.",
                True,
                "llama.cpp calls it the K-shift; alternatively the cache keeps unrotated keys and rotates them all "
                "at every step ({ref}`section 11.4 <sec-11-4>`).",
            ),
            right="C",
        ),
    ),
    "12": (
        _q(
            "A Meta checkpoint of a model with grouped-query attention is converted to the half-split layout. "
            "Which weights are permuted, and how?",
            (
                "The rows of W_q and W_k, within each head, the keys cut into num_key_value_heads heads.",
                True,
                "Scores are sums over pairs, so relabelling q and k alike changes nothing; W_v and W_o are not "
                "rotated ({ref}`section 12.1 <sec-12-1>`).",
            ),
            (
                "The rows of W_q and W_k, the keys cut into as many heads as the queries.",
                False,
                "That pairs channels from two halves of each key head: the library's PermuteForRope does this to a "
                "GQA key projection ({ref}`section 12.1 <sec-12-1>`).",
            ),
            (
                "All four projections, W_q, W_k, W_v and W_o, within each head.",
                False,
                "Values are not rotated: permuting W_v's rows without W_o's columns changes the output "
                "({ref}`section 12.1 <sec-12-1>`).",
            ),
            right="A",
        ),
        _q(
            "A model runs fine on short prompts and degrades on long ones. `check_rotary` against the training "
            "config reports `rope_type`, `scaling` and `frequencies`, the frequencies differing from pair 29 on. "
            "What happened?",
            (
                "The base was dropped to the default.",
                False,
                "Then the report would name `base`, and the fast pairs would differ from pair 1 "
                "({ref}`section 12.2 <sec-12-2>`).",
            ),
            (
                "The scaling block was deleted or ignored, and the rule changed only the slow pairs.",
                True,
                "Llama 3's rule keeps the fast pairs, so the angles drift apart slowly ({ref}`section 12.2 "
                "<sec-12-2>`).",
            ),
            (
                "The q and k weights are in the other layout.",
                False,
                "A layout mistake leaves the rotary embedding correct: `check_rotary` reports nothing "
                "({ref}`section 12.2 <sec-12-2>`).",
            ),
            right="B",
        ),
        _q(
            "A Phi-3 model with LongRoPE is driven step by step with its own KV cache, from a short prompt past its "
            "original length. What goes wrong at the switch?",
            (
                "Nothing: each key was rotated once, at its own position.",
                False,
                "At its position, but with the short factors, while the new tokens use the long ones "
                "({ref}`section 12.3 <sec-12-3>`).",
            ),
            (
                "The cached keys were rotated with the short factors and the new tokens with the long ones.",
                True,
                "The library's generate drops the cache at the switch and runs the sequence again; engines choose "
                "the factor set once instead ({ref}`section 12.3 <sec-12-3>`).",
            ),
            (
                "The positions restart at 0 after the switch.",
                False,
                "Positions continue from the cache's length; only the frequencies change ({ref}`section 12.3 "
                "<sec-12-3>`).",
            ),
            right="B",
        ),
    ),
    "13": (
        _q(
            "A server in bfloat16 stores the positions in bfloat16 and multiplies them by the frequencies there. "
            "What happens to the score of a query and a key at a fixed offset as the positions grow?",
            (
                "Nothing: RoPE scores depend only on offsets.",
                False,
                "Only in exact arithmetic: the stored positions are rounded, so the angles are wrong before any "
                "rotation.",
            ),
            (
                "It overflows once the positions pass the largest number bfloat16 holds.",
                False,
                "bfloat16 has float32's range; float16 is the format whose positions overflow.",
            ),
            (
                "It drifts: the positions are rounded ever more coarsely, and the fast pairs' angles become noise.",
                True,
                "Form the angles in float32 or better and round only cos and sin: then the error stays at "
                "bfloat16's rounding ({ref}`section 13.1 <sec-13-1>`).",
            ),
            right="C",
        ),
        _q(
            "A cache in bfloat16 renumbers its kept keys by turning each one back a position at every eviction. "
            "What goes wrong after thousands of evictions?",
            (
                "The keys drift and grow: every turn rounds them, and the rounded turn is not exactly a rotation.",
                True,
                "Errors add up turn after turn, and lengths multiply; one turn by the total shift rounds only once "
                "({ref}`section 13.1 <sec-13-1>`).",
            ),
            (
                "Nothing: rotations compose, so many small turns equal one large one.",
                False,
                "They compose in exact arithmetic, and in float64 to rounding; in bfloat16 each turn is rounded.",
            ),
            (
                "Two keys end up with the same position.",
                False,
                "The positions are integers the server keeps exactly; what is rounded is the stored key.",
            ),
            right="A",
        ),
        _q(
            "What does the RoPE base decide?",
            (
                "The longest sequence the model can encode.",
                False,
                "Any base encodes any position; it decides which pairs complete a turn within a length.",
            ),
            (
                "How slowly the slowest pair turns: its wavelength is just under two pi times the base.",
                True,
                "Choose it so that this wavelength lies well beyond the longest sequence "
                "({ref}`section 13.2 <sec-13-2>`).",
            ),
            (
                "Whether scores depend only on offsets.",
                False,
                "Every base above one gives scores that depend only on offsets.",
            ),
            right="B",
        ),
        _q(
            "Why does RoPE rotate queries and keys but not values?",
            (
                "Rotated values would turn each head's output with the absolute positions of its keys.",
                True,
                "A shift of the whole sequence would turn the output; the layer would pass absolute position on "
                "({ref}`section 13.3 <sec-13-3>`).",
            ),
            (
                "Rotating values would change the attention weights.",
                False,
                "The weights come from queries and keys only; values are mixed after them.",
            ),
            (
                "It saves one rotation per token, which is all.",
                False,
                "It does save work, but rotated values would also make the output depend on absolute positions.",
            ),
            right="A",
        ),
    ),
}


@accepts(chapter=OneOf(*QUIZZES, what=f"one of {', '.join(map(repr, QUIZZES))} (the chapters with a quiz)"))
def check_yourself(chapter: str) -> Quiz:
    """The self-check quiz of ``chapter`` ("01" ... "13")."""
    return Quiz(f"ch{chapter}", QUIZZES[chapter])
