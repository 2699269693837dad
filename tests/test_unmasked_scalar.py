"""The unmasked list names block accesses only: a scalar pointer (a lock, a row's first element) touches one
element and cannot run past the tensor the way a block's offsets can (parity.run.unmasked)."""

from parity.run.unmasked import unmasked_calls

SPIN = """
def k(X, Y, Lock, Count, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    first = tl.load(X + row * stride)
    n = tl.load(Count + 1).to(tl.int32)
    last = tl.load(X + n)
    for i in range(0, N):
        tl.store(Y + i, first)
    tl.store(Count, count + 1)
    tl.atomic_xchg(Lock, 0)
"""

BLOCKS = """
def k(X, Y, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    ptrs = X + row * stride + cols
    a = tl.load(ptrs)
    rows = row + tl.zeros((BLOCK,), tl.int32)
    b = tl.load(X + rows[:, None])
    offs = helper(row)
    c = tl.load(X + offs)
    idx = tl.load(X + cols).to(tl.int32)
    d = tl.load(Y + idx)
    tl.store(Y + cols, a)
"""


def test_scalar_loads_and_stores_are_not_unmasked_accesses():
    assert unmasked_calls(SPIN, "load") == []
    assert unmasked_calls(SPIN, "store") == []


def test_block_accesses_are_still_listed_however_the_block_is_made():
    """Controls: an arange through a name, a broadcast row, a helper's result (it may be a block: taken for one)
    and offsets loaded through a block pointer stay on the list."""
    assert unmasked_calls(BLOCKS, "load") == [6, 8, 10, 11, 12]
    assert unmasked_calls(BLOCKS, "store") == [13]
