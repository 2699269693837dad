"""Engine self-tests run kernels on the CPU only, through Triton's interpreter."""

import os

# must precede the first @triton.jit decoration, i.e. any import of kernels/ or tests/planted
os.environ.setdefault("TRITON_INTERPRET", "1")
