"""A launcher error names the line of the kernel's or library's code that raised it."""

from __future__ import annotations

import pytest

from parity.errors import error_text, raised_at


def _library_helper(n: object) -> range:
    return range(n)  # type: ignore[call-overload]  # the planted bug: a str where an int belongs


def test_the_reason_names_the_library_frame_not_the_machinery():
    with pytest.raises(TypeError) as info:
        _library_helper("8")
    text = error_text(info.value)
    assert text.startswith("TypeError: 'str' object cannot be interpreted as an integer")
    assert "tests/test_error_location.py:" in text and "in _library_helper" in text


def test_an_error_raised_only_inside_the_machinery_names_no_frame():
    import torch

    with pytest.raises(RuntimeError) as info:
        torch.ones(2) @ torch.ones(3)
    # the raising frame is this test (the caller); the control: a traceback with no frames at all
    assert raised_at(RuntimeError("no traceback")) is None
    assert "in test_an_error_raised_only_inside_the_machinery_names_no_frame" in error_text(info.value)
