"""The course as a reader of the built book gets it: the practice kit, a fresh virtual environment, no repository.

The kit is made by the function the book build calls (``book_kit.write_downloads``: the wheel built from
``pyproject.toml`` and ``src/``, the notebooks, a README), unpacked into a folder outside the repository,
and its README followed: the pip lines of its Linux block run as written, in their order (PyTorch's CPU
build, then the course wheel with the ``lab`` extra; pip's cache reused, no constraints file), then PyTables
(whose import name ``tables`` one of our modules used to take). The CPU build CI pins is linked in before
(``tests.support.learner_env``), as the block's PyTorch line would install it from PyTorch's index, which this
machine cannot reach: that line then finds it installed and keeps it. Everything then runs
with that environment's Python, from the kit's folder, with no ``PYTHONPATH``, no user site-packages and
Jupyter's paths in the temporary folder: every learner-facing module (the list read from the wheel) imports,
``tables`` is PyTables, each explorer is created with its static HTML twin, and the kit's first exercise
notebook (one question answered) and one of the kit's chapters execute with nbclient, each kernel in its
notebook's folder as Jupyter starts it, the answer graded correct.

Slow (pip installs JupyterLab), so in the full tier only.
"""

from __future__ import annotations

import json
import re
import shlex
import time
import tomllib
import zipfile
from pathlib import Path

import pytest

from book_build import book_kit
from tests.support import learner_env

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PYTABLES = "tables==3.11.1"  # PyTables, preinstalled on Colab; this release has a wheel for Python 3.11 here
EXERCISE = "exercises/01_order_problem_exercises.ipynb"  # in the kit, as in the repository
SOLUTION = "solutions/01_order_problem_solutions.ipynb"
CHAPTER = "chapters/02_sinusoidal_formula.ipynb"
TOP_LEVEL = {"posenc", "grading", "posenc_course"}  # what the wheel may put into site-packages


def readme_pip_lines(readme: str) -> list[list[str]]:
    """The pip lines of the kit README's Linux block, in its order (PyTorch, then the course), as pip arguments."""
    lines = [shlex.split(line) for line in learner_env.copy_blocks(readme)["Linux"] if "pip install" in line]
    assert all(words[:4] == ["python", "-m", "pip", "install"] for words in lines), lines
    return [words[4:] for words in lines]


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    """The kit unpacked, its README followed in a fresh venv; the venv's Python, a clean environment, timings."""
    tmp = tmp_path_factory.mktemp("wheel")
    timings = {}
    start = time.perf_counter()
    wheel, kit = book_kit.write_downloads(tmp / "book")  # what the book hands out under _downloads/
    with zipfile.ZipFile(kit) as z:
        z.extractall(tmp)
    home = tmp / book_kit.KIT  # the reader's folder: outside the repository
    timings["build the wheel and the kit"] = time.perf_counter() - start

    start = time.perf_counter()
    venv = tmp / "venv"
    python = learner_env.create(venv)
    install = readme_pip_lines((home / "README.md").read_text())
    for line in install:  # torch (already there: pip keeps it), then the course
        learner_env.pip(python, "install", "--quiet", "--no-compile", *line, cwd=home)
    learner_env.pip(python, "install", "--quiet", "--no-compile", PYTABLES, cwd=home)
    timings["fresh venv + the README's pip install"] = time.perf_counter() - start
    env = learner_env.clean_env(venv, tmp)
    yield {
        "wheel": home / wheel.name,
        "venv": venv,
        "python": python,
        "home": home,
        "env": env,
        "timings": timings,
        "install": install,
    }
    print("\nwheel test timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))


def in_venv(learner, script: str, *args) -> dict:
    """Run a script with the venv's Python in the learner's folder; it prints one JSON object."""
    return learner_env.script(learner["python"], script, *args, cwd=learner["home"], env=learner["env"])


def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return [n for n in z.namelist() if ".dist-info/" not in n]


def wheel_modules(wheel: Path) -> list[str]:
    """Every module of the wheel, by import name (packages by their __init__)."""
    names = []
    for n in wheel_names(wheel):
        if n.endswith(".py"):
            parts = n[:-3].split("/")
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(names)


def under(path: str, folder: Path) -> bool:
    assert Path(path).is_absolute(), path  # a path from the venv's processes, whose folder is not ours
    return Path(path).resolve().is_relative_to(folder.resolve())


def test_the_wheel_holds_the_learner_room_and_nothing_else(learner):
    names = wheel_names(learner["wheel"])
    data = ["posenc_course/explorers.js", "posenc_course/quizzes.js", "posenc_course/quizzes.css"]
    assert set(data) <= set(names)
    with zipfile.ZipFile(learner["wheel"]) as z:
        for name in data:
            assert z.read(name) == (SRC / name).read_bytes(), name
    assert {n.split("/")[0].removesuffix(".py") for n in names} == TOP_LEVEL
    in_src = sorted(
        str(p.relative_to(SRC))
        for p in SRC.rglob("*")
        if p.is_file()
        and p.suffix in {".py", ".js", ".css"}
        and ".egg-info" not in str(p)
        and "__pycache__" not in p.parts
    )
    assert sorted(names) == in_src, "the wheel and src/ differ (a package or a data file left out?)"
    with zipfile.ZipFile(learner["wheel"]) as z:
        (metadata,) = (n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        requires = re.findall(r"^Requires-Dist: (.+)$", z.read(metadata).decode(), re.MULTILINE)
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert set(declared) <= {r.replace(" ", "") for r in requires}


IMPORT_PROBE = r"""
import importlib, inspect, json, sys
from pathlib import Path

modules = json.loads(sys.argv[1])
files = {name: importlib.import_module(name).__file__ for name in modules}

import tables  # PyTables, installed next to the course
pytables = {"file": tables.__file__, "version": tables.__version__, "open_file": callable(tables.open_file)}
from posenc_course.tables import Table
table = Table([[1, 0.5], [2, 0.25]], headers=["p", "value"], caption="a check")

from posenc_course import explorers
made = {}
for name, cls in vars(explorers).items():
    if inspect.isclass(cls) and issubclass(cls, explorers.Explorer) and cls is not explorers.Explorer:
        widget = cls()
        static = widget.static_html()
        made[name] = {"kind": widget.kind, "values": widget.values(), "static_len": len(static),
                      "has_module": explorers.BROWSER_MODULE.read_text() in static,
                      "has_spec": 'data-spec="' in static, "bundle": sorted(widget._repr_mimebundle_())}
from posenc_course import quizzes
quiz_html = quizzes.check_yourself("01")._repr_html_()
quiz = {"files": [str(quizzes.STYLE), str(quizzes.SCRIPT)],
        "inlined": all(p.read_text().strip() in quiz_html for p in (quizzes.STYLE, quizzes.SCRIPT))}
# every module's file (torch.ops and torch.classes have a bare name as __file__, not a path: left out)
loaded = sorted({f for f in (getattr(m, "__file__", None) for m in list(sys.modules.values()))
                 if f and Path(f).is_absolute()})
print(json.dumps({"files": files, "pytables": pytables, "table_html": table._repr_html_(), "table_text": repr(table),
                  "explorers": made, "js": str(explorers.BROWSER_MODULE), "quiz": quiz, "loaded": loaded,
                  "sys_path": sys.path, "cwd": str(Path.cwd()), "executable": sys.executable, "prefix": sys.prefix}))
"""


def test_every_learner_module_imports_from_the_venv_outside_the_repository(learner):
    modules = wheel_modules(learner["wheel"])
    assert {"posenc", "grading", "grading.bank", "posenc_course.explorers", "posenc_course.tables"} <= set(modules)
    got = in_venv(learner, IMPORT_PROBE, json.dumps(modules))
    site = Path(got["prefix"])
    assert Path(got["prefix"]).resolve() == learner["venv"].resolve()
    assert set(got["files"]) == set(modules)
    for name, file in got["files"].items():
        assert under(file, site), f"{name} imported from {file}, not from the venv"
    inside = [f for f in got["loaded"] if under(f, REPO)]
    assert not inside, f"modules loaded from the repository: {inside[:5]}"
    assert not [p for p in got["sys_path"] if p and under(p, REPO)]
    assert not under(got["cwd"], REPO)

    # `tables` is PyTables, and ours is reachable only by its full name
    assert got["pytables"]["version"] == PYTABLES.split("==")[1] and got["pytables"]["open_file"]
    assert Path(got["pytables"]["file"]).parent.name == "tables" and under(got["pytables"]["file"], site)
    assert "<table" in got["table_html"] and "a check" in got["table_html"] and "0.25" in got["table_text"]

    # each explorer, and its static twin carrying explorers.js (read from the installed package data)
    assert under(got["js"], site) and got["js"].endswith("posenc_course/explorers.js")
    assert len(got["explorers"]) >= 5, got["explorers"].keys()
    for name, made in got["explorers"].items():
        assert made["kind"] and made["values"], name
        assert made["has_module"] and made["has_spec"], f"{name}: the static HTML lacks explorers.js or its spec"
        assert "text/html" in made["bundle"] and "application/vnd.jupyter.widget-view+json" in made["bundle"], name

    # a quiz, its style sheet and script inlined from the installed package data
    assert [Path(f).name for f in got["quiz"]["files"]] == ["quizzes.css", "quizzes.js"]
    assert all(under(f, site) for f in got["quiz"]["files"]) and got["quiz"]["inlined"]


def test_the_readme_installs_the_wheel_beside_it_with_jupyterlab(learner):
    cpu = ["--index-url", "https://download.pytorch.org/whl/cpu"]
    assert learner["install"] == [["torch", *cpu], [f"{learner['wheel'].name}[lab]"]]
    installed = learner_env.freeze(learner["python"])
    assert installed["posenc-course"] == tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert "jupyterlab" in installed and "ipykernel" in installed


def test_the_kits_exercise_and_chapter_execute_with_the_installed_course(learner):
    home = learner["home"]
    exercise = home / EXERCISE
    questions = learner_env.answered_exercise(exercise, home / SOLUTION, exercise)
    assert len(questions) >= 3, questions
    chapter = home / CHAPTER
    assert chapter.read_bytes() == (REPO / CHAPTER).read_bytes()
    nb = json.loads(chapter.read_text())
    nb["cells"].append(learner_env.where_from_cell())
    chapter.write_text(json.dumps(nb))

    got = in_venv(learner, learner_env.RUN_NOTEBOOKS, EXERCISE, CHAPTER)
    for path, ran in got["notebooks"].items():
        assert ran["errors"] == [], f"{path}: {ran['errors']}"
        where = learner_env.where_from(ran["stream"])
        assert Path(where["executable"]).parent == learner["venv"] / "bin", where  # the venv's kernel
        assert all(under(f, learner["venv"]) for f in where["files"]), where

    feedback = got["notebooks"][EXERCISE]["stream"]
    assert f"{questions[0]} ✓ correct" in feedback
    for q in questions[1:]:
        assert re.search(rf"^{re.escape(q)} · not answered yet", feedback, re.MULTILINE), (q, feedback)
    chapter_number = questions[0].split(".")[0]
    assert f"Chapter {chapter_number}: 1 of {len(questions)} solved, 0 attempted," in feedback

    ran = got["notebooks"][CHAPTER]
    # figures are SVG (posenc_course.plotting), explorers widgets
    assert "image/svg+xml" in ran["mime"] and "application/vnd.jupyter.widget-view+json" in ran["mime"]
    assert 'class="posenc-explorer"' in ran["html"]  # the explorer's static twin, with explorers.js inline
