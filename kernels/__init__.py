"""The shared Triton kernels. Each module lists its specs in SPECS, like any user module."""
