"""The adapter of each library parity ships specs for: identity, tracker, and what it needs on each tier.

Light on purpose (no torch, no library import): parity loads it to recognise these libraries in any
module, a user's own included (parity.spec.library.known_adapters). Each spec module sets `LIBRARY` to its
adapter beside its SPECS.
"""

from __future__ import annotations

import contextlib
import os

from parity.spec.library import LibraryAdapter, Tier


def _prepare_flag_gems(tier: Tier) -> None:
    """FlagGems 5.0.2 (https://github.com/FlagOpen/FlagGems/tree/v5.0.2/src/flag_gems) before its import."""
    from parity.paths import cache_root

    # it finds its vendor from torch.<flag> attributes, else from `nvidia-smi`-like probes, and gives up with
    # "No device were detected" on a machine without one; GEMS_VENDOR, its documented override, names it
    # where torch.cuda stands for an NVIDIA GPU (ascend-compile's torch.npu already answers "ascend")
    if tier.presents == "cuda":
        os.environ.setdefault("GEMS_VENDOR", "nvidia")
    # its autotune picks (an sqlite db named after the device) and generated code go under ~/.flaggems. A
    # compile tier's picks are fake (nothing is timed) yet keyed like the real device, and a later run on
    # that device would take them: they go to parity's cache, one dir per tier, like Triton's
    os.environ["FLAGGEMS_CACHE_DIR"] = str(cache_root() / "flaggems" / (tier.name or "none"))
    # on a compile tier a stored pick makes its LibTuner compile that single config for the next launch with
    # the same key (a later case, or the re-run that describes a failing compile for its repro): an
    # in-memory db lives and dies with each forked case
    if tier.mode == "compile":
        os.environ["FLAGGEMS_DB_URL"] = "sqlite://"
    # it picks its math shim by reading triton.language.extra.libdevice as an attribute, which exists only
    # once something has imported that submodule; otherwise it falls back to tl.math, and on triton-ascend
    # 3.2 (no tl.math.acos) `import flag_gems` fails. fla and Liger import it, so without this its verdicts
    # on ascend-compile would depend on which libraries the run selected.
    with contextlib.suppress(ImportError):
        import triton.language.extra.libdevice  # noqa: F401


def _prepare_liger(tier: Tier) -> None:
    """Liger-Kernel 0.8.5 finds an NPU through transformers' is_torch_npu_available (liger_kernel/utils.py:
    is_npu_available), with transformers and torch_npu installed; on an NPU host without transformers it takes
    its GPU path (libdevice.rsqrt, a stub that returns None on triton-ascend 3.2). ascend-lowered presents an
    NPU without either package, so it answers that probe as an NPU host with transformers would."""
    if tier.name != "ascend-lowered":
        return
    with contextlib.suppress(ImportError):
        import liger_kernel.utils

        liger_kernel.utils.is_npu_available = lambda: True


FLA = LibraryAdapter("fla (flash-linear-attention)", "fla-core", "https://github.com/fla-org/flash-linear-attention",
                     ("fla",), ("fla",))
LIGER = LibraryAdapter("Liger-Kernel", "liger-kernel", "https://github.com/linkedin/Liger-Kernel", ("liger_kernel",),
                       ("liger", "liger_kernel"), prepare=_prepare_liger)
# LibEntry keeps `kernel_cache`, one dict per device, of the kernels it compiled through the JITFunction and
# launches itself from then on (src/flag_gems/utils/libentry.py)
# Its Ascend backend asks for triton.language.extra.cann's libdevice on any triton >= 3.2.0
# (runtime/backend/_ascend/__init__.py, get_triton_extra_name) and, where that import fails, takes
# triton.language.extra.libdevice, whose functions triton-ascend maps to nothing: they compile to None
FLAG_GEMS = LibraryAdapter("FlagGems", "flag-gems", "https://github.com/FlagOpen/FlagGems", ("flag_gems",),
                           ("flag_gems", "flaggems"), prepare=_prepare_flag_gems, kernel_cache_attrs=("kernel_cache",),
                           ascend_needs=("triton.language.extra.cann",))
MOJO_OPSET = LibraryAdapter("mojo_opset", "mojo_opset", "https://github.com/XPU-Forces/mojo_opset", ("mojo_opset",),
                            ("mojo_opset",))
GDN_NPU = LibraryAdapter("gdn-tri-inverse (GDN NPU port)", "gdn-tri-inverse",
                         "https://github.com/huawei-csl/gdn-tri-inverse", ("gdn_tri_inverse", "sgl_kernel_npu"),
                         ("gdn_npu",))

FA_TEST = LibraryAdapter("fa-test (hongziqi)", "fa-test", "https://github.com/hongziqi/fa-test",
                         ("fa_test_npu", "fa_test_gpu"), ("fa_test",))
# an LLM serving engine's kernels, loaded from a checkout (libraries/lightllm.py)
LIGHTLLM = LibraryAdapter("LightLLM", "lightllm", "https://github.com/ModelTC/lightllm", ("lightllm",), ("lightllm",))
# vllm-ascend's own Triton kernels, loaded from a checkout (libraries/vllm_ascend.py)
VLLM_ASCEND = LibraryAdapter("vllm-ascend", "vllm-ascend", "https://github.com/vllm-project/vllm-ascend",
                             ("vllm_ascend",), ("vllm_ascend",))

# triton-ascend's own unit-test kernels, loaded from a checkout (libraries/triton_ascend_ut.py); the dist name
# is no installed distribution on purpose: triton-ascend's version is the compiler's, not the checkout's
# (its name's first word is no name the engine uses for the compiler: tests/test_layout.py keeps them apart)
TRITON_ASCEND_UT = LibraryAdapter("triton-ascend-unittest (triton-ascend's own test kernels)", "triton-ascend-unittest",
                                  "https://github.com/Ascend/triton-ascend", ("triton_ascend_ut",),
                                  ("triton_ascend_ut",))

ADAPTERS = (FLA, LIGER, FLAG_GEMS, MOJO_OPSET, GDN_NPU, FA_TEST, LIGHTLLM, VLLM_ASCEND, TRITON_ASCEND_UT)
