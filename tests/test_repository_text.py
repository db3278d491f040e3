"""The repository's own text stays true and timeless: comments say why, git says when.

* No tracker numbers in code, comments or docstrings (``issue`` or ``PR`` followed by a number): a comment
  states the reason itself. An upstream bug the code works around is cited by its URL, as the book cites
  bug reports in references.bib.
* Every repository path (``src/...``, ``tools/...``, ``tests/...``, ``book_build/...``, the notebook folders)
  named by the docs, the book's configuration, the Makefile, CI or the comments and docstrings of the code
  exists.

Plain text scans, no build and no import of the scanned code: fast tier.
"""

import ast
import glob
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ["src", "tools", "book_build", "tests", ".ci", ".github", "_static"]
TOP_FILES = [
    "conftest.py",
    "Makefile",
    "pyproject.toml",
    "ruff.toml",
    "README.md",
    "_config.yml",
    "_toc.yml",
    "intro.md",
    "how_to_take_this_course.md",
    "changelog.md",
    "exercises/README.md",
]
TEXT_SUFFIXES = {".py", ".js", ".css", ".yml", ".yaml", ".md", ".toml", ""}

URL = re.compile(r"https?://\S+")
# a tracker's word (issue, PR, pull request, ticket) followed by a number, with or without "#" or "no."; the word
# alone and URLs are fine
TRACKER = re.compile(
    r"\b(?:issues?|PRs?|pull\s+requests?|tickets?)\s*(?:no\.?\s*)?#?\s*\d+"
    # or a row of an issue's table heading a comment: "Row", a number and a colon
    r"|(?-i:\bRow \d+:)",
    re.I,
)
# a path inside the repository, as the docs and comments name it (a glob such as tests/test_browser_*.py too)
PATH = re.compile(
    r"(?<![\w/.$~-])((?:src|tools|book_build|tests|\.ci|\.github|chapters|solutions|exercises|appendix)"
    r"/[\w.*/-]*[\w*])"
)
# placeholders, not paths: a notebook or bank module of any chapter
PLACEHOLDERS = {
    "chapters/NN_topic.ipynb",
    "solutions/NN_topic_solutions.ipynb",
    "exercises/NN_topic_exercises.ipynb",
    "src/grading/bank/chNN.py",
}


def text_files():
    files = [ROOT / name for name in TOP_FILES]
    for folder in FOLDERS:
        files += sorted(
            p
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix in TEXT_SUFFIXES
        )
    return files


def prose(path: Path, text: str) -> str:
    """What a file says to its reader: a Python module's comments and docstrings; any other file whole."""
    if path.suffix != ".py":
        return text
    parts = [tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline) if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            parts.append(ast.get_docstring(node, clean=False) or "")
    return "\n".join(parts)


def tracker_references(text: str) -> list[str]:
    return [m.group(0) for m in TRACKER.finditer(URL.sub("", text))]


def missing_paths(text: str, root: Path = ROOT) -> list[str]:
    """The repository paths ``text`` names that exist neither as named nor with a suffix (a page named
    ``chapters/01_order_problem`` is its notebook)."""
    missing = []
    for name in dict.fromkeys(PATH.findall(text)):
        if name in PLACEHOLDERS:
            continue
        if not (glob.glob(str(root / name)) or glob.glob(str(root / name) + ".*")):
            missing.append(name)
    return missing


FILES = text_files()


def test_the_scan_sees_the_repository():
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"Makefile", "README.md", "src/posenc/__init__.py", ".ci/run", "tests/support/browser.py"} <= names


# The samples are filled in when the tests run (TRACKER_WORDS), so that this file itself holds no reference
TRACKER_WORDS = {"issue": "issue", "Issue": "Issue", "PR": "PR", "pull request": "pull request", "Row": "Row"}


@pytest.mark.parametrize(
    "sample, found",
    [
        ("# see {issue} 10", ["{issue} 10"]),
        ("Row 1 of {Issue} #12 says so", ["{Issue} #12"]),
        ("fixed in {PR} 7; {pull request} #8", ["{PR} 7", "{pull request} #8"]),
        ("the {issue}s tracker; an {issue} of float32 rounding", []),
        ("(https://github.com/pytest-dev/pytest-xdist/{issue}s/1386)", []),
        ("Bug 3 of the zoo: the cosine with its own frequency", []),
        ("# {Row} 6: expected values cannot be changed", ["{Row} 6:"]),
        ("row 0 of an interleaved table alternates", []),
    ],
)
def test_tracker_references_are_recognised(sample, found):
    def fill(text):
        return text.format_map(TRACKER_WORDS)

    assert tracker_references(fill(sample)) == [fill(f) for f in found]


def test_no_tracker_numbers_in_code_or_comments():
    hits = [f"{p.relative_to(ROOT)}: {ref}" for p in FILES for ref in tracker_references(p.read_text("utf-8"))]
    assert not hits, "say why in the comment itself, or cite the upstream report by URL:\n" + "\n".join(hits)


def test_a_stale_path_is_caught():
    assert missing_paths("see `src/posenc/__init__.py`, tests/test_browser_*.py and chapters/01_order_problem") == []
    assert missing_paths("see `src/explorers.js` and tests/conftest.py") == ["src/explorers.js", "tests/conftest.py"]


def test_every_path_the_docs_and_comments_name_exists():
    stale = [f"{p.relative_to(ROOT)}: {name}" for p in FILES for name in missing_paths(prose(p, p.read_text("utf-8")))]
    assert not stale, "paths that do not exist:\n" + "\n".join(stale)


def test_no_environment_or_link_is_tracked():
    """A worktree's link to the shared .venv, or a build folder, committed by accident would replace the real
    folder on checkout; git tracks neither."""
    import subprocess

    tracked = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    links = [line.split("\t", 1)[1] for line in tracked.splitlines() if line.startswith("120000 ")]
    names = [line.split("\t", 1)[1] for line in tracked.splitlines()]
    assert links == [], links
    assert not [n for n in names if n.split("/")[0] in {".venv", "_build", "build", "dist"}]
