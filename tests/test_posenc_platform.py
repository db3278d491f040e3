"""The course's numbers need nothing wider than float64.

``np.longdouble`` is the x87 80-bit type on x86-64 Linux, float64 on Windows
and on macOS arm64, and slow software quad on aarch64 Linux. The documented
bounds (float32 within 2e-7, float64 within 1e-9 at every |p| < 2**24) must
hold on all of them, so:

* no code that ships (src/) names a type wider than float64 (ruff's banned-api
  rule in ruff.toml, and the test below, which also catches dtype strings);
* the accuracy tests pass in a process where extended precision is
  unavailable. The switch is on the tests' side, never in the course's code:
  with tests/support/no_extended on PYTHONPATH, its ``sitecustomize`` turns
  ``np.longdouble`` into float64 (as on Windows) just before ``posenc`` is
  imported. The last test here runs the accuracy tests so in a fresh process;
  ``make test`` puts the folder on PYTHONPATH for the whole suite, the book
  build's notebook kernels included (appendix A, chapter 04).
"""

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.pytest_run import run_tests

ROOT = Path(__file__).resolve().parents[1]
NO_EXTENDED = ROOT / "tests" / "support" / "no_extended"
WIDER = re.compile(
    r"longdouble|long double|float96|float128|complex192|complex256|clongdouble|longfloat"
    r"|dtype\(\s*['\"](g|G|f16|f12)['\"]",
    re.IGNORECASE,
)
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


def _switch_is_on() -> bool:
    """Whether this process started with tests/support/no_extended on PYTHONPATH (its sitecustomize loaded)."""
    site = sys.modules.get("sitecustomize")
    return getattr(site, "ACTIVE", False) and Path(site.__file__).resolve().parent == NO_EXTENDED


def test_no_type_wider_than_float64_in_src():
    """Every line of src/: the course has no switch of its own, so no line is exempt."""
    found = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        found += [
            f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
            for n, line in enumerate(path.read_text().splitlines(), 1)
            if WIDER.search(line)
        ]
    assert not found, "types wider than float64 in src/:\n" + "\n".join(found)


def test_the_core_reads_no_precision_switch():
    """Simulating another platform is the tests' business: the course's code reads no environment variable for it."""
    files = sorted((ROOT / "src" / "posenc").glob("*.py"))
    assert {f.name for f in files} >= {"__init__.py", "_engine.py", "_checks.py"}
    for path in files:
        text = path.read_text()
        assert "environ" not in text and "getenv" not in text, path.name


def test_ruff_bans_the_wider_types_in_src():
    text = (ROOT / "ruff.toml").read_text()
    for name in ("numpy.longdouble", "numpy.float128", "numpy.clongdouble"):
        assert f'"{name}"' in text, name


@pytest.mark.skipif(not _switch_is_on(), reason="only with tests/support/no_extended on PYTHONPATH")
def test_extended_precision_is_unavailable_here():
    import posenc  # noqa: F401  (the switch acts when posenc is imported)

    assert np.finfo(np.longdouble).nmant == 52 and not hasattr(np, "float128")


def test_the_largest_errors_against_mpmath():
    """Rows up to 2**24 - 1 for small, odd and large widths, both dtypes, against 40 digits."""
    import posenc

    rng = np.random.default_rng(18)
    for d_model in (8, 33, 512, 1024):
        positions = np.concatenate(
            [
                [2**24 - 1, -(2**24 - 1), 2**24 - 65, 0.5 - 2**23],
                rng.integers(-(2**24) + 1, 2**24, 6),
                rng.uniform(-(2**24), 2**24, 2),
            ]
        )
        exact = posenc.exact_sinusoidal(positions, d_model).astype(float)
        for dtype, bound in ((np.float32, 2e-7), (np.float64, 1e-9)):
            for layout_table in (
                posenc.sinusoidal(positions, d_model, dtype=dtype),
                posenc.sinusoidal(positions, d_model, dtype=dtype, layout="concatenated")[
                    :, np.argsort(posenc.layout_permutation(d_model))
                ],
            ):
                assert np.abs(layout_table.astype(np.float64) - exact).max() <= bound


@pytest.mark.skipif(
    _switch_is_on(), reason="this whole run is without extended precision (make test): the accuracy tests ran so"
)
def test_the_accuracy_tests_pass_without_extended_precision():
    path = os.pathsep.join(p for p in (str(NO_EXTENDED), os.environ.get("PYTHONPATH", "")) if p)
    out = run_tests(["-q", *ACCURACY_TESTS], cwd=ROOT, env={"PYTHONPATH": path})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "skipped" not in out.stdout, out.stdout[-2000:]
