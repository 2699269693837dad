"""The fit advisor: for a compile that ran out of on-chip memory, the configs that do fit, each proven
by a compile on the same tier and arch.

candidates (what to try, in order) -> search (two at a time, forked, stop once enough fit) -> the
record's `fit` (results contract). probe compiles one candidate per tier, cache keeps the answers
under parity's cache, hook is what the compile tiers call.
"""
