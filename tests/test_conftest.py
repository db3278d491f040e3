"""The root conftest.py: markers by what a test needs, and the order the files are handed to pytest-xdist's workers."""

from __future__ import annotations

import itertools

import pytest

import conftest


class Collected:
    def __init__(self):
        self.items = []

    def pytest_collection_finish(self, session):
        self.items = list(session.items)


def collect(*args) -> list:
    """The items pytest collects from ``args`` with this conftest, in the order it hands them out (not run)."""
    collected = Collected()
    code = pytest.main([*args, "--collect-only", "-qq"], plugins=[collected])
    assert code == 0
    return collected.items


FILES = [
    "tests/test_posenc.py",
    "tests/test_learner_stacks.py",
    "exercises/01_order_problem_exercises.ipynb",
    "tests/test_grading_runner.py",
    "tests/test_book.py",
    "tests/test_browser_book.py",
    "tests/test_browser_book_dark.py",
]


@pytest.fixture(scope="module")
def items():
    """A file of each tier, given fastest first."""
    return collect(*FILES, "--nbval-lax")


def test_each_test_is_marked_by_what_it_needs(items):
    marked = {(i.path.name, name) for i in items for name in ("browser", "book", "slow") if i.get_closest_marker(name)}
    assert {("test_browser_book_dark.py", "browser"), ("test_browser_book_dark.py", "book")} <= marked
    assert ("test_book.py", "book") in marked and ("test_book.py", "browser") not in marked
    assert ("01_order_problem_exercises.ipynb", "slow") in marked
    assert not {m for m in marked if m[0] == "test_posenc.py"}, marked
    # browser and book imply slow: make check (-m "not slow") runs neither
    assert all(item.get_closest_marker("slow") for item in items if conftest.tier(item) < conftest.TIERS.index("fast"))


def test_files_are_handed_out_whole_in_tier_order(items):
    """Each file's tests together and in their own order; the files by tier, the longest first, whatever order they
    were named in."""
    files = list(dict.fromkeys(item.path.name for item in items))
    assert files == [
        "test_browser_book.py",
        "test_learner_stacks.py",
        "test_browser_book_dark.py",
        "test_book.py",
        "test_grading_runner.py",
        "01_order_problem_exercises.ipynb",
        "test_posenc.py",
    ], files
    runs = [name for name, _ in itertools.groupby(item.path.name for item in items)]
    assert runs == files, runs  # no file split in two
    alone = collect("tests/test_browser_book_dark.py")
    assert [i.nodeid for i in items if i.path.name == "test_browser_book_dark.py"] == [i.nodeid for i in alone]


def test_the_two_browser_modules_of_the_book_split_the_visits_between_them(items):
    """Every page in every screen mode is checked once, the laptop and phone by one module, dark mode and print by
    the other: a worker makes each half of the visits (VISIT_GROUPS)."""
    from book_build.book_visits import MODES, PAGES, VISIT_GROUPS

    modes, pairs = {}, set()
    for item in items:
        params = getattr(item, "callspec", None) and item.callspec.params
        if not params or not item.path.name.startswith("test_browser_book"):
            continue
        mode = params.get("mode") or params.get("axe_mode")
        if item.originalname == "test_printed_page_cuts_nothing_and_quizzes_carry_answers":
            mode = "print"
        if mode:
            modes.setdefault(item.path.name, set()).add(mode)
        if item.originalname == "test_page_math_is_rendered":
            pairs.add((params["page"], params["mode"]))
    assert modes == {
        "test_browser_book.py": set(VISIT_GROUPS["light"]),
        "test_browser_book_dark.py": set(VISIT_GROUPS["dark"]),
    }, modes
    assert pairs == {(page, mode) for page in PAGES for mode in MODES}


FAST = """
import pytest


@pytest.mark.parametrize("n", range(5))
def test_quick(n):
    pass
"""

LONG = """
import time
import pytest


@pytest.mark.parametrize("n", range(2))
def test_long(n):
    time.sleep(1)
"""


@pytest.mark.slow  # two xdist workers started in a fresh pytest: seconds
def test_the_longest_files_start_first_side_by_side(tmp_path):
    """End to end, as make test runs: pytest -n 2 --dist loadfile --no-loadscope-reorder with this conftest. The two
    browser files (a tier ahead of the fast one, though it is collected first and has more tests: xdist's own
    reordering would put it first) are the first thing each worker runs, each file on one worker."""
    import re
    from pathlib import Path

    from tests.support.pytest_run import run_tests

    root = Path(conftest.__file__).parent
    (tmp_path / "test_a_fast.py").write_text(FAST)
    (tmp_path / "test_browser_one.py").write_text(LONG)
    (tmp_path / "test_browser_two.py").write_text(LONG)
    done = run_tests(
        ["-p", "conftest", "-n", "2", "--dist", "loadfile", "--no-loadscope-reorder", "-v"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(root)},
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = re.findall(r"\[(gw\d)\] .*?PASSED (\S+)::", done.stdout)
    assert len(ran) == 9, done.stdout[-3000:]
    first = {}
    for worker, file in ran:
        first.setdefault(worker, file)
    assert sorted(first.values()) == ["test_browser_one.py", "test_browser_two.py"], ran
    workers = {file: {w for w, f in ran if f == file} for _, file in ran}
    assert all(len(w) == 1 for w in workers.values()), workers
