"""CUDA: the GPU run backend and the compile-only sm_XX backend."""
