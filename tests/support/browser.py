"""Shared machinery of the real-browser tests (test_browser_book*.py, test_browser_lab.py, the explorers').

Debian's Chromium is driven with Playwright for Python, launched by executable
path: Playwright never downloads a browser here. Without Chromium the browser
tests skip with a clear message, except under ``CI=true``, where they fail
(``.ci/run`` installs Chromium with apt-get).

Every page gets a :class:`Guard`: requests to any host but the local server
are aborted and recorded, and so are missing local files (HTTP status >= 400),
failed requests, uncaught page errors and console errors.

The fixtures ``chromium`` (here), ``book`` (``tests.support.book``) and ``site`` (``tests.support.book_site``) are
registered in the root ``conftest.py`` (``pytest_plugins``), so every test module can name them.

Screenshots go to ``_build/screenshots/`` (``book/`` and ``lab/``).
"""

from __future__ import annotations

import itertools
import os
import shutil

import numpy as np
import pytest

from book_build.book_server import CHROMIUM_ARGS

# the exercise notebook tests/test_browser_lab.py runs end to end in JupyterLab (all cells, errors fail the test);
# conftest.py leaves it out of nbval's run when that test runs, so it is executed once
LAB_NOTEBOOK = "exercises/02_sinusoidal_formula_exercises.ipynb"

SKIP_MESSAGE = "Chromium not installed: apt-get install chromium (CI installs it)"

# --------------------------------------------------------------------------
# Chromium and Playwright
# --------------------------------------------------------------------------


def chromium_executable() -> str:
    """Path of the system Chromium; skip without it, or fail under CI=true."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "CI=true but Chromium is not installed: .ci/run installs it with "
                "`apt-get install chromium`; the browser tests must run in CI.",
                pytrace=False,
            )
        pytest.skip(SKIP_MESSAGE)
    return path


_SHARED: dict = {"users": 0, "playwright": None, "browser": None}


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium for the whole session, shared by every module that imports this fixture.

    Each module importing it gets its own fixture instance; they all hand out the same browser, since
    two sync Playwright instances cannot run at once in one thread. Each test opens its own context.
    """
    executable = chromium_executable()
    sync_api = pytest.importorskip("playwright.sync_api")
    if _SHARED["users"] == 0:
        playwright = sync_api.sync_playwright().start()
        _SHARED["playwright"] = playwright
        _SHARED["browser"] = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
    _SHARED["users"] += 1
    try:
        yield _SHARED["browser"]
    finally:
        _SHARED["users"] -= 1
        if _SHARED["users"] == 0:
            _SHARED["browser"].close()
            _SHARED["playwright"].stop()


def new_context(chromium, **kwargs):
    """A fresh context: no cache, no service workers, a fixed viewport."""
    kwargs.setdefault("viewport", {"width": 1280, "height": 900})
    kwargs.setdefault("service_workers", "block")
    return chromium.new_context(**kwargs)


def percentile(values, q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation, as numpy's default."""
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def compare_numbers(name, want, got, failures, atol=1e-9, rtol=1e-12):
    """Numbers to 1e-9 absolute (or 1e-12 relative, for wavelengths near 1e9); shapes, strings exactly."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            failures.append(f"{name}: expected an object, got {str(got)[:80]}")
            return
        for key, value in want.items():
            if key not in got:
                failures.append(f"{name}: key {key!r} missing in the browser result")
            else:
                compare_numbers(f"{name}[{key}]", value, got[key], failures, atol, rtol)
        return
    if want is None:
        if got is not None:
            failures.append(f"{name}: expected null, got {str(got)[:80]}")
        return
    if got is None:
        failures.append(f"{name}: null, expected {str(want)[:80]}")
        return
    if isinstance(want, str) or (isinstance(want, (list, tuple)) and any(isinstance(x, str) for x in want)):
        if list(want) != list(got) if not isinstance(want, str) else want != got:
            failures.append(f"{name}: {got!r}, expected {want!r}")
        return
    w = np.asarray(want, dtype=float)
    try:
        g = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        failures.append(f"{name}: not numbers: {str(got)[:80]}")
        return
    if w.shape != g.shape:
        failures.append(f"{name}: shape {g.shape}, expected {w.shape}")
        return
    bad = ~np.isclose(g, w, atol=atol, rtol=rtol, equal_nan=True)
    if bad.any():
        at = tuple(int(x) for x in np.argwhere(bad)[0])
        failures.append(f"{name}{list(at)}: {g[at]!r}, expected {w[at]!r} ({bad.sum()} of {bad.size} differ)")


# --------------------------------------------------------------------------
# Explorers: the layout the renderer reports
# --------------------------------------------------------------------------

EXPLORER_TEXT = {"title", "legend", "tick", "label"}


def overlap(a, b, tol=0.5) -> bool:
    return (
        min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"]) > tol
        and min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"]) > tol
    )


# The least room, in CSS px, between a bar's end and the frame it grows towards: a bar that ends on the frame (or
# past it, clipped) looks cut off, its height unreadable.
BAR_ROOM = 3


def explorer_layout_failures(boxes: list[dict], viewport: int) -> list[str]:
    """What is wrong with an explorer's layout, from the boxes explorers.js reports (posencExplorers.boxes):
    wider than the page, text cut at its edge, text overlapping text or a plot area, panels overlapping, a bar
    ending on its plot's frame."""
    root = next(b for b in boxes if b["kind"] == "root")
    texts = [b for b in boxes if b["kind"] in EXPLORER_TEXT]
    plots = [b for b in boxes if b["kind"] == "plot"]
    canvases = [b for b in boxes if b["kind"] == "canvas"]
    out = []
    if root["x"] < -0.5 or root["x"] + root["w"] > viewport + 0.5:
        out.append(
            f"the explorer ({root['x']:.0f}..{root['x'] + root['w']:.0f} px) is wider than the page ({viewport} px)"
        )
    for b in texts:
        if not b["w"] or b["x"] < root["x"] - 0.5 or b["x"] + b["w"] > root["x"] + root["w"] + 0.5:
            out.append(f"{b['kind']} {b['text']!r} is cut at the explorer's edge (x {b['x']:.1f}, width {b['w']:.1f})")
    for a, b in itertools.combinations(texts, 2):
        if overlap(a, b):
            out.append(f"{a['kind']} {a['text']!r} overlaps {b['kind']} {b['text']!r}")
    for t in texts:
        for p in plots:
            if overlap(t, p):
                out.append(f"{t['kind']} {t['text']!r} lies on the data (plot area of panel {p['panel']})")
    for a, b in itertools.combinations(canvases, 2):
        if overlap(a, b):
            out.append("two panels overlap")
    for bar in (b for b in boxes if b["kind"] == "bar"):
        plot = next(p for p in plots if p["panel"] == bar["panel"])
        room = bar["y"] - plot["y"] if bar["up"] else plot["y"] + plot["h"] - (bar["y"] + bar["h"])
        if room < BAR_ROOM:
            out.append(f"a bar of panel {bar['panel']} ends {room:.1f} px from the plot's frame: it looks cut off")
    return out
