"""The time table of how_to_take_this_course.md is the one the notebooks give (tools/reading_time.py), and the
page states the formula the generator uses."""

import re
import shutil
from pathlib import Path

from tools import reading_time

ROOT = Path(__file__).resolve().parent.parent


def test_the_pages_table_is_current():
    assert reading_time.main(["--check"]) == 0, "run: make reading-time"


def test_the_page_states_the_formula_the_table_is_computed_with():
    said = " ".join((ROOT / reading_time.PAGE).read_text(encoding="utf-8").split())
    spelled = {1: "one", 3: "three", 10: "ten"}
    assert f"reading the text at {reading_time.WORDS_PER_MINUTE} words a minute" in said
    assert f"{spelled[reading_time.CODE_CELL]} minute per code cell" in said
    assert (
        f"{spelled[reading_time.QUESTION]} minutes per question plus {spelled[reading_time.CODING_QUESTION]} "
        "per coding question"
    ) in said


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
    # one more word in the first chapter's row than its notebook has, whatever that count is today
    stale = re.sub(r"(\| \{doc\}`1\.[^|]*\| )(\d+)", lambda m: f"{m[1]}{int(m[2]) + 1}", current, count=1)
    assert stale != current
    page.write_text(stale, encoding="utf-8")
    assert reading_time.main(["--check"], root=tmp_path) == 1
    assert "not the one the notebooks give" in capsys.readouterr().out
    assert reading_time.main([], root=tmp_path) == 0
    assert reading_time.main(["--check"], root=tmp_path) == 0
    assert page.read_text(encoding="utf-8") == (ROOT / reading_time.PAGE).read_text(encoding="utf-8")


def test_rounding_is_to_five_minutes_and_never_zero():
    assert [reading_time.five(m) for m in (0.2, 7.4, 7.6, 61)] == [5, 5, 10, 60]
    assert [reading_time.hours(m) for m in (480, 300, 270)] == ["8", "5", "4½"]
