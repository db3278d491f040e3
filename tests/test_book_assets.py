"""The book's execution-cache key (book_build/learner_sources.py) follows the learner-facing code, nothing else.

The key is ``sources_digest``: names and contents of ``learner_code``, the files of the installable
distribution read from ``pyproject.toml``. Each test works on a copy of the repository's code in a
temporary folder, edits one file there and compares keys.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from book_build import book_assets, learner_sources

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def tree(tmp_path):
    """A copy of pyproject.toml, src/, book_build/ and tools/ (no caches)."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for folder in ("src", "book_build", "tools"):
        shutil.copytree(
            ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
        )
    return tmp_path


def edit(path: Path) -> None:
    path.write_text(path.read_text() + "\n# an edit\n")


def test_learner_code_is_every_file_under_src_and_nothing_else():
    """What the wheel ships (pyproject.toml) is all the code in src/: a new module there is hashed and shipped."""
    listed = {p.relative_to(ROOT).as_posix() for p in learner_sources.learner_code(ROOT)}
    on_disk = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "src").rglob("*")
        if p.is_file()
        and p.suffix in {".py", ".js", ".css"}
        and "__pycache__" not in p.parts
        and not any(part.endswith(".egg-info") for part in p.parts)
    }
    assert listed == on_disk
    assert {
        "src/posenc/__init__.py",
        "src/grading/bank/ch01.py",
        "src/posenc_course/explorers.js",
        "src/posenc_course/quizzes.js",
        "src/posenc_course/quizzes.css",
    } <= listed


@pytest.mark.parametrize(
    "changed",
    [
        "src/posenc/__init__.py",
        "src/posenc/_engine.py",
        "src/grading/bank/ch06.py",
        "src/grading/kinds.py",
        "src/posenc_course/explorers.js",
        "src/posenc_course/quizzes.css",
        "src/posenc_course/tables.py",
    ],
)
def test_an_edit_of_learner_code_changes_the_key(tree, changed):
    before = learner_sources.sources_digest(tree)
    edit(tree / changed)
    assert learner_sources.sources_digest(tree) != before


@pytest.mark.parametrize("changed", ["tools/benchmarks.py", "tools/make_exercises.py", "book_build/math_prerender.py"])
def test_an_edit_of_tools_or_build_code_keeps_the_key(tree, changed):
    before = learner_sources.sources_digest(tree)
    edit(tree / changed)
    assert learner_sources.sources_digest(tree) == before


def test_a_renamed_module_changes_the_key(tree):
    before = learner_sources.sources_digest(tree)
    (tree / "src/posenc_course/tables.py").rename(tree / "src/posenc_course/tables2.py")
    assert learner_sources.sources_digest(tree) != before


def fake_app(root: Path):
    config = types.SimpleNamespace(nb_execution_cache_path="_build/.jupyter_cache")
    return types.SimpleNamespace(srcdir=str(root)), config


def test_the_cache_is_emptied_only_when_the_code_changed(tree):
    cache = tree / "_build" / ".jupyter_cache"
    cache.mkdir(parents=True)
    (cache / "entry").write_text("executed outputs")

    app, config = fake_app(tree)
    book_assets.invalidate_stale_cache(app, config)  # no stamp yet: the cache is of unknown code
    assert app.posenc_sources_changed and not cache.exists()
    book_assets.record_sources(app, None)  # a finished build marks what it executed
    assert not learner_sources.code_changed_since_build(tree)

    cache.mkdir()
    (cache / "entry").write_text("executed outputs")
    edit(tree / "tools/benchmarks.py")
    app, config = fake_app(tree)
    book_assets.invalidate_stale_cache(app, config)
    assert not app.posenc_sources_changed and (cache / "entry").exists()

    edit(tree / "src/grading/bank/ch02.py")
    assert learner_sources.code_changed_since_build(tree)
    app, config = fake_app(tree)
    book_assets.invalidate_stale_cache(app, config)
    assert app.posenc_sources_changed and not cache.exists()


def test_a_failed_build_does_not_mark_the_cache(tree):
    app, config = fake_app(tree)
    book_assets.invalidate_stale_cache(app, config)
    book_assets.record_sources(app, RuntimeError("the build failed"))
    assert learner_sources.code_changed_since_build(tree)


def test_the_strict_build_rebuilds_after_a_code_change(monkeypatch):
    """book_build.strict_build.stale_pages (what make book-strict rebuilds) follows the same key."""
    from book_build import strict_build

    monkeypatch.setattr(learner_sources, "code_changed_since_build", lambda root=ROOT, cache_path=None: True)
    assert strict_build.stale_pages() == strict_build.toc_pages()


def test_kernels_started_for_the_parallel_execution_get_one_thread_each(monkeypatch):
    """Inside, every thread-count variable a kernel inherits is 1; after, each is as it was (set or not)."""
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    with book_assets.one_thread_per_kernel():
        inside = {name: os.environ.get(name) for name in book_assets.THREAD_VARIABLES}
        code = "import torch, os; print(torch.get_num_threads(), os.environ['OPENBLAS_NUM_THREADS'])"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert inside == dict.fromkeys(book_assets.THREAD_VARIABLES, "1")
    assert out.split() == ["1", "1"]  # what a kernel started there sees
    assert os.environ["OMP_NUM_THREADS"] == "7" and "MKL_NUM_THREADS" not in os.environ


def test_a_page_keeps_one_copy_of_the_explorers_module():
    """Chapter 10 shows two explorers, each output carrying explorers.js: its page keeps the first copy (which mounts
    both) and both explorers; other raw HTML stays as it was."""
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    from posenc_course import explorers

    twins = [explorers.RopeScalingExplorer().static_html(), explorers.RopeRulesExplorer().static_html()]
    other = '<p class="quiz">a quiz</p>'
    document = new_document("page", get_default_settings(Parser))
    for text in (twins[0], other, twins[1]):
        document += nodes.raw("", text, format="html", classes=["output", "text_html"])
    book_assets.one_renderer_per_page(None, document, "chapters/10_rope_in_practice")
    shown = [raw.astext() for raw in document.findall(nodes.raw)]
    page = "".join(shown)
    module = explorers.BROWSER_MODULE.read_text()
    assert page.count(explorers.RENDERER_SCRIPT) == page.count(module) == 1 and shown[0] == twins[0]
    assert shown[1] == other and shown[2] == twins[1].split(explorers.RENDERER_SCRIPT)[0]
    assert page.count('<div class="posenc-explorer" data-spec=') == 2
    assert all(raw["classes"] == ["output", "text_html"] for raw in document.findall(nodes.raw))
