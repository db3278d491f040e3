"""pyproject.toml declares what the learner-facing code imports, pinned as requirements.txt pins it (issue 17).

Fast checks of the declarations; tests/test_wheel.py (slow) installs the wheel and proves they suffice.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
OURS = {"posenc", "grading", "posenc_course"}
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict:
    found = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line.strip())
        if match:
            found[canonical(match[1])] = match[2]
    return found


def declared() -> dict:
    """{distribution: version} over the dependencies and every extra (self-references left out)."""
    found = {}
    for spec in PROJECT["dependencies"] + [s for extra in PROJECT["optional-dependencies"].values() for s in extra]:
        if canonical(spec.split("[")[0]) == canonical(PROJECT["name"]):
            continue
        name, sep, version = spec.partition("==")
        assert sep and re.fullmatch(r"[0-9][0-9A-Za-z.+]*", version), f"{spec!r} is not pinned with =="
        found[canonical(name)] = version
    return found


def test_every_declared_pin_is_the_pin_of_requirements_or_constraints():
    environment = pins(REPO / "constraints.txt") | pins(REPO / "requirements.txt")
    wrong = {name: (version, environment.get(name)) for name, version in declared().items()
             if environment.get(name) != version}
    assert not wrong, f"pyproject.toml pin != requirements.txt/constraints.txt pin: {wrong}"


def test_every_direct_requirement_is_declared_in_pyproject():
    missing = set(pins(REPO / "requirements.txt")) - set(declared())
    assert not missing, f"in requirements.txt but in no dependency list or extra of pyproject.toml: {missing}"
    assert re.search(r"^-e \.(\[[a-z,]+\])?$", (REPO / "requirements.txt").read_text(), re.MULTILINE)


def test_the_runtime_dependencies_cover_every_import_of_the_learner_code():
    imported = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imported.add(node.module.split(".")[0])
    third_party = imported - OURS - set(sys.stdlib_module_names) - {"__future__"}
    runtime = {canonical(spec.split("==")[0]) for spec in PROJECT["dependencies"]}
    distributions = packages_distributions()
    undeclared = {name: distributions.get(name) for name in third_party
                  if not {canonical(d) for d in distributions.get(name, [name])} & runtime}
    assert not undeclared, f"imported by src/ but not a runtime dependency in pyproject.toml: {undeclared}"
