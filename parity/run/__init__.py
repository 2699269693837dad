"""The run path: build inputs, launch, compare with fp64, record, and time the perf pass."""
