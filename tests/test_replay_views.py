"""A replayed launch's views are built past the compile tiers' torch handlers, and keep their buffer's type."""

from __future__ import annotations

import torch

from parity.compile.device_tensors import TargetTensor, on_target
from parity.record.replay import build_views
from parity.seams.torch_calls import intercepted

ENTRY = {
    "views": {
        "x": {"buffer": "b0", "dtype": "float32", "shape": [3, 4], "stride": [4, 1], "offset": 2},
        "y": {"buffer": "b0", "dtype": "float16", "shape": [4], "stride": [2], "offset": 0},
        "table": {"buffer": "b1", "dtype": "int64", "shape": [2], "stride": [1], "offset": 0},
    },
    "pointers": {"table": [["b0", 8], 0]},
}


def buffers() -> dict[str, torch.Tensor]:
    return {"b0": torch.arange(64, dtype=torch.uint8), "b1": torch.zeros(16, dtype=torch.uint8)}


def test_views_on_target_buffers_keep_the_target_type_and_memory():
    with on_target("cuda") as move:
        moved = move(buffers())
        views = build_views(ENTRY, moved)
    assert all(isinstance(v, TargetTensor) and v.device.type == "cuda" for v in views.values())
    x = views["x"].plain()
    assert x.shape == (3, 4) and x.stride() == (4, 1) and x.storage_offset() == 2
    assert x.untyped_storage().data_ptr() == moved["b0"].plain().untyped_storage().data_ptr()
    assert views["table"].plain().tolist() == [moved["b0"].data_ptr() + 8, 0]


def test_plain_buffers_give_plain_views_equal_to_the_handled_path():
    plain = build_views(ENTRY, buffers())
    assert all(type(v) is torch.Tensor for v in plain.values())
    assert plain["x"].tolist() == buffers()["b0"].view(torch.float32)[2:14].view(3, 4).tolist()


def test_building_views_makes_no_call_a_tiers_handler_sees():
    seen: list[object] = []

    def handler(func, args, kwargs):
        seen.append(func)
        return func(*args, **kwargs)

    data = buffers()
    with intercepted(handler):
        build_views(ENTRY, data)
    assert seen == []
    with intercepted(handler):  # control: the same kind of call outside build_views reaches the handler
        data["b0"].view(torch.float32).as_strided([3, 4], [4, 1], 2)
    assert seen
