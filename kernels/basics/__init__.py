"""Basic idioms every port must get right: masks, block pointers, reductions, dots, scans."""

from parity import PerfTarget

# issue 19's goal for the memory-bound basics at their perf sizes (printed in REPORT.md, never asserted)
MEMORY_BOUND_TARGET = PerfTarget(min_roofline_frac=0.85,
                                 why="issue 19: memory-bound kernels reach >= 85% of the measured copy bandwidth")
