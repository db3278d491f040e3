"""exercises/ is generated from solutions/: no solution survives, it is up to date,
and a learner's uncommitted answers are never overwritten without --force."""

import os
import re
import subprocess
from pathlib import Path

import nbformat
import pytest

from tools import colab_cell, make_exercises, nbhygiene
from tools.make_exercises import AuthoringError, exercise, strip_code, strip_markdown

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
HEADER = re.compile(r"^\s*(@|def |class |async def )")


def solution_lines(nb):
    """Every line inside a solution region, minus blanks, markers and def/class headers."""
    lines = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            inside = False
            for line in cell.source.splitlines():
                if make_exercises.BEGIN.match(line):
                    inside = True
                elif make_exercises.END.match(line):
                    inside = False
                elif inside and len(line.strip()) > 3 and not HEADER.match(line):
                    lines.append(line.strip())
        else:
            for region in make_exercises.MD_REGION.findall(cell.source):
                lines += [line.strip() for line in region.splitlines()[1:-1] if len(line.strip()) > 3]
    return lines


def exercise_of(solution: Path) -> Path:
    return ROOT / "exercises" / make_exercises.practice_name(make_exercises.chapter_stem(solution), "exercises")


def test_there_is_an_exercise_for_every_solution():
    assert len(SOLUTIONS) >= 5  # one per chapter
    assert sorted((ROOT / "exercises").glob("*.ipynb")) == [exercise_of(p) for p in SOLUTIONS]


def test_practice_notebooks_are_named_for_their_chapter_and_what_they_hold():
    chapters = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))
    assert [make_exercises.chapter_stem(p) for p in SOLUTIONS] == chapters
    for path in SOLUTIONS:
        assert path.name == make_exercises.practice_name(make_exercises.chapter_stem(path), "solutions")
        assert exercise_of(path).name.endswith("_exercises.ipynb")
    assert make_exercises.chapter_stem(ROOT / "chapters" / "08_rope.ipynb") == "08_rope"
    assert make_exercises.chapter_stem(Path("exercises/08_rope_exercises.ipynb")) == "08_rope"
    with pytest.raises(ValueError, match="folder"):
        make_exercises.practice_name("08_rope", "chapters")


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_no_solution_line_survives_into_the_exercise(path):
    solution = nbformat.read(path, as_version=4)
    ex = nbformat.read(exercise_of(path), as_version=4)
    text = "\n".join(c.source for c in ex.cells)
    install = colab_cell.first_code_cell(ex)  # the same generated cell in both notebooks: no solution in it
    exercise_lines = {line.strip() for c in ex.cells if c is not install for line in c.source.splitlines()}
    leaked = [line for line in solution_lines(solution) if line in exercise_lines]
    assert solution_lines(solution), "the solution has no solution regions"
    assert not leaked, f"solution lines found in the exercise: {leaked[:5]}"
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert "assert_all_correct" not in text


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_exercise_keeps_ids_placeholders_and_summary(path):
    solution = nbformat.read(path, as_version=4)
    ex = nbformat.read(exercise_of(path), as_version=4)
    source_ids = [c.id for c in solution.cells]
    ids = [c.id for c in ex.cells]
    assert ids == [i for i in source_ids if i in ids]  # a subsequence: same ids, same order
    assert nbhygiene.problems(ex) == []
    code = "\n".join(c.source for c in ex.cells if c.cell_type == "code")
    n_checks = len(re.findall(r'^check\("', code, re.M))
    assert n_checks == len(re.findall(r"# YOUR (ANSWER|CODE) HERE\n(\n\n)?check\(", code))
    assert f'summary("{path.name[:2]}")' in ex.cells[-1].source


def test_exercises_are_up_to_date(capsys):
    status = make_exercises.main(["--check", "--root", str(ROOT)])
    assert status == 0, capsys.readouterr().out + "\nrun: make exercises"


# --------------------------------------------------------------------------
# The transformation itself
# --------------------------------------------------------------------------


def test_assignment_becomes_a_placeholder():
    src = 'x = 1\n# BEGIN SOLUTION\nanswer = posenc.frequencies(512)[255]\n# END SOLUTION\ncheck("02.3", answer)'
    assert strip_code(src) == 'x = 1\nanswer = ...  # YOUR ANSWER HERE\ncheck("02.3", answer)'


def test_every_assigned_name_stays_defined():
    src = "# BEGIN SOLUTION\nangle = 3 * w\nanswer = f(angle)\nangle += 1\n# END SOLUTION"
    assert strip_code(src) == "angle = ...  # YOUR ANSWER HERE\nanswer = ...  # YOUR ANSWER HERE"


def test_definitions_become_stubs_that_run():
    src = (
        "# BEGIN SOLUTION\ndef f(d_model,\n      base=10000.0):\n    # secret\n    h = d_model // 2\n    return h\n"
        "class Layer(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
        "def g(x): return x + 1\n# END SOLUTION\ncheck('02.5', f)"
    )
    out = strip_code(src)
    assert out == (
        "def f(d_model,\n      base=10000.0):\n    ...  # YOUR CODE HERE\n"
        "class Layer(torch.nn.Module):\n    ...  # YOUR CODE HERE\n"
        "def g(x):\n    ...  # YOUR CODE HERE\ncheck('02.5', f)"
    )
    namespace = {"torch": __import__("torch"), "check": lambda *a: None}
    exec(out, namespace)
    assert namespace["f"](8) is None and namespace["g"](1) is None


def test_indented_region_and_bare_statements():
    src = "def f(x):\n    # BEGIN SOLUTION\n    y = x + 1\n    return y\n    # END SOLUTION\n"
    assert strip_code(src) == "def f(x):\n    ...  # YOUR CODE HERE"
    assert strip_code('# BEGIN SOLUTION\ngrading.assert_all_correct("02")\n# END SOLUTION') == ""
    assert strip_code("print(1)") == "print(1)"


@pytest.mark.parametrize(
    "src",
    [
        "# BEGIN SOLUTION\nx = 1",
        "x = 1\n# END SOLUTION",
        "# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION",
        "# BEGIN SOLUTION\nx = (\n# END SOLUTION",
    ],
)
def test_broken_markers_are_reported(src):
    with pytest.raises(AuthoringError):
        strip_code(src)


def test_markdown_regions_are_removed():
    text = "Question?\n\n<!-- BEGIN SOLUTION -->\n**Answer.** 42, because...\n<!-- END SOLUTION -->\n\nMore."
    assert strip_markdown(text) == "Question?\n\nMore."
    assert strip_markdown("a <!-- BEGIN SOLUTION -->secret<!-- END SOLUTION --> b") == "a  b"
    with pytest.raises(AuthoringError):
        strip_markdown("<!-- BEGIN SOLUTION -->\nno end")


def demo_notebook(answer="42", question="Question."):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Practice: demo"),
        nbformat.v4.new_markdown_cell("<!-- BEGIN SOLUTION -->\nOnly for maintainers.\n<!-- END SOLUTION -->"),
        nbformat.v4.new_markdown_cell(f"{question}\n<!-- BEGIN SOLUTION -->\nThe answer is 42.\n<!-- END SOLUTION -->"),
        nbformat.v4.new_code_cell(f"# BEGIN SOLUTION\nanswer = {answer}\n# END SOLUTION\nprint(answer)"),
        nbformat.v4.new_code_cell("# BEGIN SOLUTION\nassert answer == 42\n# END SOLUTION"),
    ]
    for n, cell in enumerate(nb.cells):
        cell.id = f"demo-{n}"
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", text="42\n")]
    nb.cells[3].execution_count = 1
    return nb


def test_exercise_drops_emptied_cells_and_keeps_ids():
    ex = exercise(demo_notebook())
    assert [c.id for c in ex.cells] == ["demo-0", "demo-2", "demo-3"]
    assert ex.cells[1].source == "Question."
    assert ex.cells[2].source == "answer = ...  # YOUR ANSWER HERE\nprint(answer)"
    assert ex.cells[2].outputs == [] and ex.cells[2].execution_count is None


# --------------------------------------------------------------------------
# Never overwrite a learner's answers (in a throwaway git repository)
# --------------------------------------------------------------------------


def git(repo, *args):
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "solutions").mkdir()
    nbformat.write(demo_notebook(), tmp_path / "solutions" / "01_demo_solutions.ipynb")
    git(tmp_path, "init", "-q")
    return tmp_path


def run(repo, capsys, *args):
    status = make_exercises.main([*args, "--root", str(repo)])
    return status, capsys.readouterr().out


def test_generate_then_up_to_date(repo, capsys):
    target = repo / "exercises" / "01_demo_exercises.ipynb"
    assert run(repo, capsys, "--check")[0] == 1 and not target.exists()
    status, out = run(repo, capsys)
    assert status == 0 and "written" in out
    assert target.read_text() == make_exercises.render(repo / "solutions" / "01_demo_solutions.ipynb")
    assert run(repo, capsys, "--check") == (0, "exercises/01_demo_exercises.ipynb: up to date\n")
    assert run(repo, capsys)[1].endswith("up to date\n")


def learner_answers(target):
    text = target.read_text().replace("answer = ...  # YOUR ANSWER HERE", "answer = 41")
    target.write_text(text)
    return text


def test_refuses_to_overwrite_committed_exercise_with_changes(repo, capsys):
    run(repo, capsys)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "course")
    target = repo / "exercises" / "01_demo_exercises.ipynb"
    mine = learner_answers(target)
    # the source moves on
    nbformat.write(demo_notebook("6 * 7", "A clearer question."), repo / "solutions" / "01_demo_solutions.ipynb")
    status, out = run(repo, capsys)
    assert status == 1
    assert "exercises/01_demo_exercises.ipynb" in out and "NOT overwritten" in out and "--force" in out
    assert target.read_text() == mine
    status, out = run(repo, capsys, "--force")
    assert status == 0 and target.read_text() == make_exercises.render(repo / "solutions" / "01_demo_solutions.ipynb")


def test_refuses_to_overwrite_untracked_exercise_that_differs(repo, capsys):
    run(repo, capsys)
    target = repo / "exercises" / "01_demo_exercises.ipynb"
    mine = learner_answers(target)
    status, out = run(repo, capsys)
    assert status == 1 and "NOT overwritten" in out and target.read_text() == mine


def test_regenerates_a_clean_committed_exercise_without_force(repo, capsys):
    run(repo, capsys)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "course")
    nbformat.write(demo_notebook("6 * 7", "A clearer question."), repo / "solutions" / "01_demo_solutions.ipynb")
    assert run(repo, capsys, "--check")[0] == 1
    status, out = run(repo, capsys)
    assert status == 0 and "written" in out
    assert run(repo, capsys, "--check")[0] == 0


def test_a_solution_named_otherwise_is_refused(repo, capsys):
    run(repo, capsys)
    nbformat.write(demo_notebook(), repo / "solutions" / "02_other.ipynb")
    status, out = run(repo, capsys, "--check")
    assert status == 1 and "solutions/02_other.ipynb: a solutions notebook is named NN_topic_solutions.ipynb" in out
    assert not (repo / "exercises" / "02_other.ipynb").exists()


def test_check_lists_stray_exercises(repo, capsys):
    run(repo, capsys)
    (repo / "exercises" / "09_orphan.ipynb").write_text("{}")
    status, out = run(repo, capsys, "--check")
    assert status == 1 and "09_orphan.ipynb: has no source" in out


# --------------------------------------------------------------------------
# It works on the checkout it is run in, not on the one it was installed from
# --------------------------------------------------------------------------


@pytest.fixture
def second_checkout(tmp_path):
    """A checkout of its own (a copy of the course's layout), with a stale exercise."""
    checkout = tmp_path / "second"
    (checkout / "solutions").mkdir(parents=True)
    (checkout / "exercises").mkdir()
    (checkout / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    nbformat.write(demo_notebook(), checkout / "solutions" / "01_demo_solutions.ipynb")
    (checkout / "exercises" / "01_demo_exercises.ipynb").write_text("stale\n")
    return checkout


def snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.ipynb"))}


@pytest.mark.parametrize("where", [".", "solutions", "exercises"])
def test_writes_into_the_checkout_it_is_run_in(second_checkout, where, capsys, monkeypatch):
    assert Path(make_exercises.__file__).resolve().is_relative_to(ROOT)  # the module lives in this checkout
    before = snapshot(ROOT / "exercises")
    monkeypatch.chdir(second_checkout / where)
    status = make_exercises.main(["--force"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert (second_checkout / "exercises" / "01_demo_exercises.ipynb").read_text() == make_exercises.render(
        second_checkout / "solutions" / "01_demo_solutions.ipynb"
    )
    assert snapshot(ROOT / "exercises") == before  # nothing written where the module came from
    assert not (ROOT / "exercises" / "01_demo_exercises.ipynb").exists()


def test_a_git_checkout_without_toc_is_found_by_its_git_directory(second_checkout, monkeypatch):
    (second_checkout / "_toc.yml").unlink()
    git(second_checkout, "init", "-q")
    monkeypatch.chdir(second_checkout / "solutions")
    assert make_exercises.find_root(Path.cwd()) == second_checkout.resolve()


def test_the_command_writes_where_it_is_run(second_checkout):
    """The module imported from this checkout (as an editable install would) writes into the other one."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = snapshot(ROOT / "exercises")
    result = subprocess.run(
        [os.sys.executable, "-m", "tools.make_exercises", "--force"],
        cwd=second_checkout,
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "exercises/01_demo_exercises.ipynb: written" in result.stdout
    assert (second_checkout / "exercises" / "01_demo_exercises.ipynb").read_text() != "stale\n"
    assert snapshot(ROOT / "exercises") == before


def test_outside_a_checkout_it_refuses_with_a_clear_error(tmp_path, capsys, monkeypatch):
    outside = tmp_path / "not-a-checkout"
    outside.mkdir()
    if any((p / "_toc.yml").exists() or (p / ".git").exists() for p in [outside, *outside.parents]):
        pytest.skip(f"{tmp_path} lies inside a checkout")
    monkeypatch.chdir(outside)
    assert make_exercises.main([]) == 2
    out = capsys.readouterr().out
    assert out.startswith("error: ") and "not inside a checkout of the course" in out
    assert list(outside.iterdir()) == []  # nothing written


def test_a_repository_without_solutions_is_not_taken_for_the_course(tmp_path, capsys, monkeypatch):
    git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    assert make_exercises.main(["--check"]) == 2
    assert "has no solutions/ directory" in capsys.readouterr().out


def test_command_line_entry_point():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [os.sys.executable, "-m", "tools.make_exercises", "--check"], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _md(source, tags=None):
    cell = nbformat.v4.new_markdown_cell(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def test_exercise_only_cells_are_shown_in_the_exercise_without_their_hiding_tags():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _md("# Practice: X\n\nReplace each `...`.", ["exercise-only", "remove-cell"]),
        _md("<!-- BEGIN SOLUTION -->\n# Answers: X\n<!-- END SOLUTION -->"),
        _md("keep my other tag", ["exercise-only", "remove-cell", "margin"]),
        _md("<!-- BEGIN SOLUTION -->\nFor maintainers.\n<!-- END SOLUTION -->", ["remove-cell"]),
        _md("hidden on both pages", ["remove-cell"]),
    ]
    out = exercise(nb)
    assert [c.source for c in out.cells] == [
        "# Practice: X\n\nReplace each `...`.",
        "keep my other tag",
        "hidden on both pages",
    ]
    assert "tags" not in out.cells[0].metadata
    assert out.cells[1].metadata["tags"] == ["margin"]
    assert out.cells[2].metadata["tags"] == ["remove-cell"]


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_answers_page_has_its_own_title_and_hides_the_exercise_instructions(path):
    """In the book the answers page is titled 'Answers: ...'; 'Practice: ...' and 'Replace each' are hidden there."""
    nb = nbformat.read(path, as_version=4)
    shown = [c for c in nb.cells if "remove-cell" not in c.metadata.get("tags", [])]
    first_heading = next(
        line for c in shown if c.cell_type == "markdown" for line in c.source.splitlines() if line.startswith("# ")
    )
    assert first_heading.startswith("# Answers: "), first_heading
    text = "\n".join(c.source for c in shown)
    assert "Replace each" not in text and "For maintainers" not in text and "make exercises" not in text
    ex = nbformat.read(exercise_of(path), as_version=4)
    assert ex.cells[0].source.startswith("# Practice: "), ex.cells[0].source[:40]
    assert first_heading.removeprefix("# Answers: ") == ex.cells[0].source.splitlines()[0].removeprefix("# Practice: ")


# --------------------------------------------------------------------------
# The "Accepted" line of each question is written from its declaration
# --------------------------------------------------------------------------


def question_notebook(qid, accepted_line, check_call=None):
    """A solution notebook holding one question: its heading, a text with ``accepted_line`` (None: without one),
    its check cell."""
    text = f"## Question {qid}: a title\n\nCompute it.\n"
    if accepted_line is not None:
        text += f"\n{accepted_line}\n"
    return nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell(text, id="q"),
            nbformat.v4.new_code_cell(check_call or f'answer = 1\ngrading.check("{qid}", answer)', id="c"),
        ]
    )


@pytest.fixture
def question_repo(tmp_path):
    (tmp_path / "solutions").mkdir()
    git(tmp_path, "init", "-q")
    return tmp_path


def accepted_in(path):
    return [line for cell in nbformat.read(path, 4).cells for line in cell.source.split("\n") if "Accepted" in line]


@pytest.mark.parametrize("qid", ["02.5", "04.1", "05.3", "01.2", "10.10"])  # function, array, whole number, number
def test_the_accepted_line_is_written_from_the_declaration(question_repo, qid, capsys):
    from grading import QUESTIONS

    solution = question_repo / "solutions" / "01_demo_solutions.ipynb"
    nbformat.write(question_notebook(qid, "**Accepted:** whatever was typed by hand."), solution)
    status, out = run(question_repo, capsys, "--check")
    assert status == 1 and f"Accepted line of {qid} out of date" in out, out
    assert accepted_in(solution) == ["**Accepted:** whatever was typed by hand."]  # --check writes nothing
    status, out = run(question_repo, capsys)
    assert status == 0 and f"Accepted line of {qid} written" in out, out
    want = QUESTIONS[qid].requirement()
    assert want.startswith("**Accepted:** ") and accepted_in(solution) == [want]
    assert accepted_in(question_repo / "exercises" / "01_demo_exercises.ipynb") == [want]
    assert run(question_repo, capsys, "--check")[0] == 0


def test_a_changed_tolerance_changes_the_line(question_repo, monkeypatch, capsys):
    from grading import QUESTIONS

    solution = question_repo / "solutions" / "01_demo_solutions.ipynb"
    nbformat.write(question_notebook("02.5", "**Accepted:** x"), solution)
    run(question_repo, capsys)
    before = accepted_in(solution)
    monkeypatch.setattr(QUESTIONS["02.5"], "atol", 1e-9)
    status, out = run(question_repo, capsys, "--check")
    assert status == 1 and "02.5" in out
    run(question_repo, capsys)
    assert accepted_in(solution) != before and "$10^{-9}$" in accepted_in(solution)[0]


@pytest.mark.parametrize(
    "qid, line, words",
    [
        ("02.5", None, "question 02.5 states no line starting with **Accepted:**"),
        ("02.1", "**Accepted:** B", "question 02.1 is a choice question"),
        ("99.9", "**Accepted:** x", "question 99.9 is not in the grader's bank"),
    ],
)
def test_a_question_text_that_cannot_carry_its_line_is_named(question_repo, qid, line, words, capsys):
    nbformat.write(question_notebook(qid, line), question_repo / "solutions" / "01_demo_solutions.ipynb")
    status, out = run(question_repo, capsys)
    assert status == 1 and words in out and "solutions/01_demo_solutions.ipynb" in out, out
    assert not (question_repo / "exercises" / "01_demo_exercises.ipynb").exists()


# --------------------------------------------------------------------------
# Every blank a learner sees belongs to a question, or to a check labelled as optional
# --------------------------------------------------------------------------

EXERCISES = sorted((ROOT / "exercises").glob("*.ipynb"))
BLANK_NAME = re.compile(
    rf"^(\w+) = {re.escape(make_exercises.ANSWER)}$|^\s*(?:async def|def|class) (\w+)\b", re.M
)  # a blanked assignment, or a stub's header (its body is the CODE placeholder)
CHECK = re.compile(r'\bcheck\("(\d\d\.\d+)"')
OPTIONAL = re.compile(r"\boptional check\b", re.I)


def blank_names(source) -> list[str]:
    if make_exercises.ANSWER not in source and make_exercises.CODE not in source:
        return []
    return [a or b for a, b in BLANK_NAME.findall(source)]


def words(text) -> set[str]:
    return set(re.findall(r"\w+", text))


def stray_blanks(nb) -> list[str]:
    """What is wrong with the blanks of an exercise notebook: a code cell with a blank must belong to the
    question whose text precedes it (its "## Question NN.k" heading is the last heading above it, and the
    question's check("NN.k", ...) is in that cell or a later one) or follow a markdown cell that calls it an
    optional check. Its names may tell nothing the question does not: a choice question's blank is `answer`
    only (any other name leans towards an option); another question's names are `answer`, names its text
    uses, or steps of the answer computed in the cell that checks it."""
    from grading import QUESTIONS

    problems, qid, text, checked = [], None, "", set()
    for n, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            if cell.source.startswith("#"):  # a heading: a question's, or another section's
                heading = make_exercises.QUESTION.match(cell.source)
                qid, text = (heading.group(1) if heading else None), ""
            text += "\n" + cell.source
            continue
        names = blank_names(cell.source)
        checks = CHECK.findall(cell.source)
        here = f"cell {n} ({', '.join(names)})"
        if names:
            previous = nb.cells[n - 1] if n else None
            later = [CHECK.findall(c.source) for c in nb.cells[n:] if c.cell_type == "code"]
            if qid and qid not in checked and any(qid in found for found in later):
                told = words(text) | {"answer"}
                if qid in checks:  # the steps computed before the check, in the checking cell
                    told |= set(blank_names(cell.source.split("check(")[0]))
                if QUESTIONS[qid].kind == "choice":
                    told = {"answer"}
                revealing = [name for name in names if name not in told]
                if revealing:
                    problems.append(f"{here}: question {qid} does not use the name(s) {', '.join(revealing)}")
            elif previous is not None and previous.cell_type == "markdown" and OPTIONAL.search(previous.source):
                revealing = [name for name in names if name not in words(previous.source + text)]
                if revealing:
                    problems.append(f"{here}: its label and question do not use {', '.join(revealing)}")
            else:
                problems.append(f"{here}: a blank that belongs to no question and is not labelled an optional check")
        checked |= set(checks)
    return problems


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.name)
def test_every_blank_belongs_to_a_question_or_an_optional_check(path):
    assert stray_blanks(nbformat.read(path, as_version=4)) == []


def test_the_stray_blanks_are_found(monkeypatch):
    """Without leaving out the solution's own checks, the practice would show cells of blanks that belong to no
    question, some named after what the answer is (`symmetric` after a choice question)."""
    monkeypatch.setattr(make_exercises, "solution_only", lambda source: False)
    found = [
        f"{path.name[:2]} {problem}"
        for path in SOLUTIONS
        for problem in stray_blanks(exercise(nbformat.read(path, as_version=4)))
    ]
    assert any("symmetric" in p for p in found), found


def test_a_cell_that_is_all_solution_is_left_out():
    nb = demo_notebook()
    nb.cells.insert(4, nbformat.v4.new_code_cell("# BEGIN SOLUTION\nshown = answer + 1\n# END SOLUTION", id="x"))
    assert [c.id for c in exercise(nb).cells] == ["demo-0", "demo-2", "demo-3"]
    assert not make_exercises.solution_only("# BEGIN SOLUTION\nx = 1\n# END SOLUTION\ncheck('01.1', x)")
    assert not make_exercises.solution_only("# BEGIN SOLUTION\nx = 1\n# END SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION")


def question_cells(*sources):
    cells = [
        nbformat.v4.new_markdown_cell(s) if s.startswith(("#", "**", "Run")) else nbformat.v4.new_code_cell(s)
        for s in sources
    ]
    return nbformat.v4.new_notebook(cells=cells)


@pytest.mark.parametrize(
    "sources,problem",
    [
        (["## Question 09.6\n\nWhich?", 'answer = ...  # YOUR ANSWER HERE\ncheck("09.6", answer)'], None),
        (["## Question 10.3\n\nGive ω'.", 'w = ...  # YOUR ANSWER HERE\nanswer = w\ncheck("10.3", answer)'], None),
        (
            ["## Question 02.5\n\nWrite `freq(d)`.", "def freq(d):\n    ...  # YOUR CODE HERE", 'check("02.5", freq)'],
            None,
        ),
        (["**Optional check.** Run this to see `x`.", "x = ...  # YOUR ANSWER HERE"], None),
        (["## Question 09.6\n\nWhich?", 'answer = "A"\ncheck("09.6", answer)', "x = ...  # YOUR ANSWER HERE"], "no"),
        (["## Question 09.6\n\nWhich?", 'symmetric = ...  # YOUR ANSWER HERE\ncheck("09.6", symmetric)'], "use"),
        (
            [
                "## Question 10.3\n\nGive ω'.",
                "answer = ...  # YOUR ANSWER HERE",
                "dyn = ...  # YOUR ANSWER HERE",
                'check("10.3", answer)',
            ],
            "use",
        ),
        (["## Summary", "x = ...  # YOUR ANSWER HERE"], "no question"),
        (["**Optional check.** Run this.", "fixed = ...  # YOUR ANSWER HERE"], "do not use"),
    ],
)
def test_what_counts_as_a_stray_blank(sources, problem):
    found = stray_blanks(question_cells(*sources))
    assert found == [] if problem is None else len(found) == 1 and problem in found[0], found
