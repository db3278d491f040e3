"""Keep notebooks stored clean: nbstripout, configured for the course, and the checks it cannot make.

    python -m tools.nbhygiene check chapters appendix exercises solutions   # exit 1 and list problems
    python -m tools.nbhygiene clean chapters appendix exercises solutions   # fix them in place

nbstripout strips outputs, execution counts and metadata (``STRIP``: ``strip_options``). What it cannot do
alone, this module adds:

* keep an allowlist of metadata: nbstripout removes the keys it is named (``extra_keys``), so every key a
  notebook holds outside ``NOTEBOOK_METADATA`` and ``CELL_METADATA`` is named to it, including keys that
  an editor starts writing tomorrow;
* find a cell stored without an id and give it one: nbformat invents the missing ids when it reads a
  notebook, so nbstripout, which reads through nbformat, never sees one missing (``stored`` reads the
  file's JSON);
* refuse a cell's opt-out: nbstripout keeps the outputs of a cell tagged or marked ``keep_output``, and the
  course stores no output at all (``opt_outs`` finds them, ``clean`` removes the tag or key first).
"""

from __future__ import annotations

import copy
import json
import sys
import warnings
from pathlib import Path

import nbformat
import nbstripout
from nbformat.corpus.words import generate_corpus_id

NOTEBOOK_METADATA = {"kernelspec", "language_info"}
# "mystnb" carries per-cell rendering options for the book, e.g. the alt text of a
# figure: {"mystnb": {"image": {"alt": "..."}}}
# "cellView" and "jupyter" (its "source_hidden") collapse the Colab install cell (tools/colab_cell.py): a form in
# Colab, hidden input in JupyterLab and Notebook
CELL_METADATA = {"tags", "mystnb", "cellView", "jupyter"}
# Cell ids are kept as stored (nbstripout would renumber them 0, 1, ...): each is written once, by nbformat or
# make_exercises, and JupyterLab and links refer to them. A cell marked init_cell loses its outputs like any other.
STRIP = {"keep_output": False, "keep_count": False, "keep_id": True, "strip_init_cells": True}
OPT_OUT = "keep_output"  # nbstripout's tag and cell metadata key for "keep this cell's outputs"


def strip_options(nb) -> dict:
    """The arguments of ``nbstripout.strip_output`` that make ``nb`` clean: ``STRIP``, and every metadata key
    of ``nb`` outside the allowlists as a key to strip."""
    keys = {f"metadata.{key}" for key in set(nb.metadata) - NOTEBOOK_METADATA}
    for cell in nb.cells:
        keys |= {f"cell.metadata.{key}" for key in set(cell.get("metadata", {})) - CELL_METADATA}
    return {**STRIP, "extra_keys": sorted(keys)}


def stripped(nb):
    """A copy of ``nb`` as nbstripout leaves it."""
    return nbstripout.strip_output(copy.deepcopy(nb), **strip_options(nb))


def opts_out(cell) -> bool:
    """Whether nbstripout would keep the outputs of ``cell``: tagged or marked ``keep_output``."""
    metadata = cell.get("metadata", {})
    return bool(metadata.get(OPT_OUT)) or OPT_OUT in metadata.get("tags", [])


def opt_outs(nb) -> list[str]:
    """One message for each cell of ``nb`` that opts out of stripping."""
    return [
        f"cell {n}: opts out of stripping ({OPT_OUT!r} in its tags or metadata); the course stores no output"
        for n, cell in enumerate(nb.cells)
        if opts_out(cell)
    ]


def problems(nb) -> list[str]:
    """What keeps ``nb`` from being clean, one message per problem: what nbstripout would strip, then the
    opt-outs."""
    after = stripped(nb)
    found = []
    extra = sorted(set(nb.metadata) - set(after.metadata))
    if extra:
        found.append(f"notebook metadata has extra keys {extra}")
    for n, (cell, clean_cell) in enumerate(zip(nb.cells, after.cells)):
        extra = sorted(set(cell.get("metadata", {})) - set(clean_cell.get("metadata", {})))
        if extra:
            found.append(f"cell {n}: metadata has extra keys {extra}")
        if cell.get("outputs") != clean_cell.get("outputs"):
            found.append(f"cell {n}: has {len(cell.outputs)} stored output(s)")
        if cell.get("execution_count") != clean_cell.get("execution_count"):
            found.append(f"cell {n}: has execution_count {cell.execution_count}")
    if after != nb and not found:
        found.append("nbstripout would strip it")
    return found + opt_outs(nb)


def missing_ids(path) -> list[str]:
    """One message for each cell stored without an id in the notebook file at ``path``: nbformat 4.5 requires an
    id on every cell, and reading a notebook quietly invents the missing ones (with a warning that this will
    become an error), so they are looked for in the file itself."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return [f"cell {n}: has no id" for n, cell in enumerate(cells) if "id" not in cell]


def stored(path) -> tuple:
    """The notebook at ``path`` and its problems, those of the file as stored included (``missing_ids``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nbformat.validator.MissingIDFieldWarning)
        nb = nbformat.read(path, as_version=4)
    return nb, missing_ids(path) + problems(nb)


def clean(nb):
    """Strip ``nb`` in place with nbstripout, opt-outs removed first, and give every cell an id; return it."""
    for cell in filter(opts_out, nb.cells):
        cell.metadata.pop(OPT_OUT, None)
        tags = [tag for tag in cell.metadata.get("tags", []) if tag != OPT_OUT]
        if tags:
            cell.metadata.tags = tags
        else:
            cell.metadata.pop("tags", None)
    nbstripout.strip_output(nb, **strip_options(nb))
    taken = {cell.get("id") for cell in nb.cells}
    for cell in nb.cells:
        if not cell.get("id"):
            cell.id = next(new for new in iter(generate_corpus_id, None) if new not in taken)
            taken.add(cell.id)
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
