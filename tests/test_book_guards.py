"""Guards of the published pages, each shown to fail on a planted case.

A cell's stderr (a warning, with the path of the machine that ran it) fails the strict build and never reaches a
page, unless the cell declares that it means to show it (``tests/test_book.py`` runs the strict build on the book;
here a one-page book planted with such a cell is built with the book's own setting).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

pytestmark = pytest.mark.slow  # each builds a small book: seconds

ROOT = Path(__file__).resolve().parents[1]
STDERR = "UserWarning: something the reader should never see\n"


def stderr_setting() -> str:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["execute"]["stderr_output"]


def build_one_page(tmp_path, cell_metadata) -> tuple[int, str, str]:
    """Build a one-notebook Sphinx project (myst-nb, not executed: the outputs are planted) strictly, with the
    book's stderr setting; (return code, what the build printed, the page's HTML)."""
    cell = nbformat.v4.new_code_cell("import warnings", metadata=cell_metadata)
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text=STDERR)]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Page"), cell])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    source = tmp_path / "src"
    source.mkdir()
    nbformat.write(notebook, source / "index.ipynb")
    (source / "conf.py").write_text('extensions = ["myst_nb"]\nnb_execution_mode = "off"\n', encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", "-D", f"nb_output_stderr={stderr_setting()}"]
        + [str(source), str(tmp_path / "html")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    page = tmp_path / "html" / "index.html"
    return out.returncode, out.stdout + out.stderr, page.read_text(encoding="utf-8") if page.exists() else ""


def test_a_cell_that_writes_to_stderr_fails_the_strict_build_and_is_not_published(tmp_path):
    code, printed, page = build_one_page(tmp_path, {})
    assert code != 0 and "stderr was found in the cell outputs" in printed, printed
    assert "something the reader should never see" not in page


def test_a_cell_that_means_to_show_its_stderr_says_so(tmp_path):
    code, printed, page = build_one_page(tmp_path, {"mystnb": {"output_stderr": "show"}})
    assert code == 0, printed
    assert "something the reader should never see" in page
