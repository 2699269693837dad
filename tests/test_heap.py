"""parity.run.heap: the frozen start-up heap stays visible to repro capture's search of live tensors."""

import gc

import pytest
import torch

from parity.run import heap


def test_live_objects_sees_what_the_session_froze_and_keeps_it_frozen():
    t = torch.ones(3)
    gc.freeze()
    try:
        assert not any(o is t for o in gc.get_objects())  # control: the collector's own list leaves it out
        assert any(o is t for o in heap.live_objects())
        assert gc.get_freeze_count() > 0  # still frozen afterwards
    finally:
        gc.unfreeze()


def test_live_objects_freezes_nothing_when_nothing_was_frozen():
    if gc.get_freeze_count():
        pytest.skip("something in this process froze the heap already")
    heap.live_objects()
    assert gc.get_freeze_count() == 0
