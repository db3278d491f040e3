"""The course's version means something: one number, from pyproject.toml, in everything a learner sees.

* The page of versions (changelog.md, in the book's table of contents) has the version as its newest entry, and its
  entries are versions in order, newest first.
* The practice kit's file and folder, the wheel and the install lines of the learner's page carry that version;
  every page of the book shows it at its foot, linked to the page of versions.
* The grader notices a course of another version installed under a running kernel (``grader._stale``).

Fast tier: no build (the built pages' footers are checked in tests/test_book.py).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml
from packaging.version import Version

from book_build import book_assets, book_kit

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
CHANGELOG = ROOT / f"{book_assets.VERSIONS_PAGE}.md"


def entries() -> list[str]:
    return re.findall(r"^## (\S+)$", CHANGELOG.read_text(encoding="utf-8"), re.M)


def test_the_version_is_major_minor_patch():
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION), VERSION
    assert Version(VERSION) >= Version("1.0.0")  # the first release; drafts were never handed out


def test_the_page_of_versions_leads_with_this_version_and_lists_them_newest_first():
    listed = entries()
    assert listed and listed[0] == VERSION, f"changelog.md's newest entry is {listed[:1]}, pyproject says {VERSION}"
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in listed), listed
    assert listed == sorted(listed, key=Version, reverse=True) and len(set(listed)) == len(listed), listed
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages = [entry["file"] for part in toc["parts"] for entry in part["chapters"]]
    assert book_assets.VERSIONS_PAGE in pages
    text = CHANGELOG.read_text(encoding="utf-8")
    for part in ("Patch", "Minor", "Major"):  # what each part of the number means for a learner's work
        assert re.search(rf"^{part} \(", text, re.M), part


def test_the_kit_the_wheel_and_the_learners_page_carry_the_version():
    assert book_kit.distribution() == ("posenc-course", VERSION)
    assert book_kit.KIT_ZIP == f"{book_kit.KIT}.zip" and book_kit.KIT.endswith(f"-{VERSION}")
    assert book_kit.wheel_name() == f"posenc_course-{VERSION}-py3-none-any.whl"
    page = (ROOT / "how_to_take_this_course.md").read_text(encoding="utf-8")
    assert f"(`{book_kit.KIT}`)" in page  # the folder the kit unpacks into
    typed = set(re.findall(r"posenc[-_]course[-_a-z]*-(\d+\.\d+\.\d+)", page))
    typed |= set(re.findall(r"posenc[-_]course[-_a-z]*-(\d+\.\d+\.\d+)", (ROOT / "exercises/README.md").read_text()))
    assert typed == {VERSION}, f"the learner's pages name the versions {typed}; pyproject says {VERSION}"


def test_every_page_shows_the_version_linked_to_the_page_of_versions():
    context = {"pathto": lambda name: f"../{name}.html", "theme_extra_footer": ""}
    book_assets.course_version_in_footer(None, "chapters/08_rope", "page.html", context, None)
    footer = context["theme_extra_footer"]
    assert f'<a href="../{book_assets.VERSIONS_PAGE}.html">{VERSION}</a>' in footer


def test_a_course_of_another_version_installed_under_the_kernel_is_named(monkeypatch, tmp_path):
    """What a learner who installs a newer kit's wheel into a running kernel gets when a check then fails: the
    course's loaded and installed versions, and what to do."""
    from grading import grader

    loaded = grader._COURSE
    assert loaded, "the course is installed (editable or from its wheel), so its version is known"
    assert not any(line.startswith("the course") for line in grader._stale())
    newer = f"{Version(VERSION).major + 1}.0.0"
    assert newer != loaded
    info = tmp_path / f"posenc_course-{newer}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: posenc-course\nVersion: {newer}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert f"the course {loaded} is loaded but {newer} is installed" in grader._stale()
    told = grader._uncheckable("the grader failed (KeyError: 'x')")
    assert (
        f"the course {loaded} is loaded but {newer} is installed: an install replaced it after this kernel started. "
        "Restart the kernel, then run the notebook from the top."
    ) in told
