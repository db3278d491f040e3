"""The strict build of the book, as CI makes it: ``python -m book_build.strict_build`` (``make book-strict``).

``jupyter-book build -W -n --keep-going``: warnings are errors, every one of them listed. The build runs only when
the HTML is stale (``stale_pages``): a page is older than its source, the book's configuration or its build code
(``build_code``); the book's own ``_static/`` files differ from what was copied; or the learner-facing code the
notebooks import differs from what the last finished build executed (``learner_sources``). The outcome (return
code, output, seconds) is kept in ``_build/strict-build.json``: the tests of the built book (tests/test_book.py, the
browser tests) read it and the pages, and never build. ``make test`` makes this build before pytest starts.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

from book_build import learner_sources

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
OUTCOME = ROOT / "_build" / "strict-build.json"  # {"returncode", "stdout", "stderr", "seconds"} of the last build


def toc_pages() -> list[str]:
    """Every page of the table of contents, e.g. 'intro', 'chapters/01_order_problem'."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]
    for part in toc.get("parts", []):
        pages += [entry["file"] for entry in part["chapters"]]
    return pages


def toc_parts() -> list[list[str]]:
    """The pages of each part of the table of contents, in order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [[entry["file"] for entry in part["chapters"]] for part in toc.get("parts", [])]


def build_code() -> list[Path]:
    """The files of ``book_build/`` the build runs: the extension ``_config.yml`` loads (``book_assets``), what it
    imports, at any depth, and each such module's assets of the same name (``math_prerender.js``). The modules that
    only read or serve the built book (this one, the visits, the PDF's printer) are not among them: an edit there
    leaves the pages current."""
    folder = ROOT / "book_build"
    seen, todo = set(), ["book_assets"]
    while todo:
        name = todo.pop()
        if name in seen or not (folder / f"{name}.py").exists():
            continue
        seen.add(name)
        for node in ast.walk(ast.parse((folder / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "book_build":
                todo += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("book_build."):
                todo.append(node.module.split(".")[1])
    return sorted(path for path in folder.iterdir() if path.stem in seen and path.is_file())


def _source(page: str) -> Path | None:
    for suffix in (".ipynb", ".md"):
        if (ROOT / f"{page}{suffix}").exists():
            return ROOT / f"{page}{suffix}"
    return None


def stale_pages() -> list[str]:
    """Pages whose HTML is missing or older than their source, the configuration or the build code; every page when
    the build code, the book's own ``_static/`` files or the learner-facing code changed since the last build."""
    watched = [ROOT / "_config.yml", ROOT / "_toc.yml", *build_code()]
    config = max(path.stat().st_mtime for path in watched if path.exists())
    if learner_sources.code_changed_since_build(ROOT):
        return toc_pages()
    stale = []
    for page in toc_pages():
        html, source = HTML / f"{page}.html", _source(page)
        if not html.exists() or max(config, source.stat().st_mtime if source else 0) > html.stat().st_mtime:
            stale.append(page)
    for path in (ROOT / "_static").rglob("*"):
        built = HTML / "_static" / path.relative_to(ROOT / "_static")
        if path.is_file() and (not built.exists() or built.read_bytes() != path.read_bytes()):
            return toc_pages()
    return stale


def outcome() -> dict | None:
    """The outcome of the last strict build if the HTML is current (no page stale), else None."""
    if not OUTCOME.exists() or stale_pages():
        return None
    return json.loads(OUTCOME.read_text())


def build() -> dict:
    """Build the book strictly unless the HTML is current; the build's outcome, with ``built_now``."""
    stale = stale_pages()
    if OUTCOME.exists() and not stale:
        return {**json.loads(OUTCOME.read_text()), "built_now": False}
    jb = Path(sys.executable).parent / "jupyter-book"
    # every page stale (the configuration, the build code or the learner-facing code changed): every page is
    # written again (--all), as Sphinx would otherwise skip the pages whose own source did not change (notebooks
    # still come from the execution cache unless the learner-facing code changed)
    everything = ["--all"] if set(stale) >= set(toc_pages()) else []
    start = time.monotonic()
    result = subprocess.run(
        [str(jb), "build", str(ROOT), "--builder", "html", "-W", "-n", "--keep-going", *everything],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    done = {
        "returncode": result.returncode,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "seconds": round(time.monotonic() - start, 1),
    }
    OUTCOME.parent.mkdir(parents=True, exist_ok=True)
    OUTCOME.write_text(json.dumps(done))
    return {**done, "built_now": True}


def main() -> int:
    result = build()
    if not result["built_now"]:
        print(f"strict build: current ({len(toc_pages())} pages), not rebuilt")
    elif result["returncode"] == 0:
        print(f"strict build: {len(toc_pages())} pages built without a warning in {result['seconds']:.0f} s")
    else:
        print(result["stdout"][-6000:], result["stderr"][-6000:], sep="\n", file=sys.stderr)
        print(f"strict build: FAILED (exit {result['returncode']}), every warning above", file=sys.stderr)
    return result["returncode"]


if __name__ == "__main__":
    sys.exit(main())
