"""The varlen chunk bookkeeping is computed once per cu_seqlens tensor (kernels.gdn.per_cu_seqlens).

On the H200 recomputing it at every launch (small launches and a device-to-host sync) cost a varlen
cumsum 0.36 ms against a 0.05 ms kernel. Negative controls: an in-place change of cu_seqlens, or
another tensor with other lengths, is computed afresh, never served a stale answer.
"""

from __future__ import annotations

import torch

from kernels import gdn


def test_the_same_tensor_is_computed_once():
    cu = torch.tensor([0, 0, 64, 100], dtype=torch.int32)
    first = gdn.prepare_chunk_indices(cu, 16)
    assert gdn.prepare_chunk_indices(cu, 16) is first
    assert first.tolist() == [[1, 0], [1, 1], [1, 2], [1, 3], [2, 0], [2, 1], [2, 2]]
    assert gdn.prepare_chunk_indices(cu, 32) is not first  # another chunk size is another entry
    assert gdn.num_chunks(1, 100, 16, cu) == 7 == int(gdn.prepare_chunk_offsets(cu, 16)[-1])


def test_negative_control_an_in_place_change_is_seen():
    cu = torch.tensor([0, 64, 100], dtype=torch.int32)
    before = gdn.prepare_chunk_indices(cu, 64)
    cu[1] = 10  # lengths 10 and 90: one chunk, then two
    after = gdn.prepare_chunk_indices(cu, 64)
    assert before.tolist() == [[0, 0], [1, 0]] and after.tolist() == [[0, 0], [1, 0], [1, 1]]
    assert gdn.num_chunks(1, 100, 64, cu) == 3


def test_negative_control_an_equal_but_other_tensor_is_its_own_entry():
    a = torch.tensor([0, 30], dtype=torch.int32)
    b = torch.tensor([0, 70], dtype=torch.int32)
    assert gdn.prepare_chunk_indices(a, 64).tolist() == [[0, 0]]
    assert gdn.prepare_chunk_indices(b, 64).tolist() == [[0, 0], [0, 1]]
