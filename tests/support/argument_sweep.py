"""What a call with a bad argument must do, for the sweeps of the course's public callables (tests/test_arguments.py,
tests/test_posenc_arguments.py): raise the one-line ArgumentError that names the argument."""

from __future__ import annotations

from posenc_course.arguments import ArgumentError


def outcome(call, named: str | None, function: str | None = None) -> str | None:
    """None if ``call()`` worked or raised the one-line ArgumentError naming ``named`` (and starting with
    ``function``, when given); else what is wrong with what it did."""
    try:
        call()
    except ArgumentError as error:
        message = str(error)
        if "\n" in message:
            return f"more than one line: {message!r}"
        if function is not None and not message.startswith(function):
            return f"does not start with {function}: {message!r}"
        if named is not None and named not in message:
            return f"does not name {named}: {message!r}"
        return None
    except Exception as error:
        return f"{type(error).__name__} escaped: {error}"
    return None
