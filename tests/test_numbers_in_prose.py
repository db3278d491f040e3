"""Every number a reader is told is checked against the value a computation gives.

The chapters keep their numbers typed in the Markdown, so that they read the same in Jupyter, Colab
and the book, and state each one in a code cell through ``posenc_course.prose.says`` (which fails
when the value no longer reads as the typed number). This module scans what a reader of chapters/
and appendix/ sees typed, the Markdown cells and the figures' captions and alt texts (cell
metadata), for numerals that read as results (decimals, scientific notation and powers of ten,
percentages, ratios, counts of 1,000 and more, and smaller integers where the words around them make
them results: "127 of 128", "peaks at 11", "about 150") and fails on any that is neither stated
through ``says`` somewhere in that notebook's code nor on ``ALLOWED``, the short list of typed
numbers that are not results, each with its reason: a cited fact, a definition, or a parameter
the text chooses.

The practice questions are held to the same rules: what a learner reads about a question, its stem,
options and Why in solutions/ and the feedback the grader's bank types (option explanations, hints,
the labels of test inputs), is scanned the same way, and each result-like numeral is either stated
by the question's own declaration (``states``: the number as typed and a function computing it,
checked here with ``says``) or on ``PRACTICE_ALLOWED`` with its reason. A number an f-string of the
bank prints is computed already: only the typed parts of its strings are read.

Not scanned: code, code spans and roles (``{ref}``, ``{cite}``, ...), link targets, labels,
headings, directive lines, HTML, section and question numbers ("section 3.2", "question 03.6"),
product names ("Llama 3.1"), years (1950 to 2039, written without a thousands separator) and a
practice question's "Accepted" line (written from its declaration by tools/make_exercises.py).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from posenc_course.prose import number, says
from tools.make_exercises import ACCEPTED, QUESTION

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("appendix/*.ipynb")])
PRACTICE = sorted(ROOT.glob("solutions/*.ipynb"))
BANK = ROOT / "src" / "grading" / "bank"

# What is not text to scan. Inline and display math stay: numbers live there too.
NOT_TEXT = re.compile(
    r"```.*?```"  # fenced code
    r"|\{[a-z:-]+\}`[^`]*`"  # roles: {ref}, {numref}, {eq}, {cite}, {doc}
    r"|`[^`]*`"  # code spans
    r"|\]\([^)]*\)"  # link targets
    r"|<https?://[^>\s]*>|https?://\S+"  # bare links
    r"|<!--.*?-->"  # comments
    r"|</?[a-zA-Z][^>\n]*>"  # HTML tags
    r"|^\([\w-]+\)=[ \t]*$"  # labels
    r"|^#+ .*?$"  # headings
    r"|^:::.*?$|^:[\w-]+:.*?$",  # directive lines and their options
    re.S | re.M,
)
_NUM = r"\d{1,3}(?:(?:,|\\,|\{,\})\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_POW = r"(?:\^\s*\{\s*[-−+]?\d+\s*\}|\^\s*[-−+]?\d+|[⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
NUMERAL = re.compile(
    r"(?<![\w.,\\])(?:"
    rf"(?P<scientific>(?:{_NUM})(?:[eE][-−+]?\d+\b|\s*(?:·|×|\\cdot|\\times)\s*10\s*{_POW}))"
    rf"|(?P<power>(?<!\d)10\s*{_POW})"
    rf"|(?P<percentage>(?:{_NUM})\s*(?:%|\\%|percent\b))"
    rf"|(?P<ratio>(?:{_NUM})\s*(?:×|\\times|x\b)(?!\s*\d|\s*\\?\{{?\d))"  # 3×, not 32 × 32
    rf"|(?P<times>(?:{_NUM})(?=\s+times\b))"  # 500 times larger
    rf"|(?P<plain>{_NUM})(?![\d.]*\d)"
    r")"
)
NOT_A_RESULT_BEFORE = re.compile(
    r"(?:§\s*|\b(?:sections?|chapters?|figures?|fig\.|tables?|equations?|eq\.|appendix|steps?|questions?)\s+"  # refs
    r"|\b(?:Llama|LLaMA|Qwen|GPT|Python|version)[\s-]*)$",  # names
    re.I,
)
YEAR = re.compile(r"19[5-9]\d|20[0-3]\d")
# An integer below 1000 is a result only where the words around it make it one: a count out of a whole
# ("127 of 128 positions"), where a curve has its extreme ("peaks at 11", "is highest at offset 2"), or
# a value read off approximately ("from about 150 on"). Not an index ("pair 128 of 256"), nor a term
# ("about 2\sqrt{n}", "≈ 113 \cdot 2\pi").
OUT_OF = re.compile(r"\s+(?:out\s+)?of\s+(?:the\s+|its\s+|all\s+|their\s+)?\$?\s*\d")
AN_INDEX_BEFORE = re.compile(
    r"\b(?:pairs?|heads?|layers?|rows?|columns?|channels?|positions?|tokens?|seeds?|parts?)\s+$", re.I
)
AT_ITS_EXTREME_BEFORE = re.compile(
    r"(?:\bpeak(?:s|ed|ing)?|\b(?:(?:is|are|was|were)\s+)?(?:highest|largest|smallest|lowest|greatest|strongest)"
    r"|\b(?:maximum|minimum)(?:\s+is)?)\s+(?:at|near|around)\s+(?:the\s+)?"
    r"(?:(?:offset|position|distance|head|pair)s?\s+)?\$?\s*(?:k\s*=\s*)?$",
    re.I,
)
ABOUT_BEFORE = re.compile(r"(?:\b(?:about|roughly|nearly|almost|approximately|around)|≈|\\approx|~)\s*\$?\s*$", re.I)
A_TERM_AFTER = re.compile(r"\s*(?:\\times|\\cdot|[×·/^*])|[a-zA-Z(\\{]")


def small_result(text: str, start: int, end: int) -> bool:
    """Do the words around the integer text[start:end] (below 1000) make it a result?"""
    before, after = text[max(0, start - 60) : start], text[end:]
    if OUT_OF.match(after):
        return not AN_INDEX_BEFORE.search(before)
    if AT_ITS_EXTREME_BEFORE.search(before):
        return True
    return bool(ABOUT_BEFORE.search(before)) and not A_TERM_AFTER.match(after)


def numerals(markdown: str):
    """(kind, numeral, context) for every result-like numeral of a Markdown text."""
    text = NOT_TEXT.sub(" ", markdown)
    for match in NUMERAL.finditer(text):
        kind, numeral = match.lastgroup, match.group(0).strip()
        if NOT_A_RESULT_BEFORE.search(text[max(0, match.start() - 20) : match.start()]):
            continue
        if kind == "plain":
            digits = re.sub(r"\\,|\{,\}|,", "", numeral)
            if "." in digits:
                kind = "decimal"
            elif int(digits) >= 1000 and not (YEAR.fullmatch(numeral)):
                kind = "count"
            elif int(digits) < 1000 and small_result(text, match.start(), match.end()):
                kind = "small"
            else:
                continue
        context = " ".join(text[max(0, match.start() - 50) : match.end() + 30].split())
        yield kind, numeral, context


def key(numeral: str):
    """What a numeral and a ``says`` text are matched by: the number shown, to its last digit, sign aside."""
    return abs(number(numeral)).as_tuple()


def every_number(markdown: str) -> set:
    """The keys of every number a Markdown text shows, results or not."""
    return {key(m.group(0)) for m in NUMERAL.finditer(NOT_TEXT.sub(" ", markdown))}


def stated(code: str) -> list[str]:
    """The texts of every ``says("...", value)`` call in a code cell."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in code.splitlines()]
    found = []
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "says":
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append(first.value)
    return found


def shown(cell) -> list[tuple[str, str]]:
    """(where, text) of what a reader sees typed in a cell: a Markdown cell's text; a code cell's figure caption
    (MyST, as the book renders it) and its image's alt text, both in the cell's metadata (``mystnb``)."""
    if cell.cell_type == "markdown":
        return [("", cell.source)]
    mystnb = cell.get("metadata", {}).get("mystnb", {})
    found = [(" caption", mystnb.get("figure", {}).get("caption")), (" alt text", mystnb.get("image", {}).get("alt"))]
    return [(where, text) for where, text in found if isinstance(text, str)]


@functools.cache
def scan(path: Path):
    """(numerals: [(where, kind, numeral, context)], every number the text shows, says texts) of a notebook."""
    cells = nbformat.read(path, as_version=4).cells
    found, anywhere, texts = [], set(), []
    for n, cell in enumerate(cells):
        for where, text in shown(cell):
            found += [(f"cell {n}{where}", *item) for item in numerals(text)]
            anywhere |= every_number(text)
        if cell.cell_type == "code":
            texts += stated(cell.source)
    return found, anywhere, texts


# Typed numbers that are not results, each with its reason. The reason starts with what the number is:
# "cited" (a fact from a cited source, named), "definition" (part of a formula or a convention), or
# "parameter" (a value the text chooses for an example or an experiment, which the code then uses).
ALLOWED: dict[tuple[str, str], str] = {
    ("01_order_problem", "5,000"): "parameter: the long sequence of the example; the cell after it compares row 3 "
    "of tables of 5 and 5000 positions",
    ("01_order_problem", "2,000"): "parameter: how many positions the distinctness check covers (table[:2000])",
    ("02_sinusoidal_formula", "10\\,000"): "definition: the base of the original Transformer (vaswani2017), "
    "posenc's default and the chapter's base",
    ("02_sinusoidal_formula", "10^{-10}"): "parameter: the tolerance every build is held to (TOL)",
    ("02_sinusoidal_formula", "10^{-6}"): "parameter: the tolerance of the float32 comparisons (the assert after it)",
    ("02_sinusoidal_formula", "1000"): "parameter: the length of the buggy table (pe_doubled(1000, d_model)), over "
    "which its slow channels are measured",
    ("02_sinusoidal_formula", "10^6"): "parameter: a base to try on the explorer's slider",
    ("02_sinusoidal_formula", "0.1"): "parameter: the standard deviation of the small token embeddings, as in the "
    "widely copied example (scale=0.1)",
    ("03_frequency_analysis", "10,000"): "definition: the base of the original Transformer (vaswani2017), the "
    "chapter's base",
    ("03_frequency_analysis", "2048"): "parameter: the longest of the three lengths L of the pair-kinds table",
    ("03_frequency_analysis", "0.05"): "parameter: the noise of the read-out experiment (sigma = 0.05)",
    ("03_frequency_analysis", "4096"): "parameter: the offsets over which the cosine similarities are compared "
    "(np.arange(4096))",
    ("03_frequency_analysis", "4095"): "parameter: the last position of the closest-pair search (N = 4096)",
    ("03_frequency_analysis", "500,000"): "cited: Llama 3's RoPE base (dubey2024llama3)",
    ("03_frequency_analysis", "1,000,000"): "cited: the RoPE base of the Code Llama models (roziere2023codellama)",
    ("03_frequency_analysis", "1.001"): "parameter: the base near 1 of the degenerate example of the distance "
    "figure, in its caption and alt text (cases: (64, 1.001))",
    ("04_linearity", "10^6"): "parameter: the range of the random positions (rng.integers(-10**6, 10**6))",
    ("04_linearity", "1000"): "parameter: the offsets of the dot-product figure, named in its alt text "
    "(k_range = np.arange(-1000, 1001))",
    ("04_linearity", "0"): "definition: every term cos(k omega_i) is at most 1, reached at k = 0, so the sum peaks "
    "there (the summary)",
    ("05_learned_vs_fixed", "3072"): "cited: the feed-forward width of GPT-2 small and BERT-base, from their "
    "published shapes (radford2019, devlin2019); the cell after reproduces the checkpoints' parameter counts",
    ("05_learned_vs_fixed", "1.5"): "parameter: the middle test length 1.5L (LENGTHS = (L, 3 * L // 2, 2 * L))",
    ("06_precision", "10^6"): "parameter: the position, one million, at which the errors are compared",
    ("06_precision", "10,000"): "definition: the base of the original Transformer (vaswani2017), the chapter's base",
    ("06_precision", "0.5"): "definition: half a position, the error at which a position shifts "
    "(0.5 / (3 * unit) in the cell after)",
    ("06_precision", "4097"): "parameter: the example position of 6.3; the collision cell checks that rows "
    "4096 and 4097 coincide in float16",
    ("06_precision", "8192"): "parameter: the positions over which collisions are counted (n = 8192)",
    ("06_precision", "0.15"): "parameter: how close to pi an angle error counts as saying nothing "
    "(np.pi - 0.15 in the cell after)",
    ("06_precision", "4064"): "parameter: the first position of the staircase figure, in its alt text "
    "(near = np.arange(4064, 4161))",
    ("06_precision", "4160"): "parameter: the last position of the staircase figure, in its alt text "
    "(near = np.arange(4064, 4161))",
    ("07_implementations", "0.1"): "parameter: an example value of the Toeplitz defect, to say what its scale means",
    ("07_implementations", "10^{-6}"): "parameter: the line above which a check's value counts as a flag "
    "(v > 1e-6 in the scorecard)",
    ("07_implementations", "8192"): "parameter: the first of the 128 positions of bug 6's table, in the alt text "
    "(its name: float16 angles, p from 8192)",
    ("07_implementations", "8319"): "parameter: the last of the 128 positions of bug 6's table, in the alt text "
    "(8192 + 127)",
    ("08_rope", "10^4"): "definition: the base of the original Transformer and of RoFormer (su2021), posenc's "
    "default, which the decay cells use",
    ("09_relative_biases", "1,024"): "parameter: the sequence length of the ALiBi attention example (n_long = 1024)",
    ("09_relative_biases", "3,000"): "parameter: an example distance, to say that the penalty keeps growing with it",
    ("09_relative_biases", "8"): "parameter: the heads of the ALiBi example (posenc.alibi_bias(8, n_bias)), in the "
    "alt text's 'heads 1, 4 and 8 of 8'",
    ("09_relative_biases", "2"): "parameter: the task's offset (OFFSET = 2), at which a head that looks two back "
    "makes its score peak",
    ("10_rope_in_practice", "500,000"): "cited: Llama 3's RoPE base (dubey2024llama3), one of the configs of 10.7",
    ("10_rope_in_practice", "1,000,000"): "cited: the RoPE base of Qwen2.5 and Qwen2-VL (qwen2024qwen25, "
    "wang2024qwen2vl), configs of 10.7",
    ("10_rope_in_practice", "8192"): "cited: the context Llama 3 was trained at before its extension (dubey2024llama3)",
    ("10_rope_in_practice", "0.1"): "definition: the constant of YaRN's attention temperature 0.1 ln s + 1 (peng2024)",
    ("10_rope_in_practice", "1,500"): "parameter: the longer training of the NoPE-only model (LONGER = 1500)",
    ("10_rope_in_practice", "10^4"): "definition: the base of the original Transformer and of LLaMA (touvron2023), "
    "posenc's default, which the cell uses",
    ("10_rope_in_practice", "2,048"): "parameter: the training length of the LLaMA-sized setting (settings in the "
    "cell after), LLaMA's own context (touvron2023)",
    ("10_rope_in_practice", "8,192"): "parameter: the stretched length of the LLaMA-sized setting (settings in the "
    "cell after)",
    ("11_positions_at_inference", "10,000"): "definition: the RoPE base of the tiny Llama, the library's default "
    "rope_theta (asserted in the models cell)",
    ("11_positions_at_inference", "0.2"): "parameter: the standard deviation of the tiny models' random weights "
    "(initializer_range=0.2 in the models cell)",
    ("11_positions_at_inference", "10^{4}"): "parameter: the second of the four starting positions of the bfloat16 "
    "table, up to which the cell asserts that rounding is nearly all the library's table loses",
    ("11_positions_at_inference", "1,000"): "parameter: the first of the four starting positions of the bfloat16 "
    "table (the cell asserts that positions from it collide in bfloat16)",
    ("fast_angles", "10^6"): "parameter: the position, one million, at which the errors are measured",
    ("fast_angles", "10,000"): "definition: the base of the original Transformer (vaswani2017), the appendix's base",
    ("fast_angles", "4096"): "definition: the coarse block of posenc's split p = 4096a + 64b + r (and, as a "
    "parameter, the length of the timed tables, n_cost = 4096)",
}
KINDS = ("cited", "definition", "parameter")


def unexplained(path: Path) -> list[str]:
    """The result-like numerals of a notebook's text that no says() states and ALLOWED does not list."""
    found, _, texts = scan(path)
    explained = {key(text) for text in texts} | {key(numeral) for (stem, numeral) in ALLOWED if stem == path.stem}
    return [
        f"{where} ({kind}) {numeral!r}: ...{context}..."
        for where, kind, numeral, context in found
        if key(numeral) not in explained
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_result_in_the_text_is_stated_by_a_cell_or_allowed(path):
    missing = unexplained(path)
    assert not missing, "numbers in the text that no cell states with says() and that are not in ALLOWED:\n" + (
        "\n".join(missing)
    )


def test_a_result_that_no_cell_states_is_caught(tmp_path):
    path = tmp_path / "99_sample.ipynb"
    cells = [
        nbformat.v4.new_markdown_cell("The factor is about 3.16; over 2,000 positions it stays below $10^{-9}$."),
        nbformat.v4.new_code_cell('factor = 10 ** 0.5\nsays("3.16", factor)\nsays("below 10^{-9}", 3e-10)'),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert [line.split(": ...")[0] for line in unexplained(path)] == ["cell 0 (count) '2,000'"]


def test_a_result_in_a_caption_or_an_alt_text_that_no_cell_states_is_caught(tmp_path):
    path = tmp_path / "99_sample.ipynb"
    figure = {"figure": {"caption": "Pair 0 turns every 6.3 positions, pair 1 every 19.9.", "name": "fig-99-1"}}
    figure["image"] = {"alt": "A line falling from 0.04 to 0.02, then flat."}
    cells = [nbformat.v4.new_code_cell('says("6.3", 2 * math.pi)\nsays("0.02", 0.021)', metadata={"mystnb": figure})]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert [line.split(": ...")[0] for line in unexplained(path)] == [
        "cell 0 caption (decimal) '19.9'",
        "cell 0 alt text (decimal) '0.04'",
    ]
    assert stale(path) == []  # a says() of a number in a caption or an alt text states a number the text shows


def test_a_small_integer_that_reads_as_a_result_and_that_no_cell_states_is_caught(tmp_path):
    path = tmp_path / "99_sample.ipynb"
    text = "Bug 4 duplicates 127 of 128 positions; the score peaks at offset 11, with 8 heads, from about 150 on."
    cells = [nbformat.v4.new_markdown_cell(text), nbformat.v4.new_code_cell('says("11", 11.2)')]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert [line.split(": ...")[0] for line in unexplained(path)] == ["cell 0 (small) '127'", "cell 0 (small) '150'"]


def stale(path: Path) -> list[str]:
    """The says() texts of a notebook whose number its text (captions and alt texts included) no longer shows."""
    _, anywhere, texts = scan(path)
    return [text for text in texts if key(text) not in anywhere]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_says_states_a_number_of_the_text(path):
    assert not stale(path), f"says() states numbers the text no longer shows: {stale(path)}"


def test_the_allow_list_is_current_and_gives_reasons():
    by_stem = {path.stem: path for path in NOTEBOOKS}
    problems = []
    for (stem, numeral), reason in ALLOWED.items():
        if stem not in by_stem:
            problems.append(f"{stem}: no such notebook")
            continue
        found, _, texts = scan(by_stem[stem])
        if key(numeral) not in {key(n) for _, _, n, _ in found}:
            problems.append(f"{stem} {numeral!r}: no longer in the text")
        if key(numeral) in {key(text) for text in texts}:
            problems.append(f"{stem} {numeral!r}: stated by says() as well")
        if not reason.startswith(KINDS) or len(reason.split()) < 4:
            problems.append(f"{stem} {numeral!r}: the reason must say what the number is, {KINDS}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "markdown, expected",
    [
        ("The last wavelength is about 60,611 positions.", ["60,611"]),
        ("a ratio of 3.16 and 0.5, and 5000 steps", ["3.16", "0.5", "5000"]),
        ("off by $2.2 \\times 10^{-2}$ rad, bound $10^{-9}$", ["2.2 \\times 10^{-2}", "10^{-9}"]),
        ("about 5.4·10⁸, or 3.3e8, or 10⁻⁷", ["5.4·10⁸", "3.3e8", "10⁻⁷"]),
        ("25 % of them, 12.5\\% of those, 3× faster, 500 times larger", ["25 %", "12.5\\%", "3×", "500"]),
        ("base $10\\,000$ or $65{,}504$", ["10\\,000", "65{,}504"]),
        ("a 32 × 32 image, 16 patches of 8 × 8 pixels, 999 tokens", []),
        ("see section 3.2, {ref}`6.1 <sec-6-1>`, Figure 2.1 and §4.3", []),
        ("`x = 0.5` in code, a [link](https://e.org/1.5), <https://e.org/2.5>", []),
        ("# Heading 1.5\n(sec-1-5)=\n:::{note}\n:class: 0.5\n:::", []),
        ("{cite}`vaswani2017` wrote in 2017 (and Su et al., 2021); Llama 3.1 8B", []),
        ("$-0.654$ and $|p| < 2^{24}$ and $0 < x$ and $y > 1.5$", ["0.654", "1.5"]),
        ("as question 03.6 shows (Question 09.1 too)", []),
        # small integers: a count out of a whole, where a curve has its extreme, a value read off roughly
        ("127 of 128 positions, 3 out of the 8 seeds, but pair 128 of 256 and head 2 of 8", ["127", "3"]),
        ("it peaks at $k = 11$, is highest at offset 2, lowest near 40, largest at position 7", ["11", "2", "40", "7"]),
        ("from about 150 on, about 1 rad, $710 \\approx 113$, almost 2.", ["150", "1", "113", "2"]),
        ("about $2\\sqrt{n}$ rows, about 2N/λ times, $\\approx 113 \\cdot 2\\pi$, 16 heads, offset 2, 4 of them", []),
    ],
)
def test_the_scan_finds_results_and_skips_the_rest(markdown, expected):
    assert [numeral for _, numeral, _ in numerals(markdown)] == expected


def test_numerals_and_says_texts_are_matched_by_the_number_shown():
    assert key("60,611") == key("60611") == key("60\\,611")
    assert key("5.4 \\times 10^8") == key("5.4·10⁸") == key("5.4e8") != key("5.40e8")
    assert key("25 %") == key("0.25") and key("0.654") == key("−0.654") and key("less than 0.18") == key("0.18")
    assert stated('says("1.037", r)\n%matplotlib inline\nx = posenc_course.prose.says("60,611", lam[-1])') == [
        "1.037",
        "60,611",
    ]


def test_every_numeral_the_scan_finds_is_one_says_reads():
    for path in NOTEBOOKS:
        for _, _, numeral, _ in scan(path)[0]:
            says(numeral, float(number(numeral)))  # reads, and a value equal to it passes


# --------------------------------------------------------------------------
# The practice questions: what a learner reads about each one
# --------------------------------------------------------------------------
# A question's stem, options and Why are Markdown in solutions/ (exercises/ is generated from it); its feedback
# is typed in the grader's bank. Each typed result-like numeral is stated by the question's declaration
# (``states``: {the number as typed: a function computing it}) or listed here with its reason. Owners: a question
# id, or for what comes before a chapter's first question and a string of a bank module that no question shows,
# the chapter ("06"), or the shared module ("common").
PRACTICE_ALLOWED: dict[tuple[str, str], str] = {
    # a chapter's entry covers its intro and all its questions
    **{
        (chapter, "0.1 %"): "definition: the grader's default tolerance for a number (Numeric's rtol = 1e-3), which "
        "each question's Accepted line states"
        for chapter in ("01", "02", "03", "04", "09")
    },
    **{
        (chapter, "10,000"): "definition: the base of the original Transformer (vaswani2017), posenc's default and "
        "the chapter's base"
        for chapter in ("02", "03", "04", "06", "07", "08", "10", "11", "13")
    },
    ("01.4", "0.4"): "parameter: the value p / L the question starts from (2 / 5, as its reference computes it)",
    ("05.5", "25.7"): "cited: the BLEU of the Transformer with a learned position table (vaswani2017, Table 3, row E)",
    ("05.5", "25.8"): "cited: the BLEU of the same base model with the sinusoidal formula (vaswani2017, Table 3)",
    ("01.5", "1000"): "parameter: the length of the sequence the question gives (_ch01_raw_ratio: 1000 - 1)",
    ("01.6", "5,000"): "parameter: a long sequence of the options' concrete cases, against L = 5",
    ("01.6", "10^6"): "parameter: a far position of the nudge's concrete cases",
    ("01.6", "0.4"): "parameter: the value p / L of the example in the explanation of B (2 / 5, as in 01.4)",
    ("03.2", "1000"): "parameter: the length the question asks about (wavelength at most 1000)",
    ("03.3", "1000"): "parameter: the position the question compares with 0 (PE(1000))",
    ("03.4", "500,000"): "cited: Llama 3's RoPE base (dubey2024llama3), the raised base the question names",
    ("03.6", "10^6"): "parameter: the position of the question (_ch03_angle: 1e6 times omega_1)",
    ("05.3", "1,024"): "cited: the number of GPT-2's learned positions (radford2019), the table of the question",
    ("05.3", "1,500"): "parameter: the length of the input the question gives",
    ("05.7", "10,000"): "parameter: the longest test input (_layer_cases: sequences of 6000 and 10000 tokens)",
    ("05.7", "5,000"): "parameter: the length of the table a common implementation builds in advance (max_len = "
    "5000, the known mistake MaxLen5000)",
    ("06.2", "1000"): "parameter: the first of the two positions the question compares",
    ("06.2", "1001"): "parameter: the second of the two positions the question compares",
    ("06.2", "16,777,216"): "definition: 2^24, up to which float32's 24 significant bits hold every integer",
    ("06.2", "1024"): "definition: 2^10, the end of the binade [512, 1024) in which bfloat16's spacing is 4",
    ("06", "2048"): "definition: 2^11, up to which float16's 11 significant bits hold every integer",
    ("06.3", "19\\,999"): "parameter: the last position of the question (_ch06_collisions: n = 20000)",
    ("06.3", "20,000"): "parameter: the number of positions of the question (_ch06_collisions: n = 20000)",
    ("06.3", "4096"): "definition: 2^12, from which float16's spacing is 4",
    ("06.3", "8192"): "definition: 2^13, from which float16's spacing is 8",
    ("06.3", "16,384"): "definition: 2^14, from which float16's spacing is 16",
    ("06.4", "60,000"): "parameter: the largest position of the test inputs (_half_cases: max_pos=60000)",
    ("06.5", "1000"): "parameter: the position of the question (_angle_bound: p=1000)",
    ("06.6", "8192"): "parameter: the positions over which the chapter counts collisions (n = 8192 in section 6.3)",
    ("06.6", "500,000"): "cited: Llama 3's RoPE base (dubey2024llama3), the raised base of option C",
    ("06.6", "4097"): "parameter: the position of the example, the first that float16 cannot hold",
    ("07.2", "10^{-6}"): "parameter: the tolerance of the comparison option C proposes",
    ("08", "200"): "parameter: the widest test input of 08.2 (_rope_cases: widths up to 2 * 99)",
    ("08.2", "10^6"): "parameter: the far position at which the Why compares the angles (the test inputs reach "
    "999,999)",
    ("08.3", "1000"): "parameter: the query position of option B's pair",
    ("08.3", "1007"): "parameter: the key position of option B's pair (offset 7, as in the other options)",
    ("09.3", "2,000"): "parameter: the largest max_distance of the test inputs (_bucket_cases)",
    ("10", "10^7"): "parameter: the largest base of 10.4's test inputs (_yarn_cases: 10 ** rng.uniform(2, 7))",
    ("10", "131,072"): "parameter: the longest trained length of 10.4's test inputs (_yarn_cases: up to 131072)",
    ("10.1", "500{,}000"): "cited: Llama 3's RoPE base (dubey2024llama3), the head of the question",
    ("10.1", "8192"): "cited: the length Llama 3 was trained at before its extension (dubey2024llama3)",
    ("10.2", "0.1"): "definition: the constant of YaRN's attention temperature 0.1 ln s + 1 (peng2024)",
    ("10.4", "0.001"): "definition: the constant the stem's rule adds when the ramp's ends meet, as posenc.yarn_ramp "
    "does",
    ("10.4", "32"): "parameter: YaRN's beta_fast = 32 of the question, the turns above which a pair is kept",
    ("10.5", "0.25"): "parameter: the partial_rotary_factor of the option's example (96 channels, a quarter rotated)",
    ("10.7", "16,384"): "parameter: the input length of the question (_ch08_dynamic_base: n = 16384)",
    ("10.7", "4,096"): "parameter: the trained length of the question (_ch08_dynamic_base: L = 4096)",
    ("10.10", "4,096"): "parameter: the trained length the question gives",
    ("10.10", "16,384"): "parameter: the input length the question gives",
    ("13", "100,000"): "parameter: the largest first position of 13.6's test inputs (_head_cases: up to 10**5)",
}

TEST_DATA = ("known_mistakes", "alternatives", "covers", "states")  # a question's keywords that no learner reads
QUESTION_KINDS = ("Numeric", "Choice", "Array", "Function")


def practice_texts(path: Path) -> list[tuple[str, str, str]]:
    """(owner, where, text) of each Markdown cell of a practice notebook: a question owns the cells from its
    heading to the next one (stem, options, Why), the chapter those before the first; each without its Accepted
    line, which tools/make_exercises.py writes from the question's declaration."""
    owner, found = path.stem[:2], []
    for n, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type == "markdown":
            heading = QUESTION.match(cell.source)
            owner = heading.group(1) if heading else owner
            text = "\n".join(line for line in cell.source.split("\n") if not line.startswith(ACCEPTED))
            found.append((owner, f"{path.parent.name}/{path.name} cell {n}", text))
    return found


def typed_strings(source: str) -> list[tuple[int, re.Pattern, str]]:
    """(line, pattern, text) of every string a bank module types that a learner may read: not a docstring, nor a
    question's id, title or test data. ``text`` shows an f-string's replacement fields as ``{}`` (what they print
    is computed); ``pattern`` finds the string in what the grader prints, whatever its fields print."""
    tree = ast.parse(source)
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(first.value)
        elif isinstance(node, ast.JoinedStr):
            skip.update(part for value in node.values for part in ast.walk(value))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in QUESTION_KINDS:
            skip.update(part for arg in node.args[:2] for part in ast.walk(arg))
            skip.update(part for kw in node.keywords if kw.arg in TEST_DATA for part in ast.walk(kw.value))
    found = []
    for node in ast.walk(tree):
        if node in skip:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            pieces = [node.value]
        elif isinstance(node, ast.JoinedStr):
            pieces = [value.value if isinstance(value, ast.Constant) else None for value in node.values]
        else:
            continue
        if not any(piece and re.search(r"\d", piece) for piece in pieces):
            continue
        text = "".join("{}" if piece is None else piece for piece in pieces)
        literal = "".join("\0" if piece is None else piece for piece in pieces).split("\0")
        found.append((node.lineno, re.compile(".*?".join(map(re.escape, literal)), re.S), text))
    return found


def shown_by_grader(question) -> list[str]:
    """What the grader may print about ``question`` beyond its engine's own words: the explanations and nudge of a
    choice question, the hints of its named mistakes, and for a coding question what it returns and how it
    names its test inputs."""
    from grading.feedback import seed_for

    texts = [hint for _, hint in getattr(question, "mistakes", ())]
    if question.kind == "choice":
        texts += [*question.explanations.values(), question.nudge]
    if question.kind == "function":
        cases = question.cases(np.random.default_rng(seed_for(question.qid)))
        texts += [question.returns, *(part for case in cases for part in (case.label, case.note))]
    return [text for text in texts if isinstance(text, str) and text]


def gather(notebooks, modules, questions) -> dict[str, list[tuple[str, str]]]:
    """{owner: [(where, text)]}: the practice notebooks' Markdown, and each typed string of the bank modules under
    every question whose feedback shows it (a string no question shows: under its module)."""
    owned: dict[str, list[tuple[str, str]]] = {}
    for path in notebooks:
        for owner, where, text in practice_texts(path):
            owned.setdefault(owner, []).append((where, text))
    shown = {qid: shown_by_grader(question) for qid, question in questions.items()}
    for module in modules:
        for line, pattern, text in typed_strings(module.read_text(encoding="utf-8")):
            owners = [qid for qid, texts in shown.items() if any(pattern.search(t) for t in texts)]
            for owner in owners or [module.stem.removeprefix("ch")]:
                owned.setdefault(owner, []).append((f"bank/{module.name}:{line}", text))
    return owned


@functools.cache
def practice() -> dict[str, list[tuple[str, str]]]:
    from grading import QUESTIONS

    return gather(PRACTICE, sorted(BANK.glob("*.py")), QUESTIONS)


def chapter_of(owner: str) -> str:
    """The chapter of an owner: "06" for "06.4" and for "06" itself."""
    return owner.split(".")[0]


def practice_unexplained(owned, questions) -> list[str]:
    """The result-like numerals of the practice texts that no ``states`` of their question and no
    PRACTICE_ALLOWED entry explains."""
    problems = []
    for owner, texts in owned.items():
        explained = {key(text) for text in getattr(questions.get(owner), "states", {})}
        explained |= {key(numeral) for (who, numeral) in PRACTICE_ALLOWED if who in (owner, chapter_of(owner))}
        problems += [
            f"{owner}: {where} ({kind}) {numeral!r}: ...{context}..."
            for where, text in texts
            for kind, numeral, context in numerals(text)
            if key(numeral) not in explained
        ]
    return problems


def misstated(owned, questions) -> list[str]:
    """Each ``states`` of a question whose function's value does not read as its text, or whose number no text
    of the question shows."""
    problems = []
    for qid, question in questions.items():
        anywhere = set().union(*(every_number(text) for _, text in owned.get(qid, [])))
        for text, compute in question.states.items():
            try:
                says(text, compute())
            except AssertionError as error:
                problems.append(f"{qid} {text!r}: {error}")
            if key(text) not in anywhere:
                problems.append(f"{qid} {text!r}: no text of the question shows it")
    return problems


def test_every_result_a_practice_question_reports_is_stated_by_its_declaration_or_allowed():
    from grading import QUESTIONS

    missing = practice_unexplained(practice(), QUESTIONS)
    assert not missing, "numbers in practice texts that no states= of the question gives and PRACTICE_ALLOWED " + (
        "does not list:\n" + "\n".join(missing)
    )


def test_every_number_a_question_states_reads_as_its_text_shows_it():
    from grading import QUESTIONS

    assert misstated(practice(), QUESTIONS) == []


def test_the_practice_allow_list_is_current_and_gives_reasons():
    from grading import QUESTIONS

    owned, problems = practice(), []
    for (owner, numeral), reason in PRACTICE_ALLOWED.items():
        covered = [who for who in owned if owner in (who, chapter_of(who))]
        found = {key(n) for who in covered for _, text in owned[who] for _, n, _ in numerals(text)}
        if key(numeral) not in found:
            problems.append(f"{owner} {numeral!r}: no longer in its texts")
        if key(numeral) in {key(text) for who in covered if who in QUESTIONS for text in QUESTIONS[who].states}:
            problems.append(f"{owner} {numeral!r}: stated by states= as well")
        if owner != chapter_of(owner) and (chapter_of(owner), numeral) in PRACTICE_ALLOWED:
            problems.append(f"{owner} {numeral!r}: its chapter's entry covers it already")
        if not reason.startswith(KINDS) or len(reason.split()) < 4:
            problems.append(f"{owner} {numeral!r}: the reason must say what the number is, {KINDS}")
    assert not problems, "\n".join(problems)


def test_a_result_in_a_practice_text_that_no_declaration_states_is_caught(tmp_path):
    from grading.kinds import Numeric

    notebook = tmp_path / "99_sample.ipynb"
    cells = [
        nbformat.v4.new_markdown_cell("## Question 99.1\n\nHow far does pair 240 turn?\n\n**Accepted:** within 0.1 %."),
        nbformat.v4.new_code_cell('check("99.1", answer)'),
        nbformat.v4.new_markdown_cell("**Why.** It turns by less than 0.18 rad, and 7 of 8 pairs turn less."),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), notebook)
    module = tmp_path / "ch99.py"  # parsed, not run: which strings a learner may read
    module.write_text(
        "def _hint(angle):\n"
        '    """Twice the angle: 0.25 in a docstring."""\n'
        '    return f"twice the angle: {2 * angle:.2f} rad, off by about 0.36"\n'
        "\n"
        '_add(Numeric("99.1", "angle over 1000 positions", _angle, known_mistakes=[(0.36, "twice 0.18")]))\n',
        encoding="utf-8",
    )
    question = Numeric(
        "99.1",
        "angle over 1000 positions",
        lambda: 0.18,
        mistakes=[(lambda: 0.36, f"twice the angle: {2 * 0.18:.2f} rad, off by about 0.36")],
        states={"less than 0.18": lambda: 0.1778},
    )
    owned = gather([notebook], [module], {"99.1": question})
    assert practice_unexplained(owned, {"99.1": question}) == [
        f"99.1: {tmp_path.name}/99_sample.ipynb cell 2 (small) '7': ...**Why.** It turns by less than 0.18 rad, and 7 "
        "of 8 pairs turn less....",
        "99.1: bank/ch99.py:3 (decimal) '0.36': ...twice the angle: {} rad, off by about 0.36...",
    ]
    assert misstated(owned, {"99.1": question}) == []
    question.states = {"less than 0.18": lambda: 0.19, "0.96": lambda: 0.96}
    assert [problem.split(":")[0] for problem in misstated(owned, {"99.1": question})] == [
        "99.1 'less than 0.18'",
        "99.1 '0.96'",
    ]
