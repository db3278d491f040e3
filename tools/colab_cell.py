"""Write every notebook's first code cell, the Colab install cell, from ``_config.yml``.

    make colab-cell                     # = python -m tools.colab_cell
    python -m tools.colab_cell          # rewrite the cell in chapters/, appendix/, solutions/; regenerate exercises/
    python -m tools.colab_cell --check  # exit 1 and list the notebooks whose first cell is not the generated one

Two settings say where the course is published; outside Colab the cell does nothing either way.

* ``html.baseurl``, the book's public address (``https://owner.github.io/name/``): the cell downloads the
  course wheel the book hands out (``book_build/book_kit.py``: ``_downloads/posenc_course-VERSION-...whl``)
  and installs it, so a reader of the hosted book needs nothing else. A failed download is explained in
  one line (the HTTP status or the network error, and what to do), not a traceback.
* else ``repository.url`` (``https://github.com/owner/name``, with ``repository.branch``): the cell installs
  the course from the repository. This setting also gives the book its launch and repository buttons
  (``book_assets.repository_links``).
* neither (the default): the cell installs a wheel the learner uploaded next to the notebook (from the
  practice kit), or says how to get one; it never points at an address that may not exist.

Outside Colab the cell prints nothing, and it is stored collapsed: Colab shows it as a form with its title
(``#@title``, ``cellView: form``), JupyterLab and Notebook with its input hidden (``jupyter.source_hidden``),
and the book not at all (``remove-cell``). After installing, it says whether the session must be restarted,
and why: only when the install replaced a package the session had already imported (the course declares
ranges, so on Colab it replaces none). pip runs as a program, not as ``%pip``, whose note "you may need to
restart the kernel" would contradict that verdict. When the cell cannot install (no wheel, a failed download,
pip failing) or a restart is needed, it raises an error that IPython shows as one line, no traceback
(``_render_traceback_``, as the grader's ``_Failed``): "Run all" stops there instead of running on into
``ModuleNotFoundError``.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import nbformat
import yaml

from tools import make_exercises, nbhygiene

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["chapters", "appendix", "solutions"]  # exercises/ are generated from solutions/
PACKAGE = "posenc-course"  # the distribution's name in pyproject.toml (tests/test_colab_cell.py checks it)

HEADER = """\
#@title Colab only: install the course library (anywhere else this cell does nothing)
# Written by `python -m tools.colab_cell` from _config.yml: do not edit.
import sys
if "google.colab" in sys.modules:
    class Stopped(Exception):  # shown as one line, no traceback; an error, so "Run all" stops here
        def _render_traceback_(self):
            return [f"Stopped here. {self}"]
"""

# The install: pip run as a program, its output shown only when it fails (its last error line), not ``%pip``, whose
# "you may need to restart the kernel" would contradict the cell's own verdict. Then the cell says whether the session
# must be restarted, and why: only when the install replaced a package the session had already imported, and then it
# stops "Run all" too. (Templates: $NAME is filled in by ``fill``; the braces are the cell's own f-strings; ``what``
# is the wheel or requirement to install.)
INSTALL = """\
loaded = {m: sys.modules[m].__version__ for m in ("numpy", "torch", "matplotlib", "IPython", "ipywidgets")
          if m in sys.modules}
import importlib
import subprocess
pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-color", what],
                     capture_output=True, text=True)
if pip.returncode:
    said = [line.strip() for line in (pip.stdout + pip.stderr).splitlines() if line.strip()]
    said = [line for line in said if line.startswith("ERROR")] or said or [f"pip exited with {pip.returncode}"]
    raise Stopped(f"pip could not install the course library: {said[-1]}")
importlib.invalidate_caches()
from importlib.metadata import version
replaced = [f"{m} {v} by {version(m)}" for m, v in loaded.items() if version(m) != v]
if replaced:
    raise Stopped("Installed; now restart the session (Runtime > Restart session) and run the notebook from the "
                  f"top: the install replaced {', '.join(replaced)}, already loaded here.")
print("Installed. No restart needed: the install replaced nothing this session had loaded.")
"""

# The book's public address is configured: the wheel the book hands out, unless one was uploaded. A download is
# written under a temporary name first, so that a broken one is never taken for an uploaded wheel.
FROM_BOOK = (
    HEADER
    + """\
    from pathlib import Path
    from urllib.error import HTTPError
    from urllib.request import urlretrieve
    WHEEL = "$WHEEL_URL"
    uploaded = sorted(Path.cwd().glob("posenc_course-*.whl"))
    if uploaded:
        what = str(uploaded[-1])
    else:
        what = WHEEL.rsplit("/", 1)[-1]
        try:
            Path(urlretrieve(WHEEL, what + ".part")[0]).replace(what)
        except HTTPError as error:
            why = f"the server answered HTTP {error.code} {error.reason}"
        except (OSError, ValueError) as error:  # URLError: no network, no such host, refused, timed out
            why = " ".join(str(getattr(error, "reason", "") or error).split()) or type(error).__name__
        else:
            why = ""
        if why:
            raise Stopped(f"Could not download the course library from {WHEEL}: {why}. Check the connection and "
                          "run this cell again, or upload the .whl of the book's practice kit (Files panel) and "
                          "run it again.")
$INSTALL4"""
)

FROM_REPOSITORY = (
    HEADER
    + """\
    what = "$PACKAGE @ git+$URL@$BRANCH"
$INSTALL4"""
)

# No public address is configured: the cell installs the wheel uploaded next to the notebook.
FROM_WHEEL = (
    HEADER
    + """\
    from pathlib import Path
    wheels = sorted(Path.cwd().glob("posenc_course-*.whl"))
    if not wheels:
        raise Stopped("The course library is not installed. Download the practice kit from the book (How to take "
                      "this course), upload its .whl with Colab's Files panel, and run this cell again.")
    what = str(wheels[-1])
$INSTALL4"""
)


def fill(template: str, **values: str) -> str:
    """``template`` with each ``$NAME`` replaced (INSTALL4/INSTALL8: the install step, indented 4 or 8)."""
    import textwrap

    values |= {"INSTALL4": textwrap.indent(INSTALL, " " * 4), "INSTALL8": textwrap.indent(INSTALL, " " * 8)}
    for name in sorted(values, key=len, reverse=True):
        template = template.replace(f"${name}", values[name])
    return template


def config(config_path: Path = ROOT / "_config.yml") -> dict:
    return yaml.safe_load(Path(config_path).read_text()) or {}


def repository(config_path: Path = ROOT / "_config.yml") -> tuple[str, str]:
    """(url, branch) of the published repository in ``_config.yml``; url is "" when none is configured."""
    settings = config(config_path).get("repository") or {}
    url = (settings.get("url") or "").strip()
    branch = str(settings.get("branch") or "main").strip()
    if url and (not url.startswith("https://") or url.endswith(("/", ".git")) or url.count("/") < 4):
        raise ValueError(
            f"repository.url in {config_path} must look like https://github.com/owner/name "
            f"(no trailing / or .git), or be empty; it is {url!r}"
        )
    return url, branch


def book_address(config_path: Path = ROOT / "_config.yml") -> str:
    """``html.baseurl``, the book's public address, ending in "/"; "" when none is configured."""
    address = str((config(config_path).get("html") or {}).get("baseurl") or "").strip()
    if address and (not address.startswith("https://") or "?" in address or "#" in address):
        raise ValueError(
            f"html.baseurl in {config_path} must be the book's https:// address "
            f"(e.g. https://owner.github.io/name/), or be empty; it is {address!r}"
        )
    return address and address.rstrip("/") + "/"


def wheel_url(address: str) -> str:
    """Where the book at ``address`` hands out the course wheel (book_build/book_kit.py)."""
    from book_build import book_kit

    return f"{address}{book_kit.DOWNLOADS}/{book_kit.wheel_name()}"


def cell_source(url: str = "", branch: str = "main", address: str = "") -> str:
    """The first code cell of every notebook for these settings (``address``: html.baseurl, first)."""
    if address:
        text = fill(FROM_BOOK, WHEEL_URL=wheel_url(address))
    elif url:
        text = fill(FROM_REPOSITORY, URL=url, BRANCH=branch, PACKAGE=PACKAGE)
    else:
        text = fill(FROM_WHEEL)
    return text.rstrip("\n")


def settings(config_path: Path = ROOT / "_config.yml") -> tuple[str, str, str]:
    """The arguments of ``cell_source`` that ``_config.yml`` gives."""
    return (*repository(config_path), book_address(config_path))


# The book does not show the cell (its readers need no install); Colab shows it as a form, its title alone, and
# JupyterLab, Notebook and VS Code with its input collapsed.
TAGS = ["remove-cell"]
METADATA = {"tags": TAGS, "cellView": "form", "jupyter": {"source_hidden": True}}


def first_code_cell(nb):
    return next(cell for cell in nb.cells if cell.cell_type == "code")


def main(argv=None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.colab_cell", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report notebooks whose cell is out of date")
    args = parser.parse_args(argv)
    source = cell_source(*settings(root / "_config.yml"))
    names = SOURCES + (["exercises"] if args.check else [])
    folders = [root / name for name in names if (root / name).is_dir()]
    stale = []
    for path in nbhygiene.notebooks(folders):
        nb = nbformat.read(path, as_version=4)
        cell = first_code_cell(nb)
        if cell.source != source or dict(cell.metadata) != METADATA:
            stale.append(path)
            if not args.check:
                cell.source = source
                cell.metadata = nbformat.from_dict(copy.deepcopy(METADATA))
                nbformat.write(nb, path)
                print(f"rewrote the first cell of {path.relative_to(root)}")
    if args.check:
        for path in stale:
            print(
                f"{path.relative_to(root)}: the first code cell is not the one for repository.url in _config.yml "
                "(run: make colab-cell)"
            )
        return 1 if stale else 0
    return make_exercises.main([], root=root)


if __name__ == "__main__":
    sys.exit(main())
