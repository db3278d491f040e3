"""The course's numbers need nothing wider than float64.

``np.longdouble`` is the x87 80-bit type on x86-64 Linux, float64 on Windows
and on macOS arm64, and slow software quad on aarch64 Linux. The documented
bounds (float32 within 2e-7, float64 within 1e-9 at every |p| < 2**24) must
hold on all of them, so:

* no code that ships (src/) names a type wider than float64;
* the accuracy tests pass in a process where extended precision is
  unavailable: ``POSENC_NO_EXTENDED=1`` makes ``import posenc`` turn
  ``np.longdouble`` into float64 (as on Windows), and ``make test`` sets it for
  the whole suite, the book build's notebooks included (appendix A, chapter 04).
"""

import ast
import os
import re
from pathlib import Path

import numpy as np
import pytest
from support.pytest_run import run_pytest

ROOT = Path(__file__).resolve().parents[1]
WIDER = re.compile(r"longdouble|long double|float96|float128|complex192|complex256|clongdouble|longfloat"
                   r"|dtype\(\s*['\"](g|G|f16|f12)['\"]", re.IGNORECASE)
ACCURACY_TESTS = [
    "tests/test_posenc.py::test_accuracy_at_large_positions",
    "tests/test_posenc.py::test_float32_table_accuracy_over_a_long_run",
    "tests/test_posenc.py::test_torch_path_accuracy_at_large_positions",
    "tests/test_posenc.py::test_matches_naive_formula",
    "tests/test_posenc.py::test_fractional_positions",
    "tests/test_posenc.py::test_frequencies_and_wavelengths",
    "tests/test_posenc.py::test_module_float64_accuracy",
    "tests/test_posenc.py::test_exact_sinusoidal_is_the_formula_at_40_digits",
    "tests/test_posenc_platform.py::test_the_largest_errors_against_mpmath",
    "tests/test_posenc_platform.py::test_extended_precision_is_unavailable_here",
    "tests/test_bug_zoo.py::test_phase_error_against_mpmath",
    "tests/test_bug_zoo.py::test_phase_error_is_bounded_by_three_roundings",
    "tests/test_posenc_compile.py::test_torch_and_numpy_tables_agree",
]


def test_no_type_wider_than_float64_in_src():
    """Every line of src/ but the test switch itself (posenc._without_extended_precision names what it removes)."""
    found = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        text = path.read_text()
        switch = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and node.name == "_without_extended_precision":
                switch |= set(range(node.lineno, node.end_lineno + 1))
        found += [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1)
                  if WIDER.search(line) and n not in switch]
    assert not found, "types wider than float64 in src/:\n" + "\n".join(found)


@pytest.mark.skipif(os.environ.get("POSENC_NO_EXTENDED") != "1", reason="only under POSENC_NO_EXTENDED=1")
def test_extended_precision_is_unavailable_here():
    import posenc  # noqa: F401  (the switch acts at import)

    assert np.finfo(np.longdouble).nmant == 52 and not hasattr(np, "float128")


def test_the_largest_errors_against_mpmath():
    """Rows up to 2**24 - 1 for small, odd and large widths, both dtypes, against 40 digits."""
    import posenc

    rng = np.random.default_rng(18)
    for d_model in (8, 33, 512, 1024):
        positions = np.concatenate([[2**24 - 1, -(2**24 - 1), 2**24 - 65, 0.5 - 2**23],
                                    rng.integers(-(2**24) + 1, 2**24, 6), rng.uniform(-(2**24), 2**24, 2)])
        exact = posenc.exact_sinusoidal(positions, d_model).astype(float)
        for dtype, bound in ((np.float32, 2e-7), (np.float64, 1e-9)):
            for layout_table in (posenc.sinusoidal(positions, d_model, dtype=dtype),
                                 posenc.sinusoidal(positions, d_model, dtype=dtype, layout="concatenated")
                                 [:, np.argsort(posenc.layout_permutation(d_model))]):
                assert np.abs(layout_table.astype(np.float64) - exact).max() <= bound


@pytest.mark.skipif(os.environ.get("POSENC_NO_EXTENDED") == "1",
                    reason="this whole run is without extended precision (make test): the accuracy tests ran so")
def test_the_accuracy_tests_pass_without_extended_precision():
    out = run_pytest(["-q", *ACCURACY_TESTS], cwd=ROOT, env={"POSENC_NO_EXTENDED": "1"})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "skipped" not in out.stdout, out.stdout[-2000:]
