"""Appendix B, the ledger of the field's claims: every row names its source, a verdict and the book's test of it.

Whether each linked label exists and each cited key resolves is checked with the rest of the book
(tests/test_cross_references.py, tests/test_bibliography.py); here, that no row goes without them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "appendix" / "claims.md"
VERDICTS = {"confirmed", "qualified", "refuted", "not tested"}


def rows() -> list[list[str]]:
    """The cells of every row of the page's list-tables (header rows included), as stripped text."""
    found = []
    for table in re.findall(r":::\{list-table\}.*?\n(.*?)^:::", PAGE.read_text(encoding="utf-8"), re.S | re.M):
        body = "\n".join(line for line in table.splitlines() if not line.startswith(":"))
        for row in re.split(r"^\* ", body, flags=re.M)[1:]:
            cells = re.split(r"^\s*- ", "- " + row.lstrip("- "), flags=re.M)[1:]
            found.append([" ".join(cell.split()) for cell in cells])
    return found


CLAIMS = [row for row in rows() if row[0] != "Claim"]


def test_the_ledger_has_its_tables_and_enough_claims():
    assert len(rows()) - len(CLAIMS) == 3  # three tables, each with its header row
    assert len(CLAIMS) >= 8


@pytest.mark.parametrize("row", CLAIMS, ids=[row[0][:40] for row in CLAIMS])
def test_every_claim_has_a_cited_source_a_verdict_and_a_linked_test(row):
    claim, source, verdict, where = row
    assert claim and re.search(r"\{cite\}`[^`]+`", source), row
    assert verdict in VERDICTS, row
    assert re.search(r"\{ref\}`[^`]*<[\w-]+>`", where), row
    assert verdict == "confirmed" or len(where.split()) >= 12, f"a {verdict} claim says what the test found: {row}"


def test_the_ledger_is_in_the_book():
    toc = (PAGE.parents[1] / "_toc.yml").read_text(encoding="utf-8")
    assert "appendix/claims" in toc
