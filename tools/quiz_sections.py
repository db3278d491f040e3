"""Write ``quizzes.SECTIONS`` from the chapters, so that no moved cell or label leaves a quiz's link stale.

    make quiz-sections                     # = python -m tools.quiz_sections
    python -m tools.quiz_sections          # rewrite the SECTIONS block of src/posenc_course/quizzes.py
    python -m tools.quiz_sections --check  # exit 1 when the block is not the one the chapters give

A quiz names a section by its MyST label (``{ref}`section 2.5 <sec-2-5>```); the learner's package has no
chapters to look in, so ``SECTIONS`` carries, for every label a quiz names, the chapter notebook and the id of the
cell holding the label and its heading. The labels are read from the source of ``QUIZZES`` (not by importing
it: a quiz naming a label that ``SECTIONS`` lacks cannot be imported), their places from the chapters listed in
the Chapters part of _toc.yml. The block sits between two comment lines (``BEGIN`` and ``END``) of the module.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import nbformat
import yaml

from tools import generated_block

ROOT = Path(__file__).resolve().parent.parent
MODULE = Path("src") / "posenc_course" / "quizzes.py"
BEGIN = "# BEGIN SECTIONS, written by `make quiz-sections` (tools/quiz_sections.py) from the chapters: do not edit"
END = "# END SECTIONS"
REFERENCE = re.compile(r"\{ref\}`([^`<>]*?)\s*<([\w-]+)>`")


def chapter_sections(root: Path = ROOT) -> dict[str, dict]:
    """Every labelled heading of the chapters: label -> its notebook, cell id, heading and section number.

    The number is the one Sphinx gives the heading: the chapter's place in the numbered Chapters part of
    _toc.yml, then the heading's place among the headings of its level (every heading counts, labelled or not).
    """
    parts = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))["parts"]
    files = next(part for part in parts if part["caption"] == "Chapters")["chapters"]
    found = {}
    for n, entry in enumerate(files, 1):
        path = root / f"{entry['file']}.ipynb"
        numbers = [n]
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            fenced, label = False, None
            for line in cell.source.splitlines():
                if line.lstrip().startswith(("```", "~~~")):
                    fenced = not fenced
                if fenced or not line.strip() or line.lstrip().startswith(("```", "~~~")):
                    continue
                if m := re.fullmatch(r"\(([\w-]+)\)=\s*", line):
                    label = m.group(1)
                    continue
                if m := re.fullmatch(r"(#{1,6})\s+(.*?)\s*", line):
                    level = len(m.group(1))
                    if level > 1:
                        numbers = (numbers + [0] * level)[:level]
                        numbers[-1] += 1
                    if label:
                        found[label] = {
                            "notebook": path.stem,
                            "cell": cell.id,
                            "heading": m.group(2),
                            "number": ".".join(map(str, numbers)),
                        }
                label = None
    return found


def named_labels(source: str) -> set[str]:
    """The labels the quizzes' texts name: every ``{ref}`` in the strings of the ``QUIZZES`` assignment."""
    tree = ast.parse(source)
    quizzes = next(
        node
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        and any(
            isinstance(t, ast.Name) and t.id == "QUIZZES"
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    )
    texts = [n.value for n in ast.walk(quizzes) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return {label for text in texts for _, label in REFERENCE.findall(" ".join(text.split()))}


def generated(root: Path = ROOT) -> str:
    """The SECTIONS block: every label a quiz names, in the order of its numbers, with its notebook and cell."""
    named = named_labels((root / MODULE).read_text(encoding="utf-8"))
    sections = chapter_sections(root)
    unknown = sorted(named - set(sections))
    if unknown:
        raise SystemExit(f"{MODULE}: the quizzes name labels no chapter heading has: {', '.join(unknown)}")
    lines = ["SECTIONS: dict[str, tuple[str, str]] = {"]
    for label in sorted(named, key=lambda label: [int(n) for n in re.findall(r"\d+", label)]):
        lines.append(f'    "{label}": ("{sections[label]["notebook"]}", "{sections[label]["cell"]}"),')
    return "\n".join([*lines, "}"])


def main(argv=None, root: Path = ROOT) -> int:
    return generated_block.main(
        argv,
        prog="python -m tools.quiz_sections",
        description=__doc__.splitlines()[0],
        path=root / MODULE,
        block=lambda: generated(root),
        begin=BEGIN,
        end=END,
        what="quizzes.SECTIONS",
        make="quiz-sections",
    )


if __name__ == "__main__":
    sys.exit(main())
