"""The course library installed where learners are: beside a Colab-like stack, and at the lowest declared versions.

* **Colab-like.** A fresh venv outside the repository holds what a Colab runtime has preinstalled
  (``learner_env.COLAB``: IPython 7.34, ipywidgets 7.7, numpy 2.0, matplotlib 3.10, an old ipykernel, torch).
  The notebooks' own first cell, the Colab cell (``tools/colab_cell.py``), runs there as on Colab: with no
  wheel uploaded it stops "Run all" with one line; with the kit's wheel next to the notebook it installs it,
  changing none of those packages (``pip list`` before and after), says in one line that no restart is
  needed, and the rest of an exercise notebook (one question answered) and of a chapter notebook executes
  in the same session (nbclient), ``check()`` answering.
* **Lowest versions.** Every runtime dependency of ``pyproject.toml`` at its lower bound (``lowest()``),
  torch excepted: PyPI's torch for Linux is a CUDA build of several GB, and this machine has only the
  CPU build CI pins, so torch is that build (2.13.0), the nearest one that can be installed here. The
  core's and the grader's tests run there with that venv's Python, and an exercise notebook executes.

Slow (pip installs two environments; torch is linked, not unpacked: ``tests.support.learner_env``).
"""

from __future__ import annotations

import json
import re
import time
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import Specifier
from packaging.utils import canonicalize_name

from book_build import book_kit
from tests.support import learner_env
from tools import colab_cell

pytestmark = [pytest.mark.slow, pytest.mark.environments]  # (conftest: its tier starts the second worker)

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
EXERCISE = "02_sinusoidal_formula_exercises.ipynb"
SOLUTION = "02_sinusoidal_formula_solutions.ipynb"
CHAPTER = "chapters/02_sinusoidal_formula.ipynb"

COLAB = [f"{name}=={version}" for name, version in learner_env.COLAB.items()] + [learner_env.TORCH]
KERNEL = [f"{name}=={version}" for name, version in learner_env.KERNEL.items()]

# The notebooks' first cell, made to believe it runs on Colab (a stand-in google.colab imported first)
COLAB_CELL = colab_cell.cell_source(*colab_cell.settings())
ON_COLAB = 'import sys, types\nsys.modules["google.colab"] = types.ModuleType("google.colab")'
NEXT = 'print("the run went on")'
NO_RESTART = "Installed. No restart needed: the install replaced nothing this session had loaded.\n"
# "Run all" of a notebook of the code cells given (JSON), stopping at the first error; prints each cell's outputs
RUN_ALL = r"""
import json, sys
import nbclient, nbformat
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in json.loads(sys.argv[1])])
try:
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3").execute()
except nbclient.exceptions.CellExecutionError:
    pass
print(json.dumps([cell.outputs for cell in nb.cells]))
"""


def lowest() -> list[str]:
    """Every runtime dependency pinned at its lower bound (torch: the build this machine has, see above)."""
    pins = []
    for requirement in map(Requirement, PROJECT["dependencies"]):
        if canonicalize_name(requirement.name) == "torch":
            pins.append(learner_env.TORCH)
            continue
        (low,) = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        pins.append(f"{requirement.name}=={low}")
    return pins


# The core's and the grader's tests, run from the repository against the installed wheel. Left out: the explorers'
# test that reads the book's build code (Sphinx is not a learner's dependency).
LOWEST_TESTS = [
    "tests/test_posenc.py",
    "tests/test_grading.py",
    "tests/test_grading_kinds.py",
    "tests/test_grading_feedback.py",
    "tests/test_grading_store.py",
    "tests/test_explorers.py",
    "tests/test_plotting.py",
    "tests/test_tables.py",
    "tests/test_quizzes.py",
    "--deselect",
    "tests/test_explorers.py::test_book_recognises_a_cell_that_only_displays_an_explorer",
]
# what runs them, at the lock's versions, and Colab's kernel (KERNEL)
TOOLS = ["pytest", "pytest-xdist", "hypothesis", "pyyaml"]


def tool_pins() -> list[str]:
    lock = dict(re.findall(r"^([A-Za-z0-9][\w.-]*)==(\S+)", (REPO / "requirements.txt").read_text(), re.MULTILINE))
    lock = {canonicalize_name(name): version for name, version in lock.items()}
    return [f"{name}=={lock[canonicalize_name(name)]}" for name in TOOLS] + KERNEL


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return book_kit.build_wheel(tmp_path_factory.mktemp("dist"))


def notebooks_run(python: Path, home: Path, env: dict, *, on_colab: bool = False) -> tuple[dict, list[str]]:
    """The exercise (first question answered) and the chapter, executed in ``home``; (results, question ids).
    ``on_colab``: each starts with a cell that imports a stand-in for google.colab, so their first cell (the Colab
    cell) installs the course as it does on Colab."""
    questions = learner_env.answered_exercise(
        REPO / "exercises" / EXERCISE, REPO / "solutions" / SOLUTION, home / EXERCISE
    )
    chapter = home / Path(CHAPTER).name
    chapter.write_bytes((REPO / CHAPTER).read_bytes())
    if on_colab:
        for path in (home / EXERCISE, chapter):
            nb = json.loads(path.read_text())
            nb["cells"].insert(
                0,
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "id": "on-colab",
                    "metadata": {},
                    "outputs": [],
                    "source": ON_COLAB,
                },
            )
            path.write_text(json.dumps(nb))
    got = learner_env.script(python, learner_env.RUN_NOTEBOOKS, EXERCISE, chapter.name, cwd=home, env=env)
    return got["notebooks"], questions


def assert_graded(ran: dict, questions: list[str], venv: Path) -> None:
    assert ran["errors"] == [], ran["errors"]
    where = learner_env.where_from(ran["stream"])
    assert Path(where["executable"]).parent == venv / "bin", where
    assert f"{questions[0]} ✓ correct" in ran["stream"], ran["stream"][-2000:]
    assert f"Chapter {questions[0].split('.')[0]}: 1 of {len(questions)} solved, 0 attempted," in ran["stream"]


def test_the_colab_cell_installs_the_wheel_beside_a_colab_stack_replacing_nothing_and_the_notebooks_run(
    wheel, tmp_path
):
    venv = tmp_path / "colab"
    python = learner_env.create(venv)
    learner_env.pip(python, "install", "--quiet", "--no-compile", *COLAB)
    learner_env.run([python, "-m", "ensurepip"])  # Colab's Python has pip, which the cell runs
    before = learner_env.freeze(python)
    env = learner_env.clean_env(venv, tmp_path)
    home = tmp_path / "home"
    home.mkdir()

    # No wheel uploaded yet: "Run all" stops at the cell, which shows one line (IPython 7's rendering too)
    outputs = learner_env.script(python, RUN_ALL, json.dumps([ON_COLAB, COLAB_CELL, NEXT]), cwd=home, env=env)
    assert outputs[1] == [
        {
            "output_type": "error",
            "ename": "Stopped",
            "evalue": outputs[1][0]["evalue"],
            "traceback": ["Stopped here. " + outputs[1][0]["evalue"]],
        }
    ], outputs[1]
    assert outputs[1][0]["evalue"].startswith("The course library is not installed.") and outputs[2] == []

    # The wheel uploaded (the kit's .whl next to the notebook): the notebooks' own first cell installs it, says so
    # in one line, and the rest of each notebook runs in the same session
    (home / wheel.name).write_bytes(wheel.read_bytes())
    start = time.perf_counter()
    ran, questions = notebooks_run(python, home, env, on_colab=True)
    seconds = time.perf_counter() - start
    after = learner_env.freeze(python)

    changed = {name: (version, after.get(name)) for name, version in before.items() if after.get(name) != version}
    assert not changed, f"installing the course replaced preinstalled packages: {changed}"
    added = sorted(set(after) - set(before))
    assert "posenc-course" in added and "torch" not in added
    print(
        f"\nColab-like stack: the Colab cell installed the wheel, adding {added}; both notebooks ran in {seconds:.0f} s"
    )

    for name in (EXERCISE, Path(CHAPTER).name):
        assert ran[name]["stream"].startswith(NO_RESTART), ran[name]["stream"][:500]
        assert "restart the kernel" not in ran[name]["stream"]  # %pip's note, which contradicted the cell
    assert_graded(ran[EXERCISE], questions, venv)
    chapter = ran[Path(CHAPTER).name]
    assert chapter["errors"] == [], chapter["errors"]
    # figures are SVG; explorers are the panel (sliders and canvas) with their static twin, under ipywidgets 7 too
    assert "image/svg+xml" in chapter["mime"] and "application/vnd.jupyter.widget-view+json" in chapter["mime"]
    assert 'class="posenc-explorer"' in chapter["html"]


def test_the_lowest_declared_versions_pass_the_core_and_grader_tests(wheel, tmp_path):
    venv = tmp_path / "lowest"
    python = learner_env.create(venv)
    pins = lowest()
    learner_env.pip(python, "install", "--quiet", "--no-compile", *pins, *tool_pins())
    learner_env.pip(python, "install", "--quiet", "--no-compile", "--no-deps", wheel)
    installed = learner_env.freeze(python)
    for pin in pins:
        name, version = pin.split("==")
        got = installed[canonicalize_name(name)]
        # (== as pip reads it: 1.25 is 1.25.0, and 2.13.0 admits the build 2.13.0+cpu)
        assert Specifier(f"=={version}").contains(got), f"{name}: {got} installed, the lowest declared is {version}"

    env = learner_env.clean_env(venv, tmp_path)
    done = learner_env.run(
        [
            python,
            "-m",
            "pytest",
            *LOWEST_TESTS,
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not slow",
            "-x",
        ],
        cwd=REPO,
        env=env | {"POSENC_PROGRESS": str(tmp_path / "tests-progress.json")},
        timeout=900,
    )  # the tests' checks are not the learner's, whose notebook runs next
    assert re.search(r"\d+ passed", done.stdout), done.stdout[-2000:]
    print(f"\nlowest versions ({', '.join(pins)}): {done.stdout.strip().splitlines()[-1]}")

    home = tmp_path / "home"
    home.mkdir()
    ran, questions = notebooks_run(python, home, env)
    assert_graded(ran[EXERCISE], questions, venv)
