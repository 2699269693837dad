"""Engine self-tests run kernels on the CPU only, through Triton's interpreter, and keep Triton's files in
parity's own cache: `nox -s tests` never writes the user's ~/.triton (children inherit the variables)."""

import os

from parity.paths import triton_cache_dir
from parity.seams.env import point_triton_at

# must precede the first @triton.jit decoration, i.e. any import of kernels/ or tests/planted
os.environ.setdefault("TRITON_INTERPRET", "1")
point_triton_at(triton_cache_dir("self-tests"))
