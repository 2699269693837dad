"""parity.seams: one wrapper per target, layers nested newest-outermost, everything put back exactly."""

from __future__ import annotations

import types

from parity.seams import present, seam


class Target:
    def run(self, x: int) -> list[str]:
        return [f"run({x})"]


def _layer(tag: str):
    def layer(inner, self, x):
        return [f"{tag}>", *inner(self, x), f"<{tag}"]
    return layer


def test_layers_nest_newest_outermost_and_the_original_comes_back():
    original = Target.__dict__["run"]
    s = seam(Target, "run")
    remove_a = s.add(_layer("a"))
    wrapper = Target.__dict__["run"]
    with seam(Target, "run").layer(_layer("b")):  # the same seam: one wrapper
        assert Target.__dict__["run"] is wrapper
        assert Target().run(1) == ["b>", "a>", "run(1)", "<a", "<b"]
    assert Target().run(2) == ["a>", "run(2)", "<a"]
    remove_a()
    assert Target.__dict__["run"] is original  # exactly what was there


def test_a_layer_removed_out_of_order_leaves_the_others():
    remove_a = seam(Target, "run").add(_layer("a"))
    remove_b = seam(Target, "run").add(_layer("b"))
    remove_a()
    assert Target().run(3) == ["b>", "run(3)", "<b"]
    remove_b()
    assert "run" in Target.__dict__ and Target().run(4) == ["run(4)"]


def test_an_inherited_method_and_an_empty_hook_slot_are_put_back_as_they_were():
    class Sub(Target):
        pass

    with seam(Sub, "run").layer(_layer("s")):
        assert Sub().run(5) == ["s>", "run(5)", "<s"] and Target().run(5) == ["run(5)"]
    assert "run" not in Sub.__dict__  # it inherited run before, and does again
    slot = types.SimpleNamespace(hook=None)
    with seam(slot, "hook").layer(lambda inner, **kw: bool(inner(**kw)) or kw["key"] == "skip"):
        assert slot.hook(key="skip") is True and slot.hook(key="x") is False  # the empty slot answers None
    assert slot.hook is None


def test_present_puts_back_a_missing_attribute_and_a_mapping_key():
    module = types.ModuleType("m")
    undo = present(module, "npu", 1)
    assert module.npu == 1
    undo()
    assert not hasattr(module, "npu")
    table = {"a": 1}
    undo = present(table, "a", 2)
    undo_b = present(table, "b", 3)
    assert table == {"a": 2, "b": 3}
    undo_b()
    undo()
    assert table == {"a": 1}


def test_the_order_check_fails_on_a_planted_inversion():
    """Negative control: a seam that called the oldest layer first would fail the nesting test above."""
    seen = []
    with seam(Target, "run").layer(lambda inner, self, x: seen.append("old") or inner(self, x)):
        with seam(Target, "run").layer(lambda inner, self, x: seen.append("new") or inner(self, x)):
            Target().run(0)
    assert seen == ["new", "old"] and seen != ["old", "new"]
