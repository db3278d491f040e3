"""The book hands out practice: the course wheel and the practice kit (book_build/book_kit.py).

Built here into a temporary folder by the same function the book build calls; the built book's copies
and links are checked in tests/test_book.py. A learner following the kit's README to a graded answer,
outside the repository, is tests/test_wheel.py.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
import tomllib
import zipfile
from pathlib import Path

import pytest

from book_build import book_kit, download_menu
from tests.support.learner_env import copy_blocks

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = sorted((ROOT / "exercises").glob("*.ipynb"))
NOTEBOOKS = sorted(p for folder in book_kit.NOTEBOOK_FOLDERS for p in (ROOT / folder).glob("*.ipynb"))


@pytest.fixture(scope="module")
def downloads(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    wheel, kit = book_kit.write_downloads(out, digest="first")
    return out, wheel, kit


def members(kit: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(kit) as z:
        assert z.testzip() is None  # every member's CRC checks
        return {name: z.read(name) for name in z.namelist()}


def test_the_wheel_is_named_as_pip_requires_and_lies_under_downloads(downloads):
    out, wheel, _ = downloads
    assert wheel == out / "_downloads" / book_kit.wheel_name()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert wheel.name.startswith(f"posenc_course-{version}-") and wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as z:
        assert "posenc/__init__.py" in z.namelist() and "grading/__init__.py" in z.namelist()
        (metadata,) = (n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        assert f"\nVersion: {version}\n" in z.read(metadata).decode()  # what the grader reads as installed


def test_the_kit_holds_the_books_notebooks_in_its_folders_the_wheel_and_a_readme(downloads):
    _, wheel, kit = downloads
    got = members(kit)
    assert {name.split("/")[0] for name in got} == {book_kit.KIT}
    notebooks = {f"{book_kit.KIT}/{nb.relative_to(ROOT).as_posix()}": nb for nb in NOTEBOOKS}
    assert set(got) == {*notebooks, f"{book_kit.KIT}/README.md", f"{book_kit.KIT}/{wheel.name}"}
    assert {f"{book_kit.KIT}/exercises/{nb.name}" for nb in EXERCISES} <= set(notebooks)
    for name, nb in notebooks.items():
        assert got[name] == nb.read_bytes(), name
    assert got[f"{book_kit.KIT}/{wheel.name}"] == wheel.read_bytes()
    readme = got[f"{book_kit.KIT}/README.md"].decode()
    assert book_kit.install_command() in readme and f'"{wheel.name}[lab]"' in readme
    assert "Python 3.11 or newer" in readme
    assert f"{book_kit.KIT}/{book_kit.FIRST_EXERCISE}" in got and f"`{book_kit.FIRST_EXERCISE}`" in readme


def page_downloads() -> dict[str, str]:
    """Each page of the book and the file name its download menu gives its source (the theme's ``.ipynb`` or
    ``.md`` entry links ``_sources/<page><suffix>``: a browser saves it under the last part)."""
    from book_build.strict_build import toc_pages

    names = {}
    for page in toc_pages():
        (source,) = [s for s in (ROOT / f"{page}.ipynb", ROOT / f"{page}.md") if s.exists()]
        names[page] = source.name
    return names


def test_no_two_downloadable_files_share_a_name():
    """What the book offers for download lands in one folder (a browser's downloads): each page's own source,
    the kit, the wheel, the whole-book PDF. A chapter, its practice and its answers differ in name."""
    from book_build import book_pdf

    names = [*page_downloads().values(), book_kit.KIT_ZIP, book_kit.wheel_name(), book_pdf.PDF_NAME]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert {"08_rope.ipynb", "08_rope_exercises.ipynb", "08_rope_solutions.ipynb"} <= set(names)


def test_the_download_menu_names_the_files_the_kit_names(downloads):
    """A notebook page's download and the kit's copy of that notebook have one name, and the kit holds every
    notebook page of the book at the page's own path."""
    _, _, kit = downloads
    in_kit = {name.removeprefix(f"{book_kit.KIT}/") for name in members(kit) if name.endswith(".ipynb")}
    offered = {page: name for page, name in page_downloads().items() if name.endswith(".ipynb")}
    assert {f"{page}.ipynb" for page in offered} == in_kit
    for page, name in offered.items():
        assert Path(f"{page}.ipynb").name == name


# a link in a notebook's Markdown: [text](target) or an HTML href/src; a web address or an anchor is no file
LINK = re.compile(r"\]\(([^)\s]+)\)|(?:href|src)=\"([^\"]+)\"")
NOT_A_FILE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#)", re.I)


def relative_links(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    found = [a or b for a, b in LINK.findall(text)]
    return [link.split("#")[0] for link in found if not NOT_A_FILE.match(link)]


def test_every_relative_link_of_every_kit_notebook_resolves_inside_the_unpacked_kit(downloads, tmp_path):
    _, _, kit = downloads
    with zipfile.ZipFile(kit) as z:
        z.extractall(tmp_path)
    home = (tmp_path / book_kit.KIT).resolve()
    shipped = sorted(home.rglob("*.ipynb"))
    assert len(shipped) == len(NOTEBOOKS)
    checked = 0
    for notebook in shipped:
        for link in relative_links(notebook):
            target = (notebook.parent / link).resolve()
            where = f"{notebook.relative_to(home)} links {link}"
            assert target.is_relative_to(home), f"{where}: outside the kit"
            assert target.is_file(), f"{where}: not in the kit"
            checked += 1
    practice = [nb for nb in shipped if nb.parent.name == "exercises"]
    assert all(f"../chapters/{nb.name.removesuffix('_exercises.ipynb')}.ipynb" in relative_links(nb) for nb in practice)
    assert checked >= 3 * len(practice)


def test_the_link_check_sees_a_link_that_leaves_the_kit(tmp_path):
    nb = tmp_path / "exercises" / "01_x_exercises.ipynb"
    nb.parent.mkdir()
    source = "[chapter 1](../chapters/01_x.ipynb#sec), [web](https://example.org/a.ipynb), [here](#q1), [a](../a.md)"
    cells = [{"cell_type": "markdown", "source": [source, ' <img src="fig.svg">']}]
    nb.write_text(json.dumps({"cells": cells}))
    assert relative_links(nb) == ["../chapters/01_x.ipynb", "../a.md", "fig.svg"]


def test_the_kit_is_dated_by_the_commit_it_is_built_from(downloads, tmp_path, monkeypatch):
    """Not a fixed date years ago (JupyterLab showed the unpacked notebooks as "6y ago"): the time of the commit,
    so that the same commit still gives the same bytes."""
    _, _, kit = downloads
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    commit = int(
        subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%ct"], capture_output=True, text=True).stdout
    )
    dated = time.gmtime(commit)[:6]
    with zipfile.ZipFile(kit) as z:
        assert {info.date_time for info in z.infolist()} == {(*dated[:5], dated[5] // 2 * 2)}  # (2-second steps)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # a reproducible build's own date comes first
    assert book_kit.kit_date() == (2026, 1, 1, 0, 0, 0)
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    (tmp_path / "exercises").mkdir()  # no git: the newest exercise's date
    (tmp_path / "exercises" / "01.ipynb").write_text("{}")
    os.utime(tmp_path / "exercises" / "01.ipynb", (1767225600, 1767225600))
    assert book_kit.kit_date(tmp_path) == (2026, 1, 1, 0, 0, 0)


def test_the_lab_extra_the_readme_installs_exists_and_brings_jupyterlab():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(spec.startswith("jupyterlab") for spec in extras["lab"])
    assert any(spec.startswith("ipykernel") for spec in extras["lab"])  # the kernel VS Code selects


def test_the_same_code_gives_the_same_kit_and_keeps_the_wheel(downloads):
    out, wheel, kit = downloads
    before = (wheel.stat().st_mtime_ns, kit.read_bytes())
    again = book_kit.write_downloads(out, digest="first")
    assert again == (wheel, kit)
    assert (wheel.stat().st_mtime_ns, kit.read_bytes()) == before  # not rebuilt, not rewritten


def test_other_code_rebuilds_the_wheel(downloads, tmp_path, monkeypatch):
    _, built, _ = downloads
    (tmp_path / "_downloads").mkdir()
    stale = tmp_path / "_downloads" / book_kit.wheel_name()
    stale.write_bytes(b"a wheel of other code")
    (tmp_path / "_downloads" / f".{stale.name}.digest").write_text("other code")
    calls = []

    def build_wheel(target, root=ROOT):  # the module's build, already run once by the fixture: a copy of it
        calls.append(target)
        (target / built.name).write_bytes(built.read_bytes())
        return target / built.name

    monkeypatch.setattr(book_kit, "build_wheel", build_wheel)
    wheel, kit = book_kit.write_downloads(tmp_path, digest="this code")
    assert calls == [tmp_path / "_downloads"] and wheel.read_bytes() == built.read_bytes()
    assert members(kit)[f"{book_kit.KIT}/{wheel.name}"] == built.read_bytes()
    assert (tmp_path / "_downloads" / f".{stale.name}.digest").read_text() == "this code"


PAGE = """<ul class="dropdown-menu">
      <li><a href="../_sources/exercises/x.ipynb" download>.ipynb</a></li>
      <li>
<button onclick="window.print()" class="btn">print</button>
</li>
</ul>"""


def test_every_practice_page_offers_the_kit_once_in_its_download_menu(tmp_path):
    for folder in ("exercises", "solutions", "chapters"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "01.html").write_text(PAGE)
    kit = tmp_path / "_downloads" / book_kit.KIT_ZIP
    assert book_kit.offer_in_practice_menus(tmp_path, kit) == 2
    assert book_kit.offer_in_practice_menus(tmp_path, kit) == 0  # once
    for folder in ("exercises", "solutions"):
        text = (tmp_path / folder / "01.html").read_text()
        assert f'href="../_downloads/{book_kit.KIT_ZIP}" download' in text
        assert text.index("window.print()") < text.index("practice kit .zip") < text.index("</ul>")
    assert "practice kit" not in (tmp_path / "chapters" / "01.html").read_text()  # chapters have no practice


def test_a_page_without_a_download_menu_is_left_alone(tmp_path):
    page = tmp_path / "p.html"
    page.write_text("<p>no menu</p>")
    assert download_menu.offer(page, href="x", **download_menu.KIT) == 0
    assert page.read_text() == "<p>no menu</p>"


DOCS = {
    "how_to_take_this_course.md": book_kit.install_command(),
    "exercises/README.md": 'python -m pip install ".[lab]"',
}


def words(platform: str, line: str) -> list[str]:
    """A line as its shell splits it (PowerShell's quoting is the same for what these lines hold)."""
    return shlex.split(line, posix=True) if platform != "Windows" else shlex.split(line.replace("\\", "\\\\"))


def check_block(platform: str, lines: list[str], course: str) -> None:
    """The order and the commands a learner's fresh machine can run: Python's own command before the venv is
    active (python3 on Linux and macOS, where a bare python may not exist; py or python on Windows), then the
    venv's python for pip, PyTorch before the course, the CPU build from PyTorch's index on Linux only."""
    commands = [words(platform, line) for line in lines]
    activate = {"Windows": [".venv\\Scripts\\Activate.ps1"]}.get(platform, ["source", ".venv/bin/activate"])
    assert activate in commands, f"{platform}: the venv is never activated: {lines}"
    active = commands.index(activate)
    system_python = {"Windows": {"py", "python"}}.get(platform, {"python3"})
    for command in commands[:active]:
        assert command[0] in system_python, f"{platform}: {command[0]!r} before the venv; there: {system_python}"
    assert commands[0][0] in system_python and commands[0][-3:] == ["-m", "venv", ".venv"], lines[0]
    pip = [i for i, c in enumerate(commands) if c[:4] == ["python", "-m", "pip", "install"]]
    assert all(i > active for i in pip), f"{platform}: pip runs before the venv is active"
    assert not [c for c in commands if c[0] in {"pip", "pip3"}], "a bare pip may be the system's: python -m pip"
    (torch,) = [i for i in pip if "torch" in commands[i][4:]]
    (wheel,) = [i for i in pip if lines[i] == course]
    assert torch < wheel, f"{platform}: the course is installed before PyTorch, so pip picks PyTorch itself"
    cpu = ["--index-url", "https://download.pytorch.org/whl/cpu"]
    if platform == "Linux":
        assert commands[torch][4:] == ["torch", *cpu], f"Linux needs PyTorch's CPU build: {lines[torch]}"
    else:  # macOS and Windows: PyPI's PyTorch is the CPU build (MPS on a Mac); no CUDA comes with it
        assert commands[torch][4:] == ["torch"], f"{platform} takes pip's own torch: {lines[torch]}"
    assert '[lab]"' in lines[wheel], "an extra's brackets unquoted are a glob to zsh (macOS's shell)"
    assert commands[-1] == ["jupyter", "lab"] and len(commands) - 1 > wheel


@pytest.mark.parametrize("doc", sorted(DOCS))
def test_each_platform_block_installs_pytorch_first_with_commands_that_exist_there(doc):
    blocks = copy_blocks((ROOT / doc).read_text(encoding="utf-8"))
    assert list(blocks) == list(book_kit.PLATFORMS)
    for platform, lines in blocks.items():
        check_block(platform, lines, DOCS[doc])
    assert blocks == book_kit.install_blocks(DOCS[doc])


def test_the_kits_readme_has_the_same_blocks(downloads):
    _, wheel, kit = downloads
    readme = members(kit)[f"{book_kit.KIT}/README.md"].decode()
    blocks = copy_blocks(readme)
    assert list(blocks) == list(book_kit.PLATFORMS)
    for platform, lines in blocks.items():
        check_block(platform, lines, book_kit.install_command(wheel.name))
    assert blocks == copy_blocks((ROOT / "how_to_take_this_course.md").read_text(encoding="utf-8"))
    for told in ("python3-venv", "nvidia-smi", "https://pytorch.org/get-started/locally/"):
        assert told in readme, told


@pytest.mark.parametrize(
    "planted, fails",
    [
        (lambda b: {**b, "Linux": [b["Linux"][i] for i in (0, 1, 3, 2, 4)]}, "before PyTorch"),
        (lambda b: {**b, "Linux": [b["macOS"][i] if i == 2 else b["Linux"][i] for i in range(5)]}, "Linux"),
        (lambda b: {**b, "macOS": ["python -m venv .venv", *b["macOS"][1:]]}, "before the venv"),
        (lambda b: {**b, "Windows": [b["Windows"][i] for i in (0, 2, 1, 3, 4)]}, "before the venv is active"),
        (lambda b: {**b, "macOS": [line.replace("python -m pip", "pip") for line in b["macOS"]]}, "system's"),
        (lambda b: {**b, "Windows": [*b["Windows"][:2], b["Linux"][2], *b["Windows"][3:]]}, "pip's own"),
    ],
    ids=["course-first", "linux-cuda", "bare-python", "pip-before-activate", "bare-pip", "windows-cpu-index"],
)
def test_the_block_check_fails_on_planted_mistakes(planted, fails):
    blocks = planted(book_kit.install_blocks())
    with pytest.raises(AssertionError, match=fails):
        for platform, lines in blocks.items():
            check_block(platform, lines, book_kit.install_command())
