"""posenc_course.timing.alternate: turns, warm-up rounds not recorded, bad arguments named."""

import pytest

from posenc_course.timing import alternate


def test_contenders_take_turns_and_warmup_is_not_recorded():
    calls = []
    times = alternate({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeats=3, warmup=2)
    assert calls == ["a", "b"] * 5
    assert {name: t.shape for name, t in times.items()} == {"a": (3,), "b": (3,)}
    assert all((t >= 0).all() for t in times.values())


@pytest.mark.parametrize(
    "kwargs, words", [({"repeats": 0}, "repeats"), ({"repeats": 1.5}, "repeats"), ({"warmup": -1}, "warmup")]
)
def test_bad_arguments_are_named(kwargs, words):
    with pytest.raises(ValueError, match=words):
        alternate({"a": lambda: None}, **kwargs)


def test_no_contender_is_an_error():
    with pytest.raises(ValueError, match="at least one"):
        alternate({})
