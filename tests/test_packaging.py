"""pyproject.toml declares what the learner-facing code imports, as ranges that a learner's stack satisfies.

Fast checks of the declarations. The lock (requirements.txt) is checked current by ``make lock-check``;
tests/test_wheel.py (slow) installs the wheel and proves the declarations suffice,
tests/test_learner_stacks.py installs it beside a Colab-like stack and at the lowest declared versions.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.support import learner_env

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
OURS = {"posenc", "grading", "posenc_course"}
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
RUNTIME = [Requirement(spec) for spec in PROJECT["dependencies"]]


def locked() -> dict[str, Version]:
    """{distribution: version} of the lock, requirements.txt."""
    found = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        if match := re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line):
            found[canonicalize_name(match[1])] = Version(match[2])
    return found


def test_every_runtime_dependency_is_a_range_with_a_lower_bound_not_a_pin():
    for requirement in RUNTIME:
        operators = {spec.operator for spec in requirement.specifier}
        assert ">=" in operators, f"{requirement}: no lower bound (>=)"
        assert not operators & {"==", "===", "~="}, f"{requirement}: pinned; a learner's own version would be replaced"


def test_the_ranges_admit_what_a_colab_runtime_has_preinstalled():
    by_name = {canonicalize_name(r.name): r for r in RUNTIME}
    checked = [name for name in learner_env.COLAB if name in by_name]
    assert {"ipython", "ipywidgets", "numpy", "matplotlib", "traitlets"} <= set(checked)
    for name in checked:
        version = learner_env.COLAB[name]
        assert version in by_name[name].specifier, f"{by_name[name]} excludes Colab's {name} {version}"


def test_the_lock_pins_every_declared_dependency_inside_its_range():
    pins = locked()
    extras = [Requirement(s) for extra in PROJECT["optional-dependencies"].values() for s in extra]
    for requirement in RUNTIME + extras:
        name = canonicalize_name(requirement.name)
        if name == canonicalize_name(PROJECT["name"]):
            continue
        assert name in pins, f"{requirement} is declared but not in the lock (run make lock)"
        assert requirement.specifier.contains(pins[name], prereleases=True), f"lock {pins[name]} outside {requirement}"


def test_the_runtime_dependencies_cover_every_import_of_the_learner_code():
    imported = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imported.add(node.module.split(".")[0])
    third_party = imported - OURS - set(sys.stdlib_module_names) - {"__future__"}
    runtime = {canonicalize_name(r.name) for r in RUNTIME}
    distributions = packages_distributions()
    undeclared = {
        name: distributions.get(name)
        for name in third_party
        if not {canonicalize_name(d) for d in distributions.get(name, [name])} & runtime
    }
    assert not undeclared, f"imported by src/ but not a runtime dependency in pyproject.toml: {undeclared}"


def test_tools_build_code_and_test_helpers_are_packages_of_the_root_not_top_level_modules():
    """tools/, book_build/ and tests/support/ are never installed: they are imported as packages from the
    repository's root (``tools.make_exercises``, ``book_build.icon_fonts``, ``tests.support.book``). No folder of
    theirs is on sys.path, so none of their modules takes a top-level name such as ``support`` or ``benchmarks``."""
    import importlib.util

    on_path = {Path(p).resolve() for p in sys.path if p}
    for folder in (REPO / "tools", REPO / "book_build", REPO / "tests", REPO / "tests" / "support"):
        assert (folder / "__init__.py").is_file(), f"{folder} is not a package"
        assert folder not in on_path, f"{folder} is on sys.path"
        for module in sorted(folder.glob("*.py")):
            if module.stem != "__init__":
                assert importlib.util.find_spec(module.stem) is None, f"{module.stem} is importable at the top level"
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["pythonpath"] == ["."]
