"""pytest in a subprocess, as the tests that run the suite (or a piece of it) in a fresh process need it."""

from __future__ import annotations

import os
import subprocess
import sys


def run_tests(args, *, cwd, env=None, timeout=600) -> subprocess.CompletedProcess:
    """``python -m pytest *args`` in ``cwd`` with ``env`` added to this environment; captured, never raises on a
    failing run. Of the installed plugins only xdist is loaded (conftest.py's hooks need it): nbval's imports
    (nbformat, jsonschema) alone take seconds in every process, and each xdist worker is one."""
    env = {**os.environ, **(env or {}), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "xdist.plugin", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
