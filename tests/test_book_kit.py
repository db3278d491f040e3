"""The book hands out practice: the course wheel and the practice kit (book_build/book_kit.py).

Built here into a temporary folder by the same function the book build calls; the built book's copies
and links are checked in tests/test_book.py. A learner following the kit's README to a graded answer,
outside the repository, is tests/test_wheel.py.
"""

from __future__ import annotations

import os
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from book_build import book_kit, download_menu

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = sorted((ROOT / "exercises").glob("*.ipynb"))


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
    assert wheel.name.startswith("posenc_course-0.1.0-") and wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as z:
        assert "posenc.py" in z.namelist() and "grading/__init__.py" in z.namelist()


def test_the_kit_holds_every_exercise_the_wheel_and_a_readme_in_one_folder(downloads):
    _, wheel, kit = downloads
    got = members(kit)
    assert {name.split("/")[0] for name in got} == {book_kit.KIT}
    assert {f"{book_kit.KIT}/{nb.name}" for nb in EXERCISES} | {f"{book_kit.KIT}/README.md"} < set(got)
    for nb in EXERCISES:
        assert got[f"{book_kit.KIT}/{nb.name}"] == nb.read_bytes(), nb.name
    assert got[f"{book_kit.KIT}/{wheel.name}"] == wheel.read_bytes()
    readme = got[f"{book_kit.KIT}/README.md"].decode()
    assert book_kit.install_command() in readme and f'"{wheel.name}[lab]"' in readme
    assert book_kit.TORCH_CPU in readme and "Python 3.11 or newer" in readme


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
    assert download_menu.offer(page, href="x", **book_kit.MENU_ENTRY) == 0
    assert page.read_text() == "<p>no menu</p>"
