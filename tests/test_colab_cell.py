"""Every notebook starts (first code cell) with the Colab install cell, and that cell
names exactly the repository of _config.yml, so the two cannot drift apart."""

import re
import sys
import tomllib
import types
from pathlib import Path

import nbformat
import pytest
import yaml

import nbhygiene

ROOT = Path(__file__).resolve().parent.parent
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
REPOSITORY = CONFIG["repository"]["url"]
BRANCH = CONFIG["repository"].get("branch", "main")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
NOTEBOOKS = nbhygiene.notebooks([ROOT / "chapters", ROOT / "appendix", ROOT / "exercises", ROOT / "solutions"])
URL = re.compile(r"""https?://[^\s"'<>)]+""")


def code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def run_cell(source, on_colab):
    """Execute the cell with a recording get_ipython; return the magics it ran."""
    calls = []
    shell = types.SimpleNamespace(run_line_magic=lambda *args: calls.append(args))
    saved = sys.modules.pop("google.colab", None)
    if on_colab:
        sys.modules["google.colab"] = types.ModuleType("google.colab")
    try:
        exec(compile(source, "<colab cell>", "exec"), {"get_ipython": lambda: shell})
    finally:
        sys.modules.pop("google.colab", None)
        if saved is not None:
            sys.modules["google.colab"] = saved
    return calls


def test_config_names_the_repository_and_launch_buttons():
    assert REPOSITORY.startswith("https://github.com/") and not REPOSITORY.endswith((".git", "/"))
    buttons = CONFIG["launch_buttons"]
    assert buttons["binderhub_url"] == "https://mybinder.org"
    assert buttons["colab_url"] == "https://colab.research.google.com"


def test_there_are_notebooks_in_all_four_folders():
    assert {p.parent.name for p in NOTEBOOKS} == {"chapters", "appendix", "exercises", "solutions"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_first_code_cell_installs_this_repository_on_colab_only(path):
    cells = code_cells(path)
    first = cells[0].source
    named = [url.removesuffix(f"@{BRANCH}") for url in URL.findall(first)]
    assert named == [REPOSITORY], (
        f"{path}: the first code cell must name exactly {REPOSITORY} (from _config.yml), once; it names {named}")
    assert run_cell(first, on_colab=False) == [], "the cell must do nothing outside Colab"
    assert run_cell(first, on_colab=True) == [
        ("pip", f'install -q "{PROJECT} @ git+{REPOSITORY}@{BRANCH}"')]
    for cell in cells[1:]:
        assert not re.search(r"pip\s+install", cell.source), f"{path}: only the Colab cell may install packages"
