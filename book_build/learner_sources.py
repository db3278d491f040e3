"""The learner-facing code: the files of the course's wheel, what the book's notebooks import, and their digest.

The book's execution cache (``book_assets``), the practice kit (``book_kit``) and the tests' view of a stale build
key on the digest: a change in ``posenc``, the grader or an explorer means every notebook's outputs are stale.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def learner_code(root: Path = ROOT) -> list[Path]:
    """The files of the course's installable distribution: what the notebooks import.

    Read from ``pyproject.toml`` (``py-modules``, the packages listed or found under ``package-dir``,
    their ``package-data`` patterns), so the list is the wheel's and cannot drift from it:
    ``src/posenc/*.py``, ``src/grading/**``, ``src/posenc_course/*.py`` and its package data (``*.js``, ``*.css``)
    (tests/test_wheel.py checks the wheel holds exactly these). The book's build code and the
    maintainer tools are not in it.
    """
    from setuptools import find_namespace_packages, find_packages

    setup = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    base = root / setup.get("package-dir", {}).get("", ".")
    files = [base / f"{module}.py" for module in setup.get("py-modules", [])]
    packages = setup.get("packages", [])
    if isinstance(packages, dict):  # [tool.setuptools.packages.find]
        find = packages.get("find", {})
        finder = find_namespace_packages if find.get("namespaces", True) else find_packages
        where = root / find.get("where", [setup.get("package-dir", {}).get("", ".")])[0]
        packages = finder(where=str(where), include=find.get("include", ["*"]), exclude=find.get("exclude", ()))
        base = where
    data = setup.get("package-data", {})
    for package in packages:
        folder = base / package.replace(".", "/")
        files += folder.glob("*.py")
        for pattern in data.get(package, []) + data.get("*", []):
            files += folder.glob(pattern)
    return sorted(set(files))


def sources_digest(root: Path = ROOT) -> str:
    """A digest of the learner-facing code (``learner_code``): names and contents."""
    digest = hashlib.sha256()
    for path in learner_code(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_stamp(root: Path, cache_path: str | None = None) -> Path:
    """The file next to the execution cache that holds ``sources_digest`` of the last finished build."""
    return (root / (cache_path or "_build/.jupyter_cache")).parent / ".jupyter_cache.src-digest"


def code_changed_since_build(root: Path = ROOT, cache_path: str | None = None) -> bool:
    """True when the learner-facing code differs from what the last finished build executed."""
    stamp = cache_stamp(root, cache_path)
    return not stamp.exists() or stamp.read_text() != sources_digest(root)
