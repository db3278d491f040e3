"""The grader's own copy of ``posenc``, out of the notebook's reach.

Every expected answer comes from ``posenc``. A learner can replace a function
of the module the notebook imports (``posenc.frequencies = my_frequencies``,
even from inside the function being checked), and that would move the
expected values: a wrong answer would pass and a right one fail. Keeping
references to the functions is not enough, because ``posenc.sinusoidal``
looks ``frequencies`` up among the module's globals at every call.

So the bank does not use the module the notebook sees. This module executes
the ``posenc`` package a second time, from its files, as a separate package
under a private name, with its own copies of the private modules it imports
(``posenc._engine``, ``posenc._checks``); the bank imports it with
``from grading.reference import posenc``. Patching ``posenc.<name>`` or
``posenc._engine.<name>`` in a notebook changes the public package only. (The
copy is registered in ``sys.modules`` under its private name so that its
classes can be pickled.)
"""

from __future__ import annotations

import importlib.util
import os
import sys

_NAME = "grading._posenc_reference"


def _private_copy(public="posenc", name=_NAME):
    """Execute the package ``public`` from its files as a new package called ``name``.

    Its relative imports (``from . import _engine``) then load the package's
    modules afresh, as ``name._engine`` and so on.
    """
    if name in sys.modules:
        return sys.modules[name]
    origin = importlib.util.find_spec(public).origin
    folder = [os.path.dirname(origin)]
    spec = importlib.util.spec_from_file_location(name, origin, submodule_search_locations=folder)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


posenc = _private_copy()
