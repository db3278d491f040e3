"""The learner's way in (how_to_take_this_course.md, exercises/README.md) stays true to the repository.

What the pages tell a learner to run must exist: the files they name, the kit and the wheel the book
hands out and the line that installs them, any pip extra, the Python version, the lower bounds they
state, the wheel the Colab cell installs, the grader's functions and statuses. The cross-references must
resolve (the strict build checks them too, but only in the slow tier). The time table is generated
(tools/reading_time.py, tests/test_reading_time.py).
"""

import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import nbformat
import pytest
import yaml

import grading
from book_build import book_kit
from tools import colab_cell

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "how_to_take_this_course.md"
EXERCISES_README = ROOT / "exercises" / "README.md"
DOCS = [PAGE, EXERCISES_README]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def text(path):
    return path.read_text(encoding="utf-8")


def test_the_page_follows_the_introduction_in_the_toc_and_is_linked_from_it():
    toc = yaml.safe_load(text(ROOT / "_toc.yml"))
    assert toc["root"] == "intro"
    assert toc["parts"][0]["chapters"][0]["file"] == PAGE.stem
    assert f"{{doc}}`{PAGE.stem}`" in text(ROOT / "intro.md")


@pytest.mark.parametrize("path", [PAGE, ROOT / "intro.md"], ids=lambda p: p.name)
def test_cross_references_resolve(path):
    pages = [text(page) for page in ROOT.glob("*.md")]
    pages += [
        cell.source
        for folder in ("chapters", "appendix")
        for nb in sorted((ROOT / folder).glob("*.ipynb"))
        for cell in nbformat.read(nb, as_version=4).cells
        if cell.cell_type == "markdown"
    ]
    labels = {label for page in pages for label in re.findall(r"^\((\S+)\)=$", page, re.MULTILINE)}
    for target in re.findall(r"\{doc\}`(?:[^`<]*<)?([^`<>]+)>?`", text(path)):
        assert (ROOT / f"{target}.md").exists() or (ROOT / f"{target}.ipynb").exists(), target
    for label in re.findall(r"\{ref\}`(?:[^`<]*<)?([^`<>]+)>?`", text(path)):
        assert label in labels, label


def test_the_page_installs_the_kits_wheel_and_the_exercises_readme_the_sources():
    assert book_kit.install_command() in text(PAGE)
    assert 'python -m pip install ".[lab]"' in text(EXERCISES_README)
    extra = " ".join(PYPROJECT["project"]["optional-dependencies"]["lab"])
    for package in ["jupyterlab", "ipykernel"]:  # `jupyter lab`, and the kernel VS Code selects
        assert package in extra, package
    for doc in DOCS:
        assert book_kit.TORCH_CPU in text(doc), f"{doc.name}: the CPU build of torch for Linux without a GPU"
        assert "-r requirements.txt" not in text(doc), f"{doc.name}: requirements.txt is the maintainers' lock"


def test_the_page_links_the_kit_and_the_wheel_the_book_hands_out():
    links = re.findall(r'<a href="([^"]+)" download>([^<]+)</a>', text(PAGE))
    assert (f"{book_kit.DOWNLOADS}/{book_kit.KIT_ZIP}", book_kit.KIT_ZIP) in links
    assert (f"{book_kit.DOWNLOADS}/{book_kit.wheel_name()}", book_kit.wheel_name()) in links


def test_the_lower_bounds_the_page_states_are_the_declared_ones():
    names = {"PyTorch": "torch", "numpy": "numpy", "IPython": "ipython", "ipywidgets": "ipywidgets"}
    stated = re.findall(r"(PyTorch|numpy|IPython|ipywidgets) ([\d.]+) or newer", " ".join(text(PAGE).split()))
    assert {name for name, _ in stated} == set(names), stated
    declared = dict(re.match(r"([\w-]+)>=([\d.]+)", spec).groups() for spec in PYPROJECT["project"]["dependencies"])
    for name, version in stated:
        assert declared[names[name]] == version, f"the page says {name} {version}, pyproject {declared[names[name]]}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_files_and_extras_the_page_names_exist(doc):
    body = text(doc)
    named = set(re.findall(r"`([\w./-]+\.(?:ipynb|txt|toml|md|py|yml))`", body))
    named |= set(re.findall(r"-r ([\w./-]+)", body))
    assert named, "the page names no file at all: the pattern is wrong"
    for name in named:
        # (the page speaks of the kit's folder too, which holds the exercise notebooks)
        assert any((folder / name).exists() for folder in (ROOT, doc.parent, ROOT / "exercises")), (
            f"{doc.name} names {name}, which does not exist"
        )
    for link in re.findall(r"\]\((?!https://)([^)#]+)\)", body):  # (a web address is no file of ours)
        assert (doc.parent / link).resolve().exists(), f"{doc.name} links to {link}, which does not exist"
    extras = PYPROJECT["project"].get("optional-dependencies", {})
    for extra in re.findall(r"\.\[([\w,-]+)\]", body):
        assert set(extra.split(",")) <= set(extras), f"{doc.name} names the extra [{extra}]; pyproject has {extras}"
    minimum = re.search(r"Python (\d+\.\d+) or newer", body)[1]
    assert PYPROJECT["project"]["requires-python"] == f">={minimum}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_wheel_the_page_names_is_the_one_the_colab_cell_installs(doc):
    assert f"`{book_kit.wheel_name()}`" in text(doc)
    pattern = re.search(r'glob\("([^"]+)"\)', colab_cell.cell_source())[1]
    assert fnmatch(book_kit.wheel_name(), pattern)
    assert "practice kit" in colab_cell.cell_source() and "practice kit" in text(doc)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_grader_functions_and_statuses_are_the_real_ones(doc):
    assert {"check", "summary", "progress"} <= set(grading.__all__)
    told = re.search(r"question id → (.*?\"untried\")", " ".join(text(doc).split()))[1]
    assert set(re.findall(r'"([^"]+)"', told)) == set(grading.STATES)


def test_the_pages_say_where_progress_is_kept(monkeypatch, tmp_path):
    """The pages name the file the grader writes (grading/store.py, the one module that writes a file), the
    variable that moves it, and the reset."""
    from grading import store

    for path in sorted((ROOT / "src" / "grading").rglob("*.py")):
        found = re.findall(
            r"(?<!os\.)\bopen\(|write_text|write_bytes|json\.dump\(|\bpickle\.dump\(|shelve|sqlite3", text(path)
        )  # (os.open: the worker's /dev/null; cloudpickle.dumps: to the worker's pipe)
        assert not found or path.name == "store.py", f"{path}: {found}: progress is written by grading/store.py only"
    default = store.Store(None)
    assert default.where().startswith("Progress is kept in memory only")
    monkeypatch.delenv("POSENC_PROGRESS", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    home = "~/" + store.default_path().relative_to(tmp_path).as_posix()
    for page in (PAGE, EXERCISES_README):
        words = " ".join(text(page).split())
        assert home in words and "POSENC_PROGRESS" in words and "grading.reset()" in words, page


# What the introduction's "What you will learn" says of each chapter (a phrase of its bullet), by chapter file: a
# new chapter fails the test below until the list says what it teaches
def test_what_you_will_learn_covers_every_chapter():
    """intro.md's "What you will learn" links every chapter, each from the words that say what it teaches."""
    intro = text(ROOT / "intro.md")
    section = intro.split("## What you will learn", 1)[1].split("\n## ", 1)[0]
    linked = re.findall(r"\]\((chapters/[^)#]+)\.ipynb\)", section)
    chapters = sorted(f"chapters/{path.stem}" for path in (ROOT / "chapters").glob("*.ipynb"))
    assert sorted(linked) == chapters, "each chapter linked once from What you will learn, in intro.md"
