"""Write every notebook's first code cell, the Colab install cell, from ``repository.url`` in ``_config.yml``.

    python -m colab_cell            # rewrite the cell in chapters/, appendix/, solutions/; regenerate exercises/
    python -m colab_cell --check    # exit 1 and list the notebooks whose first cell is not the generated one

``repository.url`` is the one setting that says where the course is published. Empty or absent
(the default), the book shows no launch or repository buttons (``book_assets.repository_links``)
and the cell, on Colab, installs a wheel the learner uploaded or prints how to get one: it never
points at a repository that may not exist. Set to a real repository (``https://github.com/owner/name``,
with ``repository.branch``), the book shows the buttons and the cell installs the course from it.
Outside Colab the cell does nothing either way.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import yaml

import make_exercises
import nbhygiene

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["chapters", "appendix", "solutions"]  # exercises/ are generated from solutions/
PACKAGE = "posenc-course"  # the distribution's name in pyproject.toml (tests/test_colab_cell.py checks it)

HEADER = """\
# On Google Colab, this cell installs the course library (posenc, the grader and
# the course helpers); anywhere else it does nothing (install the course once, as
# "How to take this course" says). It is the one exception to "no pip install in
# notebooks": a notebook opened alone on Colab has no other way to get the library.
# Written by `python -m colab_cell` from repository.url in _config.yml: do not edit.
import sys
"""

FROM_REPOSITORY = HEADER + """
REPOSITORY = "{url}"
if "google.colab" in sys.modules:
    package = f"{package} @ git+{{REPOSITORY}}@{branch}"
    get_ipython().run_line_magic("pip", f'install -q "{{package}}"')
"""

FROM_WHEEL = HEADER + """from pathlib import Path

# No public repository is configured: install the wheel uploaded next to this notebook.
wheels = sorted(Path.cwd().glob("posenc_course-*.whl"))
if "google.colab" in sys.modules and wheels:
    get_ipython().run_line_magic("pip", f'install -q "{wheels[-1]}"')
elif "google.colab" in sys.modules:
    print("The course library is not installed. On your computer, in a copy of the course, run\\n"
          "    python -m pip wheel --no-deps . -w dist\\n"
          "then upload dist/posenc_course-*.whl with Colab's Files panel and run this cell again.")
"""


def repository(config_path: Path = ROOT / "_config.yml") -> tuple[str, str]:
    """(url, branch) of the published repository in ``_config.yml``; url is "" when none is configured."""
    config = yaml.safe_load(Path(config_path).read_text()) or {}
    settings = config.get("repository") or {}
    url = (settings.get("url") or "").strip()
    branch = str(settings.get("branch") or "main").strip()
    if url and (not url.startswith("https://") or url.endswith(("/", ".git")) or url.count("/") < 4):
        raise ValueError(f"repository.url in {config_path} must look like https://github.com/owner/name "
                         f"(no trailing / or .git), or be empty; it is {url!r}")
    return url, branch


def cell_source(url: str, branch: str = "main") -> str:
    """The first code cell of every notebook for this repository setting."""
    text = FROM_REPOSITORY.format(url=url, branch=branch, package=PACKAGE) if url else FROM_WHEEL
    return text.rstrip("\n")


# The book does not show the cell (its readers need no install; on Colab and in Jupyter the tag changes nothing).
TAGS = ["remove-cell"]


def first_code_cell(nb):
    return next(cell for cell in nb.cells if cell.cell_type == "code")


def main(argv=None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(prog="python -m colab_cell", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report notebooks whose cell is out of date")
    args = parser.parse_args(argv)
    source = cell_source(*repository(root / "_config.yml"))
    names = SOURCES + (["exercises"] if args.check else [])
    folders = [root / name for name in names if (root / name).is_dir()]
    stale = []
    for path in nbhygiene.notebooks(folders):
        nb = nbformat.read(path, as_version=4)
        cell = first_code_cell(nb)
        if cell.source != source or cell.metadata.get("tags") != TAGS:
            stale.append(path)
            if not args.check:
                cell.source = source
                cell.metadata["tags"] = list(TAGS)
                nbformat.write(nb, path)
                print(f"rewrote the first cell of {path.relative_to(root)}")
    if args.check:
        for path in stale:
            print(f"{path.relative_to(root)}: the first code cell is not the one for repository.url in _config.yml "
                  "(run: PYTHONPATH=tools python -m colab_cell)")
        return 1 if stale else 0
    return make_exercises.main([], root=root)


if __name__ == "__main__":
    sys.exit(main())
