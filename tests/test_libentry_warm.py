"""parity's warm-up (the perf configs' dry run) and its pick cache leave a library cache that stores what the
launch returned (FlagGems' LibEntry) launchable.

The reported false alarm: on the H200, gems_layer_norm failed with "'NoneType' object is not subscriptable" at
flag_gems/utils/libentry.py:810, only after other cases had run in the worker. The cause: the dry run answers
an autotuner's run with None (nothing may run at perf sizes), LibEntry stored that None for the key, and the
next real launch of the key subscripted it.
"""

from __future__ import annotations

import types

import torch

from libraries.adapters import FLAG_GEMS
from parity.compile.counter import caches_on, drop_unlaunchable
from parity.perf.pick_cache import PickStore, reusing_picks, tuning_key
from parity.perf.warm import dry_launches
from tests import planted_libentry as planted


def _launch(entry, dtype):
    x = torch.arange(8, dtype=dtype)
    out = torch.full_like(x, float("nan"))
    entry.run(x, out, 8, grid=(1,))
    return x, out


def test_the_plant_has_libentrys_cache_attribute():
    assert "kernel_cache" in FLAG_GEMS.kernel_cache_attrs
    assert caches_on(planted.make_entry()) != []


def test_a_dry_run_leaves_no_stored_none_and_the_next_launch_of_that_key_runs():
    entry = planted.make_entry()
    _launch(entry, torch.float32)  # an accuracy case ran first: the tuner has a best_config now
    spec = types.SimpleNamespace(kernels=[entry])
    with dry_launches(spec) as seen:
        _launch(entry, torch.float16)  # a perf case's dry run, another key
        stored = dict(entry.kernel_cache[0])
        assert seen, "the dry run never reached the tuner: the plant tests nothing"
    # the hazard is real: inside the dry run the entry stored the tuner's None for the fp16 key ...
    assert any(v[0] is None for v in stored.values()), stored
    # ... and after it no entry holds None, while the real fp32 kernel is kept (the clean twin)
    cache = entry.kernel_cache[0]
    assert all(v[0] is not None for v in cache.values()) and ("torch.float32", 8) in {k[::2] for k in cache}
    for _ in range(2):  # the miss that compiles again, then the hit that launches what it stored
        x, out = _launch(entry, torch.float16)
        assert torch.equal(out, 2 * x)


def test_the_pick_cache_hands_the_tuner_a_pick_and_the_entry_stores_a_launchable_kernel():
    entry = planted.make_entry(configs=2)
    tuner = entry.fn
    x = torch.arange(8, dtype=torch.float32)
    tuner.cache[tuning_key(tuner, (x, x, 8), {})] = tuner.configs[1]  # a pick an earlier case tuned
    store = PickStore(device="cpu", triton_version="test")
    with reusing_picks(store):
        for _ in range(2):
            x, out = _launch(entry, torch.float32)
            assert torch.equal(out, 2 * x)
    assert all(v[0] is not None for v in entry.kernel_cache[0].values())


def test_dropping_unlaunchable_entries_keeps_every_launchable_one():
    cache = {"a": (object(), {}), "b": (None, {}), "c": None, "d": object()}
    assert drop_unlaunchable([cache]) == 2 and sorted(cache) == ["a", "d"]
