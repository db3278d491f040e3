"""What the book hands out for practice: the course wheel and the practice kit, under ``_downloads/``.

A reader of the built book needs no copy of the repository to practise. Every build writes

* ``_downloads/posenc_course-VERSION-py3-none-any.whl``: the course library (``posenc``, the grader,
  the course helpers), built from ``pyproject.toml`` and ``src/`` as ``pip wheel`` builds it;
* ``_downloads/posenc-course-practice-VERSION.zip``: one folder, ``posenc-course-practice-VERSION/``, holding the
  book's notebooks in the book's folders (``NOTEBOOK_FOLDERS``: the exercises, the chapters they link, the
  answers, the appendix a chapter links), that wheel and a README with the install lines (``KIT_README``).

A notebook's name says what it holds (``chapters/08_rope.ipynb``, ``exercises/08_rope_exercises.ipynb``,
``solutions/08_rope_solutions.ipynb``: ``practice_name`` in ``tools/make_exercises.py``), so the page's own ``.ipynb``
in a download menu never has the name of another page's, and the notebooks' relative links
(``../chapters/08_rope.ipynb``) resolve inside the unpacked kit as they do in the repository.

"How to take this course" links both; every practice page offers the kit in its download menu, next to
its ``.ipynb``. When ``html.baseurl`` names the book's public address, every notebook's first cell on
Colab downloads the wheel from there (``tools/colab_cell.py``). The wheel is rebuilt only when the
learner-facing code changed (``learner_sources.sources_digest``), the kit whenever its contents differ.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

from book_build import download_menu, learner_sources

ROOT = Path(__file__).resolve().parent.parent
DOWNLOADS = "_downloads"
PRACTICE_PAGES = ("exercises/", "solutions/")
NOTEBOOK_FOLDERS = ("chapters", "exercises", "solutions", "appendix")
FIRST_EXERCISE = "exercises/01_order_problem_exercises.ipynb"

KIT_README = """\
# Practice kit: Positional Encoding in Transformers

This folder holds the notebooks of the book in the book's folders: in `exercises/` the practice, one
notebook per chapter (`exercises/01_order_problem_exercises.ipynb` for chapter 1, and so on); in `chapters/`
the chapters themselves (`chapters/01_order_problem.ipynb`); in `solutions/` the practice answered
(`solutions/01_order_problem_solutions.ipynb`); in `appendix/` the appendix. The notebooks link one another
by these paths: keep the folders together. Running a solutions notebook records its questions as solved in
your progress, so read the answers, or run them once you are done. Beside them is the course library the
notebooks import, `{wheel}`: the formulas (`posenc`), the grader (`grading`) and the course's helpers. Each
question cell ends with `check("NN.k", answer)`: replace each `...` with your answer and run the cell.

## Install (once)

You need Python 3.11 or newer. In a terminal, in this folder, run the lines for your system: they create a
virtual environment in `.venv`, activate it, install PyTorch, then the course library with JupyterLab, and
start JupyterLab. Then open `{first}`.

{blocks}

**Which PyTorch.** The course runs on the CPU. On Linux, pip's own PyTorch is the build for NVIDIA GPUs and
brings several GB of CUDA libraries, so the Linux lines take PyTorch's CPU build from PyTorch's index. Keep
that line unless your computer has an NVIDIA GPU that you want PyTorch to use (`nvidia-smi` lists it; where
that command does not exist, there is none to use): then `python -m pip install torch` is yours. On macOS and
Windows pip's own PyTorch is the right one (the CPU build; on a Mac with Apple's GPU support), as PyTorch's
install page shows: https://pytorch.org/get-started/locally/. The course library keeps a PyTorch 2.4 or newer
that the environment already has.

**No venv?** If `python3 -m venv` says that ensurepip is not available (Debian, Ubuntu), install the
`python3-venv` package (`sudo apt install python3-venv`) and run it again. On Windows, `py` is the launcher
that python.org's installer adds; where it is missing (Python from the Microsoft Store), type `python` instead.

Chapter 11 also runs tiny models of the Hugging Face library: to run that chapter (not its exercises), install
the course with its `models` extra as well, `python -m pip install "{wheel}[lab,models]"`.

**VS Code:** open this folder, create the environment as above in its terminal, open a notebook and
choose the `.venv` kernel with *Select Kernel*. **Colab:** upload a notebook (*File > Upload
notebook*) and `{wheel}` (the *Files* panel), then run the notebook's first cell: it installs the wheel.
A notebook uploaded alone has no folders around it, so its links to the other notebooks lead nowhere there.

Your progress is kept in `~/.posenc-course/progress.json`; `summary("02")` shows a chapter's.
"""


def distribution() -> tuple[str, str]:
    """(name, version) of the course distribution, from pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["name"], project["version"]


# The kit's folder and file carry the course's version: a learner who unpacks a later kit gets a folder beside the
# old one, never over the answers typed into its notebooks.
KIT = f"posenc-course-practice-{distribution()[1]}"
KIT_ZIP = f"{KIT}.zip"


def wheel_name() -> str:
    name, version = distribution()
    return f"{re.sub(r'[-.]+', '_', name)}-{version}-py3-none-any.whl"


def install_command(wheel: str | None = None) -> str:
    """The one line that installs the course library and JupyterLab from the wheel in the current folder."""
    return f'python -m pip install "{wheel or wheel_name()}[lab]"'


# PyTorch's CPU build for Linux, from PyTorch's own index: PyPI's torch for Linux is the CUDA build, which pulls
# several GB of NVIDIA libraries. On macOS and Windows PyPI's torch is already what the course needs: PyTorch's
# install selector (https://pytorch.org/get-started/locally/) gives the plain `pip3 install torch` for macOS
# ("CUDA is not available on MacOS, please use default package") and for Windows with CPU, and an --index-url only
# for the CUDA builds of Windows and the CPU build of Linux.
TORCH_CPU = "python -m pip install torch --index-url https://download.pytorch.org/whl/cpu"
TORCH = "python -m pip install torch"
PLATFORMS = ("Linux", "macOS", "Windows")


def install_blocks(install: str | None = None) -> dict[str, list[str]]:
    """What a learner types on each platform, in order: a venv, activated, PyTorch, the course (``install``, by
    default the kit's line), JupyterLab. PyTorch comes first, so that the course's ``torch>=2.4`` finds it
    installed and pip fetches no other build. Before the venv is active only the system's own command for
    Python exists (``python3``; ``py`` on Windows); inside it, ``python`` is the venv's."""
    install = install or install_command()
    unix = ["python3 -m venv .venv", "source .venv/bin/activate"]
    return {
        "Linux": [*unix, TORCH_CPU, install, "jupyter lab"],
        "macOS": [*unix, TORCH, install, "jupyter lab"],
        "Windows": ["py -3 -m venv .venv", r".venv\Scripts\Activate.ps1", TORCH, install, "jupyter lab"],
    }


LABELS = {
    "Linux": "**Linux** (Terminal):",
    "macOS": "**macOS** (Terminal):",
    "Windows": "**Windows** (PowerShell; in the Command Prompt, activate with `.venv\\Scripts\\activate.bat` instead):",
}
FENCES = {"Linux": "bash", "macOS": "bash", "Windows": "powershell"}


def markdown_blocks(install: str | None = None) -> str:
    """The install blocks as Markdown: each platform's label, then its lines in a fenced block."""
    return "\n\n".join(
        f"{LABELS[platform]}\n\n```{FENCES[platform]}\n" + "\n".join(lines) + "\n```"
        for platform, lines in install_blocks(install).items()
    )


def build_wheel(target: Path, root: Path = ROOT) -> Path:
    """Build the course wheel into ``target`` from a copy of pyproject.toml and src/ (nothing written in ``root``)."""
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="posenc-wheel-") as tmp:
        source = Path(tmp) / "source"
        source.mkdir()
        shutil.copy2(root / "pyproject.toml", source)
        shutil.copytree(
            root / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "*.pyc")
        )
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", tmp, str(source)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"building the course wheel failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        (built,) = Path(tmp).glob("*.whl")
        wheel = target / built.name
        shutil.copyfile(built, wheel)
    return wheel


def kit_date(root: Path = ROOT) -> tuple[int, int, int, int, int, int]:
    """The date and time (UTC) every entry of the kit carries, so that the same sources give the same bytes and an
    unpacked kit's files are dated when they were written: ``SOURCE_DATE_EPOCH`` when set (the reproducible-builds
    convention), else the time of the commit the book is built from, else (no git) the newest of the exercises."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not epoch:
        done = subprocess.run(
            ["git", "-C", str(root), "log", "-1", "--format=%ct"], capture_output=True, text=True, check=False
        )
        epoch = done.stdout.strip() if done.returncode == 0 else ""
    if not epoch:
        epoch = max((path.stat().st_mtime for path in (root / "exercises").glob("*.ipynb")), default=0)
    stamp = time.gmtime(max(int(float(epoch)), 315532800))  # a zip cannot date a file before 1980
    return tuple(stamp[:6])


def notebooks(root: Path = ROOT) -> list[Path]:
    """The notebooks the kit holds, at the paths they have in ``root``."""
    return [nb for folder in NOTEBOOK_FOLDERS for nb in sorted((root / folder).glob("*.ipynb"))]


def kit_bytes(wheel: Path, root: Path = ROOT) -> bytes:
    """The practice kit as zip bytes: the notebooks, the wheel, the README (every entry dated ``kit_date``: same
    input, same bytes)."""
    readme = KIT_README.format(
        wheel=wheel.name, blocks=markdown_blocks(install_command(wheel.name)), first=FIRST_EXERCISE
    )
    members = [(f"{KIT}/README.md", readme.encode())]
    members += [(f"{KIT}/{nb.relative_to(root).as_posix()}", nb.read_bytes()) for nb in notebooks(root)]
    members.append((f"{KIT}/{wheel.name}", wheel.read_bytes()))
    date = kit_date(root)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=date)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return buffer.getvalue()


def write_downloads(outdir: Path, root: Path = ROOT, digest: str | None = None) -> tuple[Path, Path]:
    """Write the wheel and the kit into ``outdir/_downloads``; returns their paths.

    With ``digest`` (the learner code's), a wheel built from the same code is kept instead of rebuilt.
    """
    downloads = Path(outdir) / DOWNLOADS
    wheel = downloads / wheel_name()
    stamp = downloads / f".{wheel.name}.digest"
    if digest is None or not wheel.exists() or not stamp.exists() or stamp.read_text() != digest:
        wheel = build_wheel(downloads, root)
        if digest is not None:
            stamp.write_text(digest)
    kit = downloads / KIT_ZIP
    data = kit_bytes(wheel, root)
    if not kit.exists() or kit.read_bytes() != data:
        kit.write_bytes(data)
    return wheel, kit


def offer_in_practice_menus(outdir: Path, kit: Path) -> int:
    """Add the kit to the download menu of every practice page that lacks it; returns how many were given it."""
    count = 0
    for prefix in PRACTICE_PAGES:
        for page in sorted((Path(outdir) / prefix).glob("*.html")):
            href = os.path.relpath(kit, page.parent).replace(os.sep, "/")
            count += download_menu.offer(page, href=href, **download_menu.KIT)
    return count


def hand_out(app, exception) -> None:
    """build-finished: the wheel and the kit into _downloads/, the kit into the practice pages' menus."""
    if exception is not None or app.builder.format != "html":
        return
    _, kit = write_downloads(
        Path(app.outdir), Path(app.srcdir), digest=learner_sources.sources_digest(Path(app.srcdir))
    )
    offer_in_practice_menus(Path(app.outdir), kit)
