"""bench/ascend_perf_twins.py: each twin of our kernels is its file with exactly the named change, and a change
that no longer matches the file drops the twin (never a half-patched kernel)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import ascend_perf_twins as twins  # bench/ is a namespace package from the repo root

OURS = [t for t in twins.TWINS.values() if t.of in ("block_ptr_tile", "gdn_chunk_scaled_dot_kkt", "gdn_chunk_fwd_h")]


@pytest.mark.parametrize("twin", OURS, ids=lambda t: t.of)
def test_each_of_our_twins_is_its_file_with_the_change_applied(twin):
    path = twin.source()
    text = path.read_text()
    assert all(text.count(old) == 1 for old, _ in twin.fixes)
    module = twins.patched(path, twin.fixes, f"{twin.of}_twin_test")
    assert module is not None
    patched = Path(module.__file__).read_text()
    assert all(new in patched for _, new in twin.fixes)
    expected = text
    for old, new in twin.fixes:
        expected = expected.replace(old, new)
    assert patched == expected  # nothing else changed
    spec = twin.rebuild(module.SPECS[0], module)
    assert spec.kernel is not None and spec.launch is not None


def test_a_change_that_no_longer_matches_drops_the_twin(tmp_path):
    src = tmp_path / "k.py"
    src.write_text("X = 1\nY = 1\n")
    assert twins.patched(src, (("Z = 1\n", "Z = 2\n"),), "gone") is None  # the line moved on
    assert twins.patched(src, (("= 1\n", "= 2\n"),), "twice") is None  # ambiguous: two places
    module = twins.patched(src, (("X = 1\n", "X = 2\n"),), "once")
    assert module is not None and (module.X, module.Y) == (2, 1)  # the control
