"""A block of a file that a tool writes, between a BEGIN and an END comment line of that file (the time table of
how_to_take_this_course.md, ``quizzes.SECTIONS``): rewritten in place, or, with ``--check``, only compared."""

from __future__ import annotations

import argparse
from pathlib import Path


def rewritten(text: str, block: str, begin: str, end: str) -> str:
    """``text`` with what is between its ``begin`` and ``end`` lines replaced by ``block``."""
    start, stop = text.index(begin + "\n") + len(begin) + 1, text.index("\n" + end)
    return text[:start] + block + text[stop:]


def main(argv, *, prog: str, description: str, path: Path, block, begin: str, end: str, what: str, make: str) -> int:
    """The command line of a tool that writes the block of ``path`` (``block()``, computed only when run): 0 when
    the block is current or was rewritten, 1 when ``--check`` finds it stale (saying ``what`` is stale and which
    ``make`` target writes it)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--check", action="store_true", help=f"only say whether {what} is current")
    args = parser.parse_args(argv)
    text = path.read_text(encoding="utf-8")
    new = rewritten(text, block(), begin, end)
    if new == text:
        return 0
    if args.check:
        print(f"{path.name}: {what} is not current (run: make {make})")
        return 1
    path.write_text(new, encoding="utf-8")
    print(f"{path.name}: {what} rewritten")
    return 0
