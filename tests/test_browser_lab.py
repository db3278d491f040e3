"""End to end in JupyterLab: a learner's session on an exercise notebook, in Chromium.

The test starts JupyterLab on 127.0.0.1 (a random port and token) with its
root in a temporary copy of ``exercises/`` (the repository's notebooks are never
modified; settings, workspaces and runtime files go to the temporary folder
too), opens ``exercises/02_sinusoidal_formula.ipynb``, runs all cells from the
Run menu, moves an explorer slider with the keyboard and sees the figure change,
then types a correct answer (taken from the matching solutions notebook) into a
question cell, runs it with Shift+Enter and sees the grader's positive feedback.
Requests to any other host are blocked and recorded. Screenshots go to
``_build/screenshots/lab/``.

Run alone: ``.venv/bin/python -m pytest tests/test_browser_lab.py -q``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from browser import ROOT, SCREENSHOTS, Guard, chromium, chromium_executable, new_context  # noqa: F401

NOTEBOOK = "exercises/02_sinusoidal_formula.ipynb"
SOLUTION = ROOT / "solutions" / "02_sinusoidal_formula.ipynb"
QUESTION = "02.3"
SHOT_DIR = SCREENSHOTS / "lab"
START_TIMEOUT = 60      # seconds for JupyterLab to answer
RUN_ALL_TIMEOUT = 60    # seconds for all cells to run


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def solution_code(qid: str) -> str:
    """The answer code of question ``qid`` in the solutions notebook (between BEGIN/END SOLUTION)."""
    cells = json.loads(SOLUTION.read_text())["cells"]
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and f'check("{qid}"' in source:
            match = re.search(r"# BEGIN SOLUTION\n(.*?)# END SOLUTION", source, re.S)
            assert match, f"no solution region in the cell of {qid}"
            return match.group(1).strip()
    raise AssertionError(f"question {qid} not found in {SOLUTION}")


@contextlib.contextmanager
def jupyterlab(tmp: Path):
    """Run JupyterLab on 127.0.0.1 rooted in a copy of exercises/ under ``tmp``; yield (base url, token, root)."""
    root = tmp / "root"
    shutil.copytree(ROOT / "exercises", root / "exercises")
    # Lab settings: no news feed, no update check (both would fetch from the internet);
    # every cell rendered (no windowing), so cells out of view can be found and read
    for plugin, values in [("apputils-extension/notification", {"checkForUpdates": False, "fetchNews": "false"}),
                           ("notebook-extension/tracker", {"windowingMode": "none"})]:
        path = tmp / "settings" / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               IPYTHONDIR=str(tmp / "ipython"), JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
               MPLCONFIGDIR=str(tmp / "mpl"))
    port, token = free_port(), secrets.token_hex(16)
    jupyter = Path(sys.executable).parent / "jupyter"
    log_path = tmp / "lab.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [str(jupyter), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         f"--LabApp.user_settings_dir={tmp / 'settings'}", f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--LabApp.extension_manager=readonly"]
        + (["--allow-root"] if os.geteuid() == 0 else []),  # CI containers run as root
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{base}api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not answer within {START_TIMEOUT} s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.25)
        yield base, token, root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 rooted in a copy of exercises/; yields (base url, token, root)."""
    chromium_executable()  # skip (or fail under CI) before starting anything
    with jupyterlab(tmp_path_factory.mktemp("lab")) as server:
        yield server


def wait_for_idle_kernel(tab, timeout=60):
    """The status bar's kernel item reads "<kernel name> | Idle" (cells run before that are dropped)."""
    tab.wait_for_function(
        """() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                   .some(el => /\\| Idle$/.test(el.textContent.trim()) && !/^No Kernel/.test(el.textContent.trim()))""",
        timeout=timeout * 1000)


def prompts(tab) -> list[str]:
    return tab.locator(".jp-NotebookPanel:visible .jp-CodeCell .jp-InputPrompt").all_inner_texts()


def wait_until_all_ran(tab, timeout=RUN_ALL_TIMEOUT):
    """Every code cell has an execution count (none pending "[*]" or never run "[ ]").

    A traceback stops "Run All Cells" and leaves later cells unrun: report it at once.
    """
    deadline = time.monotonic() + timeout
    while True:
        texts = [t.strip() for t in prompts(tab)]
        if texts and all(re.fullmatch(r"\[\d+\]:", t) for t in texts):
            return texts
        if not any(t == "[*]:" for t in texts):
            errors = [e for e in tab.locator(ERROR_OUTPUTS).all_inner_texts() if "Error" in e or "Traceback" in e]
            if errors:
                raise AssertionError("a cell failed during Run All Cells:\n" + "\n\n".join(errors))
        if time.monotonic() > deadline:
            raise AssertionError(f"cells did not finish within {timeout} s: prompts {texts}")
        tab.wait_for_timeout(200)


ERROR_OUTPUTS = (".jp-NotebookPanel:visible .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'], "
                 ".jp-NotebookPanel:visible .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")


@contextlib.contextmanager
def opened_and_run(chromium, base: str, token: str, notebook: str = NOTEBOOK):
    """Open ``notebook`` in JupyterLab in a fresh browser context and run all cells from the Run menu."""
    context = new_context(chromium, viewport={"width": 1400, "height": 1000})
    guard = Guard(context)
    tab = guard.watch(context.new_page())
    tab.set_default_timeout(30000)
    SHOT_DIR.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        tab.goto(f"{base}lab/tree/{notebook}?token={token}", wait_until="domcontentloaded")
        panel = tab.locator(".jp-NotebookPanel:visible")
        panel.locator(".jp-Cell").first.wait_for()
        wait_for_idle_kernel(tab)
        tab.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        tab.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        counts = wait_until_all_ran(tab)
        wait_for_idle_kernel(tab)
        tab.screenshot(path=str(SHOT_DIR / "01_ran_all_cells.png"))
        yield {"tab": tab, "panel": panel, "guard": guard, "counts": counts,
               "run_all_s": time.monotonic() - started}
    finally:
        context.close()


@pytest.fixture(scope="module")
def notebook(lab, chromium):
    """The exercise notebook open in JupyterLab, all cells run."""
    base, token, root = lab
    with opened_and_run(chromium, base, token) as session:
        yield session


def test_all_cells_run_without_error(notebook):
    panel = notebook["panel"]
    errors = notebook["tab"].locator(ERROR_OUTPUTS).all_inner_texts()
    tracebacks = [t for t in errors if "Traceback" in t or "Error" in t]
    assert not tracebacks, "\n\n".join(tracebacks)
    assert len(notebook["counts"]) >= 8, notebook["counts"]
    # unanswered questions say so; nothing crashed
    text = panel.inner_text()
    assert "not answered yet" in text


def test_explorer_slider_changes_the_figure(notebook):
    tab, panel = notebook["tab"], notebook["panel"]
    sliders = panel.locator(".jp-OutputArea-output .widget-slider")
    assert sliders.count() > 0, (
        f"no ipywidgets slider in the outputs of {NOTEBOOK}: the exercise notebook needs an explorer "
        "cell such as `FormulaExplorer()`")
    figure = panel.locator(".jp-OutputArea-output img.widget-image, .jp-OutputArea-output .widget-image img").first
    figure.wait_for()
    before = figure.get_attribute("src")
    handle = sliders.first.locator(".noUi-handle, [role=slider]").first
    readout = sliders.first.locator(".widget-readout")
    value_before = readout.inner_text() if readout.count() else None
    handle.scroll_into_view_if_needed()
    handle.focus()
    started = time.perf_counter()
    tab.keyboard.press("ArrowRight")
    tab.wait_for_function("([el, src]) => el.getAttribute('src') !== src", arg=[figure.element_handle(), before],
                          timeout=10000, polling="raf")
    notebook["slider_to_figure_ms"] = 1000 * (time.perf_counter() - started)  # through the kernel and back
    after = figure.get_attribute("src")
    tab.screenshot(path=str(SHOT_DIR / "02_moved_slider.png"))
    assert after != before
    if value_before is not None:
        assert readout.inner_text() != value_before


def test_correct_answer_gets_positive_feedback(notebook):
    tab, panel = notebook["tab"], notebook["panel"]
    code = solution_code(QUESTION)
    cell = panel.locator(".jp-CodeCell", has=tab.locator(".cm-content", has_text=f'check("{QUESTION}"'))
    assert cell.count() == 1, f"expected one cell checking {QUESTION}, found {cell.count()}"
    editor = cell.locator(".cm-content")
    assert "..." in editor.inner_text(), "the exercise cell should start unanswered"
    editor.click()
    tab.keyboard.press("Control+A")
    tab.keyboard.type(f'{code}\ncheck("{QUESTION}", answer)')
    typed = editor.inner_text().strip()
    assert typed == f'{code}\ncheck("{QUESTION}", answer)', f"the editor holds:\n{typed}"
    tab.keyboard.press("Shift+Enter")
    output = cell.locator(".jp-OutputArea-output")
    positive = f"{QUESTION} ✓ correct"
    tab.wait_for_function("([el, text]) => el.innerText.includes(text)",
                          arg=[cell.element_handle(), positive], timeout=20000)
    cell.scroll_into_view_if_needed()
    tab.screenshot(path=str(SHOT_DIR / "03_correct_answer.png"))
    assert positive in output.inner_text()


def test_session_stays_local(notebook, capsys):
    """No request to another host, no missing file, no page or console error in JupyterLab, all session long."""
    problems = notebook["guard"].problems()
    step = notebook.get("slider_to_figure_ms")
    with capsys.disabled():
        print(f"\nJupyterLab end to end: open + run all cells {notebook['run_all_s']:.1f} s, "
              f"{len(notebook['counts'])} code cells, {notebook['guard'].requests} requests "
              f"({len(problems['external requests'])} external), "
              + (f"slider key -> new figure {step:.0f} ms (kernel round trip), " if step else "")
              + f"screenshots in {SHOT_DIR}")
    assert not any(problems.values()), "\n".join(f"{kind}: {items}" for kind, items in problems.items() if items)
