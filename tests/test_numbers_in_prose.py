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

Not scanned: code, code spans and roles (``{ref}``, ``{cite}``, ...), link targets, labels,
headings, directive lines, HTML, section and question numbers ("section 3.2", "question 03.6"),
product names ("Llama 3.1") and years (1950 to 2039, written without a thousands separator).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import nbformat
import pytest

from posenc_course.prose import number, says

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("appendix/*.ipynb")])

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
