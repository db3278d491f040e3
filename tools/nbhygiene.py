"""Keep notebooks stored clean: no outputs, no execution counts, minimal metadata, an id on every cell.

python -m tools.nbhygiene check chapters appendix exercises solutions   # exit 1 and list problems
python -m tools.nbhygiene clean chapters appendix exercises solutions   # fix them in place
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import nbformat
from nbformat.corpus.words import generate_corpus_id

NOTEBOOK_METADATA = {"kernelspec", "language_info"}
# "mystnb" carries per-cell rendering options for the book, e.g. the alt text of a
# figure: {"mystnb": {"image": {"alt": "..."}}}
# "cellView" and "jupyter" collapse the Colab install cell (tools/colab_cell.py): a form in Colab, hidden input in
# JupyterLab and Notebook
CELL_METADATA = {"tags", "mystnb", "cellView", "jupyter"}


def problems(nb) -> list[str]:
    """What keeps ``nb`` from being clean, one message per problem."""
    found = []
    extra = set(nb.metadata) - NOTEBOOK_METADATA
    if extra:
        found.append(f"notebook metadata has extra keys {sorted(extra)}")
    for n, cell in enumerate(nb.cells):
        extra = set(cell.get("metadata", {})) - CELL_METADATA
        if extra:
            found.append(f"cell {n}: metadata has extra keys {sorted(extra)}")
        if cell.cell_type == "code":
            if cell.get("outputs"):
                found.append(f"cell {n}: has {len(cell.outputs)} stored output(s)")
            if cell.get("execution_count") is not None:
                found.append(f"cell {n}: has execution_count {cell.execution_count}")
    return found


def stored(path) -> tuple:
    """The notebook at ``path`` and its problems, those of the file as stored included: nbformat 4.5 requires an
    id on every cell, and reading a notebook quietly invents the missing ones (with a warning that this will
    become an error), so they are looked for in the file itself."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    found = [f"cell {n}: has no id" for n, cell in enumerate(cells) if "id" not in cell]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nbformat.validator.MissingIDFieldWarning)
        nb = nbformat.read(path, as_version=4)
    return nb, found + problems(nb)


def clean(nb):
    """Strip outputs, counts and extra metadata from ``nb`` in place, give every cell an id; return it."""
    for key in set(nb.metadata) - NOTEBOOK_METADATA:
        del nb.metadata[key]
    taken = {cell.get("id") for cell in nb.cells}
    for cell in nb.cells:
        if not cell.get("id"):
            cell.id = next(new for new in iter(generate_corpus_id, None) if new not in taken)
            taken.add(cell.id)
        for key in set(cell.get("metadata", {})) - CELL_METADATA:
            del cell.metadata[key]
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def notebooks(paths) -> list[Path]:
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        else:
            found.append(path)
    return found


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("check", "clean"):
        print(__doc__)
        return 2
    command, paths = argv[0], argv[1:] or ["chapters", "appendix", "exercises", "solutions"]
    status = 0
    for path in notebooks(paths):
        nb, issues = stored(path)
        if command == "clean" and issues:
            nbformat.write(clean(nb), path)
            print(f"cleaned {path}")
        elif issues:
            status = 1
            for issue in issues:
                print(f"{path}: {issue}")
    return status


if __name__ == "__main__":
    sys.exit(main())
