"""The course library installed where learners are: beside a Colab-like stack, and at the lowest declared versions.

* **Colab-like.** A fresh venv outside the repository holds what a Colab runtime has preinstalled
  (``learner_env.COLAB``: IPython 7.34, ipywidgets 7.7, numpy 2.0, matplotlib 3.10, an old ipykernel, torch).
  Installing the course wheel as the notebooks' first cell does (``pip install <wheel>``, no extra)
  must change none of those packages (``pip list`` before and after); then an exercise notebook (one
  question answered) and a chapter notebook execute there with nbclient, ``check()`` answering.
* **Lowest versions.** Every runtime dependency of ``pyproject.toml`` at its lower bound (``lowest()``),
  torch excepted: PyPI's torch for Linux is a CUDA build of several GB, and this machine has only the
  CPU build CI pins, so torch is that build (2.13.0), the nearest one that can be installed here. The
  core's and the grader's tests run there with that venv's Python, and an exercise notebook executes.

Slow (pip installs two environments; torch is linked, not unpacked: ``tests.support.learner_env``).
"""

from __future__ import annotations

import re
import time
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import Specifier
from packaging.utils import canonicalize_name
from tests.support import learner_env

from book_build import book_kit

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
EXERCISE = "02_sinusoidal_formula_exercises.ipynb"
SOLUTION = "02_sinusoidal_formula_solutions.ipynb"
CHAPTER = "chapters/02_sinusoidal_formula.ipynb"

COLAB = [f"{name}=={version}" for name, version in learner_env.COLAB.items()] + [learner_env.TORCH]
KERNEL = [f"{name}=={version}" for name, version in learner_env.KERNEL.items()]


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


def notebooks_run(python: Path, home: Path, env: dict) -> tuple[dict, list[str]]:
    """The exercise (first question answered) and the chapter, executed in ``home``; (results, question ids)."""
    questions = learner_env.answered_exercise(
        REPO / "exercises" / EXERCISE, REPO / "solutions" / SOLUTION, home / EXERCISE
    )
    chapter = home / Path(CHAPTER).name
    chapter.write_bytes((REPO / CHAPTER).read_bytes())
    got = learner_env.script(python, learner_env.RUN_NOTEBOOKS, EXERCISE, chapter.name, cwd=home, env=env)
    return got["notebooks"], questions


def assert_graded(ran: dict, questions: list[str], venv: Path) -> None:
    assert ran["errors"] == [], ran["errors"]
    where = learner_env.where_from(ran["stream"])
    assert Path(where["executable"]).parent == venv / "bin", where
    assert f"{questions[0]} ✓ correct" in ran["stream"], ran["stream"][-2000:]
    assert f"Chapter {questions[0].split('.')[0]}: 1 of {len(questions)} solved, 0 attempted," in ran["stream"]


def test_installing_the_wheel_beside_a_colab_stack_replaces_nothing_and_the_notebooks_run(wheel, tmp_path):
    venv = tmp_path / "colab"
    python = learner_env.create(venv)
    learner_env.pip(python, "install", "--quiet", "--no-compile", *COLAB)
    before = learner_env.freeze(python)
    start = time.perf_counter()
    learner_env.pip(python, "install", "--quiet", "--no-compile", wheel)  # what the Colab cell runs
    seconds = time.perf_counter() - start
    after = learner_env.freeze(python)

    changed = {name: (version, after.get(name)) for name, version in before.items() if after.get(name) != version}
    assert not changed, f"installing the course replaced preinstalled packages: {changed}"
    added = sorted(set(after) - set(before))
    assert "posenc-course" in added and "torch" not in added
    print(f"\nColab-like stack: the wheel installed in {seconds:.1f} s, adding {added}")

    home = tmp_path / "home"
    home.mkdir()
    ran, questions = notebooks_run(python, home, learner_env.clean_env(venv, tmp_path))
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
            "-p",
            "no:randomly",
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
