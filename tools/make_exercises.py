"""Write exercises/NN_topic_exercises.ipynb from solutions/NN_topic_solutions.ipynb.

    python -m tools.make_exercises          # regenerate; never overwrite a learner's answers
    python -m tools.make_exercises --force  # regenerate even over uncommitted changes
    python -m tools.make_exercises --check  # exit 1 if exercises/ is not what would be generated

In code cells, each region from a "# BEGIN SOLUTION" line to an "# END SOLUTION"
line is replaced by a placeholder that still runs:

* a top-level ``name = ...`` region becomes ``name = ...  # YOUR ANSWER HERE``
  (one line per name the region assigns);
* a top-level ``def f(...)`` / ``class C(...)`` becomes the same header with the
  body ``...  # YOUR CODE HERE`` (a function returning None, an empty class);
* an indented region (a body inside a given header) becomes ``...  # YOUR CODE HERE``;
* anything else (e.g. ``grading.assert_all_correct("02")``) is removed.

A code cell that is one solution region from its first line to its last is the
solution's own check (the code after a "**Why.**" that the answers page shows):
it belongs to no question, so the exercise leaves it out instead of showing
blanks for its names. A question's answer shares its cell with the question's
``check("NN.k", ...)`` call. A cell a learner may run to test their own answer
is shown as it is, after a markdown sentence that calls it an optional check.

In markdown cells, "<!-- BEGIN SOLUTION -->" ... "<!-- END SOLUTION -->" is
removed. A cell left empty is dropped; every other cell keeps its id, so the
output is deterministic. Outputs are stripped.

Each graded question states what its grader accepts in a line of its text
that starts with "**Accepted:**" (numeric, array and coding questions; a
choice question says "Choose one" or "Choose all that apply" instead). That
line is not typed: it is written here, in solutions/ and so in exercises/,
from the question's declaration in the grader's bank
(each question's ``requirement()``), and ``--check`` reports a solution
whose line is not what the declaration says.

Cell tags say who sees a cell in the book. A cell tagged ``remove-cell`` is
hidden on the answers page (maintainer notes, the final answer check). A cell
tagged ``exercise-only`` (with ``remove-cell``: the exercise's title and its
"replace each ..." instructions) is hidden on the answers page and shown in
the exercise, which gets it without those two tags.

An existing exercise notebook is overwritten only if it is unchanged since
the last git commit (or already identical to the generated one): a modified
or untracked file may hold a learner's answers.

It works on the checkout it is run in: the nearest directory at or above the
current one that holds ``_toc.yml`` or ``.git``, not the checkout this module
was installed from (two checkouts may share one virtual environment).
"""

from __future__ import annotations

import argparse
import ast
import copy
import re
import subprocess
import sys
from pathlib import Path

import nbformat

from tools import nbhygiene

BEGIN = re.compile(r"^(\s*)# BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*# END SOLUTION\s*$")
MD_REGION = re.compile(r"<!--\s*BEGIN SOLUTION\s*-->.*?<!--\s*END SOLUTION\s*-->", re.S)
ANSWER, CODE = "...  # YOUR ANSWER HERE", "...  # YOUR CODE HERE"
EXERCISE_ONLY, HIDDEN = "exercise-only", "remove-cell"
QUESTION = re.compile(r"^## Question (\d\d\.\d+)\b")  # 10.10 as well as 10.1
ACCEPTED = "**Accepted:** "


# A practice notebook is named for its chapter and for what it holds (chapters/08_rope.ipynb, exercises/
# 08_rope_exercises.ipynb, solutions/08_rope_solutions.ipynb): wherever notebooks land side by side (a download
# folder, Colab's File > Download, the practice kit), no two of the course's notebooks share a name.
PRACTICE = ("exercises", "solutions")


def practice_name(chapter: str, folder: str) -> str:
    """The file name, in ``folder`` ("exercises" or "solutions"), of the practice of chapter ``chapter`` (the
    chapter notebook's stem, "08_rope")."""
    if folder not in PRACTICE:
        raise ValueError(f"folder must be one of {PRACTICE}, not {folder!r}")
    return f"{chapter}_{folder}.ipynb"


def chapter_stem(path: Path) -> str:
    """The stem of the chapter a notebook belongs to: "08_rope" for chapters/08_rope.ipynb and for
    exercises/08_rope_exercises.ipynb and solutions/08_rope_solutions.ipynb."""
    path = Path(path)
    return path.stem.removesuffix(f"_{path.parent.name}") if path.parent.name in PRACTICE else path.stem


class AuthoringError(ValueError):
    """A solution notebook whose markers cannot be processed."""


class NotACheckout(RuntimeError):
    """Run outside a checkout of the course: there is no solutions/ to work on."""


def find_root(start: Path) -> Path:
    """The checkout containing ``start``: the nearest directory holding ``_toc.yml`` or ``.git``."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        if (folder / "_toc.yml").exists() or (folder / ".git").exists():
            if not (folder / "solutions").is_dir():
                raise NotACheckout(f"{folder} is not a checkout of the course: it has no solutions/ directory.")
            return folder
    raise NotACheckout(
        f"{start} is not inside a checkout of the course (no _toc.yml or .git above it): "
        "run `make exercises` in the course's directory."
    )


def placeholder(region: list[str], indent: str) -> list[str]:
    """The lines that replace the solution ``region`` (its lines, markers excluded)."""
    if indent:
        return [indent + CODE]
    source = "\n".join(region)
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise AuthoringError(f"solution region does not parse: {exc}") from None
    out, seen = [], set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            ends = [
                i
                for i in range(node.lineno - 1, node.body[0].lineno - 1)
                if region[i].split("#")[0].rstrip().endswith(":")
            ]
            if ends:  # the header: decorators and signature, up to its colon
                header, body = region[start - 1 : ends[0] + 1], node.body[0].col_offset
            else:  # a one-line definition
                lines = ast.unparse(node).splitlines()
                header = lines[: len(node.decorator_list) + 1]
                body = node.col_offset + 4
            out += header + [" " * body + CODE]
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and name.id not in seen:
                        seen.add(name.id)
                        out.append(f"{name.id} = {ANSWER}")
    return out


def strip_code(source: str) -> str:
    lines, out, region, indent = source.splitlines(), [], None, ""
    for line in lines:
        begin = BEGIN.match(line)
        if region is None:
            if begin:
                region, indent = [], begin.group(1)
            elif END.match(line):
                raise AuthoringError("'# END SOLUTION' without a matching '# BEGIN SOLUTION'")
            else:
                out.append(line)
        elif begin:
            raise AuthoringError("nested '# BEGIN SOLUTION'")
        elif END.match(line):
            out += placeholder(region, indent)
            region = None
        else:
            region.append(line[len(indent) :] if line.startswith(indent) else line)
    if region is not None:
        raise AuthoringError("'# BEGIN SOLUTION' without a matching '# END SOLUTION'")
    return "\n".join(out).strip("\n")


def strip_markdown(source: str) -> str:
    text = MD_REGION.sub("", source)
    if re.search(r"<!--\s*(BEGIN|END) SOLUTION\s*-->", text):
        raise AuthoringError("unbalanced <!-- BEGIN SOLUTION --> / <!-- END SOLUTION --> markers")
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def solution_only(source: str) -> bool:
    """Is a code cell's ``source`` one solution region, from its first line to its last?"""
    lines = source.strip().splitlines()
    return (
        bool(lines)
        and bool(BEGIN.match(lines[0]))
        and bool(END.match(lines[-1]))
        and sum(bool(BEGIN.match(line)) for line in lines) == 1
    )


def exercise(solution) -> nbformat.NotebookNode:
    """The exercise version of a solution notebook (a new notebook object)."""
    nb = copy.deepcopy(solution)
    cells = []
    for n, cell in enumerate(nb.cells):
        try:
            if cell.cell_type == "code":
                cell.source = "" if solution_only(cell.source) else strip_code(cell.source)
            elif cell.cell_type == "markdown":
                cell.source = strip_markdown(cell.source)
        except AuthoringError as exc:
            raise AuthoringError(f"cell {n}: {exc}") from None
        tags = cell.get("metadata", {}).get("tags", [])
        if EXERCISE_ONLY in tags:
            tags = [t for t in tags if t not in (EXERCISE_ONLY, HIDDEN)]
            if tags:
                cell.metadata["tags"] = tags
            else:
                del cell.metadata["tags"]
        if cell.source.strip():
            cells.append(cell)
    nb.cells = cells
    return nbhygiene.clean(nb)


def write_accepted(solution) -> list[str]:
    """Write each question's "**Accepted:**" line in ``solution`` (a notebook, changed in place) from the
    question's declaration; the ids of the questions whose line changed."""
    from grading import QUESTIONS  # the course's grader: only this step needs it

    changed, stated, qid = [], set(), None
    for cell in solution.cells:
        if cell.cell_type == "code":
            if qid and f'check("{qid}"' in cell.source:
                qid = None  # the question's text ends at its check cell
            continue
        heading = QUESTION.match(cell.source)
        if heading:
            qid = heading.group(1)
            if qid not in QUESTIONS:
                raise AuthoringError(f"question {qid} is not in the grader's bank (grading/bank/)")
        if qid is None:
            continue
        lines = cell.source.split("\n")
        for n, line in enumerate(lines):
            if not line.startswith(ACCEPTED):
                continue
            want = QUESTIONS[qid].requirement()
            if want is None:
                raise AuthoringError(f"question {qid} is a choice question: its text has no **Accepted:** line")
            stated.add(qid)
            if line != want:
                lines[n] = want
                changed.append(qid)
        cell.source = "\n".join(lines)
    asked = {m.group(1) for c in solution.cells if c.cell_type == "markdown" for m in [QUESTION.match(c.source)] if m}
    missing = sorted(q for q in asked - stated if QUESTIONS[q].requirement() is not None)
    if missing:
        raise AuthoringError(
            f"question {', '.join(missing)} states no line starting with **Accepted:** (add one to its text; "
            "its words are written from the grader's declaration)"
        )
    return changed


def notebook_text(nb) -> str:
    """``nb`` as the repository stores a notebook."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def generate(solution_path: Path):
    """(the solution notebook with its Accepted lines written, the ids of those that changed, the text of the
    exercise notebook generated from it)."""
    solution = nbformat.read(solution_path, as_version=4)
    try:
        changed = write_accepted(solution)
        return solution, changed, notebook_text(exercise(solution))
    except AuthoringError as exc:
        raise AuthoringError(f"{solution_path}: {exc}") from None


def render(solution_path: Path) -> str:
    """The text of the exercise notebook generated from ``solution_path``."""
    return generate(solution_path)[2]


def _git(root: Path, *args) -> int:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True).returncode
    except OSError:
        return 128


def holds_learner_work(root: Path, path: Path, generated: str) -> bool:
    """Would writing ``generated`` to ``path`` destroy changes that are not committed?"""
    if not path.exists() or path.read_text(encoding="utf-8") == generated:
        return False
    rel = str(path.relative_to(root))
    if _git(root, "ls-files", "--error-unmatch", "--", rel) != 0:
        return True  # untracked (or no git): it differs from what we would write
    return _git(root, "diff", "--quiet", "HEAD", "--", rel) != 0


def main(argv=None, root: Path | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.make_exercises", description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="overwrite exercises with uncommitted changes")
    parser.add_argument("--check", action="store_true", help="only report exercises that are out of date")
    parser.add_argument("--root", type=Path, default=root, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        root = args.root.resolve() if args.root else find_root(Path.cwd())
    except NotACheckout as exc:
        print(f"error: {exc}")
        return 2
    sources = sorted((root / "solutions").glob("*.ipynb"))
    status = 0
    for source in [s for s in sources if not s.name.endswith("_solutions.ipynb")]:
        print(f"error: {source.relative_to(root)}: a solutions notebook is named NN_topic_solutions.ipynb")
        sources.remove(source)
        status = 1
    targets = {root / "exercises" / practice_name(chapter_stem(s), "exercises"): s for s in sources}
    for target, source in targets.items():
        name = target.relative_to(root)
        try:
            solution, changed, text = generate(source)
        except AuthoringError as exc:
            print(f"error: {exc}")
            status = 1
            continue
        if changed and args.check:
            print(
                f"{source.relative_to(root)}: Accepted line of {', '.join(changed)} out of date (run: make exercises)"
            )
            status = 1
        elif changed:
            source.write_text(notebook_text(solution), encoding="utf-8")
            print(f"{source.relative_to(root)}: Accepted line of {', '.join(changed)} written")
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            print(f"{name}: up to date")
        elif args.check:
            print(f"{name}: {'missing' if current is None else 'out of date'} (run: make exercises)")
            status = 1
        elif not args.force and holds_learner_work(root, target, text):
            print(
                f"{name}: NOT overwritten: it has changes that are not committed (a learner's answers?). "
                "Commit or move it, or run `make exercises FORCE=1` (`make_exercises --force`) to overwrite it."
            )
            status = 1
        else:
            target.parent.mkdir(exist_ok=True)
            target.write_text(text, encoding="utf-8")
            print(f"{name}: written")
    for stray in sorted(set((root / "exercises").glob("*.ipynb")) - set(targets)):
        print(f"{stray.relative_to(root)}: has no source in solutions/")
        status = 1 if args.check else status
    return status


if __name__ == "__main__":
    sys.exit(main())
