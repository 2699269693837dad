"""Basic idioms every port must get right: masks, block pointers, reductions, dots, scans."""
