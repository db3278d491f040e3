"""``import posenc`` stays cheap, and torch.compile(dynamic=True) works.

``import posenc`` must not import ``torch._dynamo`` (seconds on top of ``import torch``;
every notebook kernel and test process pays it): checked in a fresh process, which is
robust where a timing assertion is not. ``make bench`` reports the times (``bench_import``).
"""

import subprocess
import sys

import pytest
import torch

import posenc

PROBE = """
import sys
import torch
import posenc
loaded = "torch._dynamo" in sys.modules
{use}
print(loaded, "torch._dynamo" in sys.modules)
"""

EAGER_USE = """
x = torch.zeros(2, 40, 16)
posenc.SinusoidalPositionalEncoding(16)(x)
posenc.SinusoidalPositionalEncoding(15, layout="concatenated")(torch.zeros(1, 9, 15, dtype=torch.float64))
posenc.LearnedPositionalEmbedding(50, 16)(x)
posenc.apply_rope(x)
posenc._engine.table_torch(30, 8, 10000.0, "interleaved", "cpu")
"""


def fresh(use: str = "") -> tuple:
    out = subprocess.run([sys.executable, "-c", PROBE.format(use=use)], capture_output=True, text=True, check=True)
    return tuple(word == "True" for word in out.stdout.split())


def test_import_posenc_does_not_import_dynamo():
    assert fresh() == (False, False)


def test_eager_use_of_the_torch_code_does_not_import_dynamo():
    """The modules, apply_rope and the torch table path, used eagerly as notebooks do."""
    assert fresh(EAGER_USE) == (False, False)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_compile_dynamic_true_keeps_one_graph_per_dtype():
    """dynamic=True (eager backend: Dynamo alone): every length served by one graph, same numbers."""
    torch._dynamo.reset()
    try:
        module, plain = (
            posenc.SinusoidalPositionalEncoding(33, layout="concatenated"),
            posenc.SinusoidalPositionalEncoding(33, layout="concatenated"),
        )
        compiled_module = torch.compile(module, fullgraph=True, backend="eager", dynamic=True)
        rope = torch.compile(lambda x, p: posenc.apply_rope(x, p), fullgraph=True, backend="eager", dynamic=True)
        before = torch._dynamo.utils.counters["stats"]["unique_graphs"]
        for seq in (10, 3000, 20, 4097):
            x = torch.zeros(2, seq, 33, dtype=torch.float64)
            torch.testing.assert_close(compiled_module(x), plain(x), rtol=0, atol=1e-12)
            y, positions = torch.randn(2, seq, 16, dtype=torch.float64), torch.arange(seq) * 7 - 100
            torch.testing.assert_close(rope(y, positions), posenc.apply_rope(y, positions), rtol=0, atol=1e-12)
        assert torch._dynamo.utils.counters["stats"]["unique_graphs"] - before == 2
    finally:
        torch._dynamo.reset()
