"""numpy without extended precision, as on Windows and macOS arm64 (``np.longdouble`` is float64 there).

A test-side switch: a Python process started with this folder on PYTHONPATH imports this file at start-up
(``site`` does so for any ``sitecustomize`` on the path), and the hook below patches numpy just before ``posenc``
runs, so posenc and everything after it see ``np.longdouble``/``np.clongdouble`` as float64/complex128 and no
wider names. Processes that never import posenc are left alone (not even numpy is imported for them). The course
itself names no wider type (ruff's banned-api rule and tests/test_posenc_platform.py read src/ for one), so its
numbers must not change under the patch: tests/test_posenc_platform.py runs the accuracy tests so, and
``make test`` puts this folder on PYTHONPATH for the whole suite, notebook kernels included.
"""

import importlib.abc
import importlib.util
import sys

ACTIVE = True  # what tests/test_posenc_platform.py looks for: the switch is on in this process
WIDER = ("float96", "float128", "complex192", "complex256")


def without_extended_precision(np) -> None:
    np.longdouble, np.clongdouble = np.float64, np.complex128
    for name in WIDER:
        if name in vars(np):
            delattr(np, name)


class _BeforePosenc(importlib.abc.MetaPathFinder):
    """Finds ``posenc`` as the other finders do, and patches numpy before the module's code runs."""

    def find_spec(self, name, path=None, target=None):
        if name != "posenc":
            return None
        sys.meta_path.remove(self)  # one import of posenc per process; and no recursion into this finder
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def patch_then_exec(module):
            import numpy

            without_extended_precision(numpy)
            exec_module(module)

        spec.loader.exec_module = patch_then_exec
        return spec


sys.meta_path.insert(0, _BeforePosenc())
