"""Write the time table of how_to_take_this_course.md from the notebooks, so that no prose edit leaves it stale.

    make reading-time                     # = python -m tools.reading_time
    python -m tools.reading_time          # rewrite the table and the total below it
    python -m tools.reading_time --check  # exit 1 when the page's table is not the one the notebooks give

The estimate, which the page states above the table: the text read at ``WORDS_PER_MINUTE`` (Markdown cells and
figure captions), ``CODE_CELL`` minutes per code cell; in the exercises, ``QUESTION`` minutes per question and
``CODING_QUESTION`` per coding question (a function to write) plus their text; each rounded to 5 minutes. The
generated text sits between two MyST comment lines (``BEGIN`` and ``END``) of the page.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

from tools import generated_block, make_exercises

ROOT = Path(__file__).resolve().parent.parent
PAGE = "how_to_take_this_course.md"
WORDS_PER_MINUTE, CODE_CELL, QUESTION, CODING_QUESTION = 120, 1, 3, 10
BEGIN = "% BEGIN the time table, written by `make reading-time` (tools/reading_time.py) from the notebooks"
END = "% END the time table"
HEADER = [
    "| chapter | words | code cells | reading | questions (coding) | exercises |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
]


def five(minutes: float) -> int:
    return max(5, 5 * round(minutes / 5))


def words(nb) -> int:
    """The words a reader reads: Markdown cells and figure captions (kept in cell metadata, mystnb.figure)."""
    captions = (cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption", "") for cell in nb.cells)
    return sum(len(cell.source.split()) for cell in nb.cells if cell.cell_type == "markdown") + sum(
        len(caption.split()) for caption in captions
    )


def title(nb) -> str:
    """The notebook's heading, short: up to a colon ("Linearity"), or "Appendix A"."""
    heading = next(
        line[2:]
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("# ")
    )
    return heading.split(". ")[0] if heading.startswith("Appendix") else heading.split(":")[0]


def estimate(path: Path, root: Path = ROOT) -> dict:
    """What the table says of the notebook at ``path``: its words, code cells and reading minutes; for a
    chapter with exercises also the questions, the coding questions and the exercise minutes."""
    nb = nbformat.read(path, as_version=4)
    code = sum(cell.cell_type == "code" for cell in nb.cells)
    row = {
        "title": title(nb),
        "words": words(nb),
        "code": code,
        "reading": five(words(nb) / WORDS_PER_MINUTE + code * CODE_CELL),
    }
    exercise = root / "exercises" / make_exercises.practice_name(path.stem, "exercises")
    if exercise.exists():
        ex = nbformat.read(exercise, as_version=4)
        source = "\n".join(cell.source for cell in ex.cells if cell.cell_type == "code")
        questions = len(set(re.findall(r'check\("(\d\d\.\d+)"', source)))
        coding = source.count("# YOUR CODE HERE")
        minutes = words(ex) / WORDS_PER_MINUTE + (questions - coding) * QUESTION + coding * CODING_QUESTION
        row |= {"questions": questions, "coding": coding, "exercises": five(minutes)}
    return row


def notebooks(root: Path = ROOT) -> list[Path]:
    return sorted((root / "chapters").glob("*.ipynb")) + sorted((root / "appendix").glob("*.ipynb"))


def hours(minutes: int) -> str:
    half_hours = round(minutes / 30)
    return f"{half_hours // 2}" + ("½" if half_hours % 2 else "")


def generated(root: Path = ROOT) -> str:
    """The table and the sentence with the totals (the chapters only: the appendix is optional)."""
    lines = list(HEADER)
    total = {"reading": 0, "exercises": 0}
    for path in notebooks(root):
        row = estimate(path, root)
        target = path.relative_to(root).with_suffix("").as_posix()
        number = f"{int(path.name[:2])}. " if path.parent.name == "chapters" else ""
        cells = [f"{{doc}}`{number}{row['title']} <{target}>`", row["words"], row["code"], f"{row['reading']} min"]
        if "questions" in row:
            cells += [f"{row['questions']} ({row['coding']})", f"{row['exercises']} min"]
            total["reading"] += row["reading"]
            total["exercises"] += row["exercises"]
        else:
            cells += ["", ""]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines += [
        "",
        f"In all, about {hours(total['reading'])} hours of reading and {hours(total['exercises'])} hours of exercises.",
    ]
    return "\n".join(lines)


def main(argv=None, root: Path = ROOT) -> int:
    return generated_block.main(
        argv,
        prog="python -m tools.reading_time",
        description=__doc__.splitlines()[0],
        path=root / PAGE,
        block=lambda: generated(root),
        begin=BEGIN,
        end=END,
        what="the time table",
        make="reading-time",
    )


if __name__ == "__main__":
    sys.exit(main())
