"""The time table of how_to_take_this_course.md is the one the notebooks give (tools/reading_time.py), and the
page states the formula the generator uses."""

import re
import shutil
from pathlib import Path

import nbformat

from tools import reading_time

ROOT = Path(__file__).resolve().parent.parent


def test_the_pages_table_is_current():
    assert reading_time.main(["--check"]) == 0, "run: make reading-time"


SPELLED = {"one": 1, "two": 2, "three": 3, "five": 5, "ten": 10}


def stated_recipe(page: str) -> dict:
    """The numbers of the estimate as the page states it above the table."""
    said = " ".join(page.split())
    patterns = {
        "words_per_minute": r"at (\d+) words a minute",
        "code_cell": r"plus (\w+) minutes? per code cell",
        "question": r"plus (\w+) minutes? per question",
        "coding_question": r"or (\w+) minutes instead for a coding question",
        "rounding": r"rounded to the nearest (\w+) minutes",
    }
    found = {}
    for name, pattern in patterns.items():
        match = re.search(pattern, said)
        assert match, f"the page no longer states {name} as /{pattern}/"
        found[name] = SPELLED.get(match.group(1)) or int(match.group(1))
    return found


def test_the_recipe_the_page_states_reproduces_its_table():
    """Every time in the table follows from the recipe as the page words it (not from the generator's code): the
    chapter's words and code cells, which the table lists, and the exercises' text, questions and coding questions."""
    page = (ROOT / reading_time.PAGE).read_text(encoding="utf-8")
    recipe = stated_recipe(page)
    assert recipe == {
        "words_per_minute": reading_time.WORDS_PER_MINUTE,
        "code_cell": reading_time.CODE_CELL,
        "question": reading_time.QUESTION,
        "coding_question": reading_time.CODING_QUESTION,
        "rounding": 5,
    }

    def rounded(minutes):
        return max(recipe["rounding"], recipe["rounding"] * round(minutes / recipe["rounding"]))

    row = re.compile(
        r"^\| \{doc\}`[^<]*<([^>]+)>` \| (\d+) \| (\d+) \| (\d+) min \|(?: (\d+) \((\d+)\) \| (\d+) min)?", re.M
    )
    rows = row.findall(page)
    assert len(rows) == len(reading_time.notebooks())
    for target, words, cells, reading, questions, coding, exercises in rows:
        assert int(reading) == rounded(int(words) / recipe["words_per_minute"] + int(cells) * recipe["code_cell"])
        if questions:
            exercise = ROOT / "exercises" / f"{Path(target).name}_exercises.ipynb"
            text = reading_time.words(nbformat.read(exercise, as_version=4))
            plain, coding = int(questions) - int(coding), int(coding)
            minutes = (
                text / recipe["words_per_minute"] + plain * recipe["question"] + coding * recipe["coding_question"]
            )
            assert int(exercises) == rounded(minutes), target


def test_one_row_per_chapter_and_the_appendix_and_a_total_of_the_chapters():
    table = reading_time.generated()
    rows = [line for line in table.splitlines() if line.startswith("| {doc}")]
    assert len(rows) == len(reading_time.notebooks()) >= 9
    assert rows[0].startswith("| {doc}`1. The order problem <chapters/01_order_problem>` |")
    assert rows[-1].startswith("| {doc}`Appendix A <appendix/fast_angles>` |")
    chapters = [reading_time.estimate(p) for p in reading_time.notebooks() if p.parent.name == "chapters"]
    reading = reading_time.hours(sum(r["reading"] for r in chapters))
    assert f"In all, about {reading} hours of reading" in table


def test_a_stale_table_is_caught_and_rewritten(tmp_path, capsys):
    for folder in ("chapters", "appendix", "exercises"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    page = tmp_path / reading_time.PAGE
    current = (ROOT / reading_time.PAGE).read_text(encoding="utf-8")
    stale = re.sub(r"(\| \{doc\}`1\. [^|]*\| )\d+ \|", r"\g<1>1 |", current, count=1)  # chapter 1: 1 word
    assert stale != current
    page.write_text(stale, encoding="utf-8")
    assert reading_time.main(["--check"], root=tmp_path) == 1
    assert "the time table is not current (run: make reading-time)" in capsys.readouterr().out
    assert reading_time.main([], root=tmp_path) == 0
    assert reading_time.main(["--check"], root=tmp_path) == 0
    assert page.read_text(encoding="utf-8") == (ROOT / reading_time.PAGE).read_text(encoding="utf-8")


def test_rounding_is_to_five_minutes_and_never_zero():
    assert [reading_time.five(m) for m in (0.2, 7.4, 7.6, 61)] == [5, 5, 10, 60]
    assert [reading_time.hours(m) for m in (480, 300, 270)] == ["8", "5", "4½"]
