"""Code a reader reads without scrolling: no line of code in the notebooks is wider than the text column at 1280 px.

``CODE_COLUMNS`` is the longest line, in characters, that the book's code cells show whole on a laptop, with one
character to spare for code fonts a little wider than the one measured (the commit that set it says what was
measured). The browser test ``test_browser_book.py::test_code_fits_the_column_on_a_laptop`` measures the rendered
cells themselves; this one finds a long line before any build, and names it.

The Colab install cell is not held to it: the book never shows it (``remove-cell``), Colab shows it as a form,
and ``tools/colab_cell.py`` writes it. Code a chapter prints (``inspect.getsource`` of the bug zoo's functions)
is: it is shown in the same column.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import nbformat
import pytest

from posenc_course import bug_zoo
from tools import colab_cell

ROOT = Path(__file__).resolve().parents[1]
CODE_COLUMNS = 76
# The folders whose notebooks are held to it: every notebook a reader or learner opens.
FOLDERS = ("chapters", "appendix", "solutions", "exercises")
NOTEBOOKS = sorted(path for folder in FOLDERS for path in (ROOT / folder).glob("*.ipynb"))
PRINTED = re.compile(r"inspect\.getsource\((\w+)\.(\w+)\)")  # code a notebook prints: module.name
MODULES = {"bug_zoo": bug_zoo}  # the modules whose code the notebooks print, by the name the notebooks give them


def long_lines(nb, limit: int = CODE_COLUMNS) -> list[str]:
    """Each code line of ``nb`` longer than ``limit`` characters, as "cell N, line M (K characters): the line"."""
    return [
        f"cell {n}, line {m} ({len(line)} characters): {line}"
        for n, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and not cell.source.startswith(colab_cell.HEADER)
        for m, line in enumerate(cell.source.splitlines(), start=1)
        if len(line) > limit
    ]


def test_there_are_notebooks_in_each_folder():
    assert {path.parent.name for path in NOTEBOOKS} == set(FOLDERS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_code_line_fits_the_column(path):
    long = long_lines(nbformat.read(path, as_version=4))
    assert not long, (
        f"{path.relative_to(ROOT)}: {len(long)} code lines longer than {CODE_COLUMNS} characters, wider than the "
        "text column at 1280 px:\n" + "\n".join(long)
    )


def test_code_the_notebooks_print_fits_the_column():
    printed = {
        match.groups()
        for path in NOTEBOOKS
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code"
        for match in PRINTED.finditer(cell.source)
    }
    assert printed, "no notebook prints code with inspect.getsource: is PRINTED still finding it?"
    unknown = {module for module, _ in printed} - set(MODULES)
    assert not unknown, f"notebooks print code of {sorted(unknown)}: add them to MODULES"
    long = [
        f"{module}.{name}: {line}"
        for module, name in sorted(printed)
        for line in inspect.getsource(getattr(MODULES[module], name)).splitlines()
        if len(line) > CODE_COLUMNS
    ]
    assert not long, f"printed code lines longer than {CODE_COLUMNS} characters:\n" + "\n".join(long)


def test_a_long_line_is_found_and_the_colab_cell_is_not_held_to_the_limit():
    nb = nbformat.v4.new_notebook()
    wide = "x = " + "1 + " * 20 + "1"
    nb.cells = [
        nbformat.v4.new_code_cell(colab_cell.HEADER + "    " + "pass  # " + "long " * 30),
        nbformat.v4.new_markdown_cell("words " * 40),
        nbformat.v4.new_code_cell("y = 2\n" + wide),
    ]
    assert long_lines(nb) == [f"cell 2, line 2 ({len(wide)} characters): {wide}"]
    assert long_lines(nb, limit=len(wide)) == []
