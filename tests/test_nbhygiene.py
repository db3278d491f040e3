"""Notebooks are stored clean; the checker itself catches dirt."""

import json
from pathlib import Path

import nbformat
import pytest

from tools import nbhygiene

ROOT = Path(__file__).resolve().parent.parent
STORED = nbhygiene.notebooks([ROOT / "chapters", ROOT / "appendix", ROOT / "exercises", ROOT / "solutions"])


def test_there_are_notebooks():
    assert {p.parent.name for p in STORED} == {"chapters", "appendix", "exercises", "solutions"}


@pytest.mark.parametrize("path", STORED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_stored_notebook_is_clean(path):
    issues = nbhygiene.stored(path)[1]
    assert not issues, f"{path} is not clean ({issues}); run: python -m tools.nbhygiene clean {path}"


def dirty_notebook():
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"state": {}}
    cell = nbformat.v4.new_code_cell("print(1)")
    cell.outputs = [nbformat.v4.new_output("stream", text="1\n")]
    cell.execution_count = 3
    cell.metadata["collapsed"] = True
    cell.metadata["tags"] = ["keep-me"]
    nb.cells.append(cell)
    return nb


def test_problems_lists_each_kind_of_dirt():
    issues = nbhygiene.problems(dirty_notebook())
    text = " ".join(issues)
    assert "widgets" in text and "stored output" in text and "execution_count 3" in text and "collapsed" in text
    assert len(issues) == 4


def test_clean_fixes_everything_and_keeps_tags_and_source():
    nb = nbhygiene.clean(dirty_notebook())
    assert nbhygiene.problems(nb) == []
    assert nb.cells[0].source == "print(1)"
    assert nb.cells[0].metadata["tags"] == ["keep-me"]


def test_clean_gives_a_cell_without_an_id_a_new_one():
    nb = dirty_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell("text"))
    del nb.cells[0]["id"]
    kept = nb.cells[1].id
    nbhygiene.clean(nb)
    assert nb.cells[0].id and nb.cells[0].id != kept and nb.cells[1].id == kept
    nbformat.validate(nb)


def test_figure_alt_text_metadata_is_kept():
    nb = dirty_notebook()
    nb.cells[0].metadata["mystnb"] = {"image": {"alt": "A line rising from left to right."}}
    nbhygiene.clean(nb)
    assert nbhygiene.problems(nb) == []
    assert nb.cells[0].metadata["mystnb"] == {"image": {"alt": "A line rising from left to right."}}


def test_command_line(tmp_path, capsys):
    path = tmp_path / "dirty.ipynb"
    nbformat.write(dirty_notebook(), path)
    assert nbhygiene.main(["check", str(tmp_path)]) == 1
    assert "stored output" in capsys.readouterr().out
    assert nbhygiene.main(["clean", str(path)]) == 0
    assert nbhygiene.main(["check", str(path)]) == 0
    assert nbhygiene.main([]) == 2


def test_a_cell_stored_without_an_id_is_found_and_given_one(tmp_path, capsys):
    path = tmp_path / "old.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("1")])
    data = json.loads(nbformat.writes(nb))
    del data["cells"][1]["id"]  # as a hand-edited notebook may be stored
    path.write_text(json.dumps(data))
    assert nbhygiene.stored(path)[1] == ["cell 1: has no id"]
    assert nbhygiene.main(["check", str(path)]) == 1
    assert "cell 1: has no id" in capsys.readouterr().out
    assert nbhygiene.main(["clean", str(path)]) == 0
    ids = [cell.get("id") for cell in json.loads(path.read_text())["cells"]]
    assert all(ids) and len(set(ids)) == 2 and ids[0] == data["cells"][0]["id"]
    assert nbhygiene.main(["check", str(path)]) == 0
