"""Notebooks are stored clean: as nbstripout, configured for the course, leaves them, and passing the checks it
cannot make (tools/nbhygiene.py); the checker itself catches dirt."""

import copy
import json
from pathlib import Path

import nbformat
import nbstripout
import pytest

from tools import colab_cell, nbhygiene

ROOT = Path(__file__).resolve().parent.parent
STORED = nbhygiene.notebooks([ROOT / "chapters", ROOT / "appendix", ROOT / "exercises", ROOT / "solutions"])


def test_there_are_notebooks():
    assert {p.parent.name for p in STORED} == {"chapters", "appendix", "exercises", "solutions"}


@pytest.mark.parametrize("path", STORED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_stored_notebook_is_clean(path):
    """nbstripout changes nothing in it, every cell is stored with an id, and no cell opts out of stripping."""
    nb = nbformat.read(path, as_version=4)
    after = nbstripout.strip_output(copy.deepcopy(nb), **nbhygiene.strip_options(nb))
    own = nbhygiene.missing_ids(path) + nbhygiene.opt_outs(nb)
    fix = f"run: python -m tools.nbhygiene clean {path.relative_to(ROOT)}"
    assert after == nb, f"{path} is not what nbstripout leaves ({nbhygiene.problems(nb)}); {fix}"
    assert not own, f"{path}: {own}; {fix}"


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


def test_every_metadata_key_outside_the_allowlists_is_stripped():
    """Keys nbstripout does not strip by itself (Colab's, VS Code's) go too: the allowlists name them to it."""
    nb = dirty_notebook()
    nb.metadata["colab"] = {"provenance": []}
    nb.metadata["vscode"] = {"interpreter": {"hash": "0"}}
    nb.cells[0].metadata["executionInfo"] = {"elapsed": 5}
    nb.cells.append(nbformat.v4.new_markdown_cell("text", metadata={"id": "colab-id"}))
    assert "metadata.colab" in nbhygiene.strip_options(nb)["extra_keys"]
    nbhygiene.clean(nb)
    assert set(nb.metadata) <= nbhygiene.NOTEBOOK_METADATA
    assert nb.cells[0].metadata == {"tags": ["keep-me"]} and nb.cells[1].metadata == {}
    assert nbhygiene.problems(nb) == []


def test_the_colab_cells_metadata_is_kept():
    """The Colab install cell's form and hidden input (tools/colab_cell.py) survive nbstripout."""
    nb = dirty_notebook()
    nb.cells[0].metadata = nbformat.from_dict(copy.deepcopy(colab_cell.METADATA))
    nbhygiene.clean(nb)
    assert nb.cells[0].metadata == colab_cell.METADATA
    assert nb.cells[0].metadata["jupyter"]["source_hidden"] is True


def test_cell_ids_are_kept_not_renumbered():
    nb = dirty_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell("text"))
    ids = [cell.id for cell in nb.cells]
    nbhygiene.clean(nb)
    assert [cell.id for cell in nb.cells] == ids


@pytest.mark.parametrize("opt_out", ["tag", "metadata"])
def test_a_cell_that_opts_out_of_stripping_is_found_and_stripped(opt_out):
    """nbstripout keeps the outputs of a cell tagged or marked keep_output; the course stores none."""
    nb = dirty_notebook()
    if opt_out == "tag":
        nb.cells[0].metadata["tags"].append("keep_output")
    else:
        nb.cells[0].metadata["keep_output"] = True
    assert nbstripout.strip_output(copy.deepcopy(nb), **nbhygiene.STRIP).cells[0].outputs  # alone, it keeps them
    issues = nbhygiene.problems(nb)
    assert any("opts out of stripping" in issue for issue in issues), issues
    nbhygiene.clean(nb)
    assert nb.cells[0].outputs == [] and nb.cells[0].metadata == {"tags": ["keep-me"]}
    assert nbhygiene.problems(nb) == []


def test_an_init_cell_loses_its_outputs_too():
    nb = dirty_notebook()
    nb.cells[0].metadata["init_cell"] = True
    nbhygiene.clean(nb)
    assert nb.cells[0].outputs == [] and "init_cell" not in nb.cells[0].metadata
