"""tools/generated_block.py: the block between a file's BEGIN and END lines, rewritten or checked."""

from __future__ import annotations

from tools import generated_block

BEGIN, END = "% BEGIN the block", "% END the block"
PAGE = f"before\n{BEGIN}\nold line\n{END}\nafter\n"


def test_only_the_block_changes():
    assert generated_block.rewritten(PAGE, "new line", BEGIN, END) == f"before\n{BEGIN}\nnew line\n{END}\nafter\n"


def run(path, *argv):
    return generated_block.main(
        list(argv),
        prog="t",
        description="t",
        path=path,
        block=lambda: "new line",
        begin=BEGIN,
        end=END,
        what="the block",
        make="block",
    )


def test_check_fails_on_a_stale_block_and_a_run_rewrites_it(tmp_path, capsys):
    path = tmp_path / "page.md"
    path.write_text(PAGE, encoding="utf-8")
    assert run(path, "--check") == 1 and "the block is not current (run: make block)" in capsys.readouterr().out
    assert path.read_text(encoding="utf-8") == PAGE  # a check writes nothing
    assert run(path) == 0 and "new line" in path.read_text(encoding="utf-8")
    assert run(path, "--check") == 0
