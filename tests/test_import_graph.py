"""No import circles inside the packages the maintainers edit: a module that needs another imports it, never the
other way round as well (deferred imports inside functions count: they are a circle with extra steps)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"book_build": ROOT / "book_build", "grading": ROOT / "src" / "grading", "tools": ROOT / "tools"}


def imports_within(package: str, folder: Path) -> dict[str, set[str]]:
    """For each module of ``package`` (a dotted name rooted at ``folder``), the modules of ``package`` it imports
    where it runs (inside functions too), not for type checkers only (``if TYPE_CHECKING:``). ``from grading import
    runner`` imports the module grading.runner; the package itself is counted only for a name that is not a module
    of it."""
    modules = {
        ".".join((package, *path.relative_to(folder).with_suffix("").parts)).removesuffix(".__init__"): path
        for path in folder.rglob("*.py")
    }
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                node.body = []
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's own package
                    parts = here.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                named = {f"{base}.{alias.name}" for alias in node.names}
                found |= named if named <= set(modules) else named | {base}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected group of more than one module (Tarjan's algorithm), sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_scan_finds_a_planted_circle(tmp_path):
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "a.py").write_text("from pkg import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from . import c\n")
    (tmp_path / "c.py").write_text("import pkg.a\n")
    (tmp_path / "d.py").write_text("from pkg.a import x\n")
    (tmp_path / "e.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import d\n")
    (tmp_path / "f.py").write_text("from pkg import e\n")  # the package's module e, not the package
    assert circles(imports_within("pkg", tmp_path)) == [["pkg.a", "pkg.b", "pkg.c"]]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_circle(package):
    assert circles(imports_within(package, PACKAGES[package])) == []


@pytest.mark.parametrize("folder", ["book_build", "tools", "src"])
def test_nothing_outside_the_tests_imports_them(folder):
    """The tools, the book's build and the course use what the tests use, never the other way round."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names if n == "tests" or n.startswith("tests.")]
    assert found == []
