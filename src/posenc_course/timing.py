"""Fair side-by-side timing: the contenders take turns, so machine noise hits them alike.

Used by appendix A (``posenc`` against the float32 recipe) and by ``make bench``::

    from posenc_course.timing import alternate
    times = alternate({"ours": f, "recipe": g}, repeats=7)   # {name: array of seconds}
"""

from __future__ import annotations

import time

import numpy as np

from posenc_course.arguments import Dict, Function, Int, accepts


@accepts(
    contenders=Dict(Function(), min_len=1, what="a dict of at least one name: function (called with no arguments)"),
    repeats=Int(1),
    warmup=Int(0),
)
def alternate(contenders: dict, repeats: int = 15, warmup: int = 2) -> dict:
    """Run the callables round-robin (A, B, A, B, ...); return ``{name: array of seconds}``.

    The first ``warmup`` rounds are run and not recorded.
    """
    times = {name: [] for name in contenders}
    for round_ in range(int(warmup) + int(repeats)):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - start
            if round_ >= warmup:
                times[name].append(elapsed)
    return {name: np.array(t) for name, t in times.items()}
