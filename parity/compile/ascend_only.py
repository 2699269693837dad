"""What only triton-ascend accepts: launch options and language extensions, named in findings.

An Ascend-first kernel that uses them fails on upstream Triton by design; the record says so in
words (which extension, that it is triton-ascend's) instead of leaving a bare KeyError or
AttributeError, so the finding reads as a portability gap, not as a crash.
"""

from __future__ import annotations

import re

# NPUOptions fields of triton-ascend 3.2.0 that upstream's CUDA options lack: passed at launch
ASCEND_ONLY_OPTIONS = ("multibuffer", "enable_auto_bind_sub_block", "enable_select_analysis",
                       "enable_hivm_auto_cv_balance", "sync_solver", "unit_flag", "inject_barrier_all",
                       "inject_block_all", "limit_auto_multi_buffer_only_for_local_buffer",
                       "limit_auto_multi_buffer_of_local_buffer", "set_workspace_multibuffer", "tile_mix_vector_loop",
                       "tile_mix_cube_loop", "disable_auto_inject_block_sync", "enable_nd2nz_on_vector",
                       "compile_on_910_95", "parallel_mode", "force_simt_only")
# triton.language names triton-ascend adds (the slicing ops of its tensor IR, its extra module)
ASCEND_ONLY_LANGUAGE = ("insert_slice", "extract_slice", "get_element", "sort", "gather_out_to_ub", "cann")
_MISSING_ATTR_RE = re.compile(r"has no attribute '(\w+)'")
# keyword arguments triton-ascend's language takes and upstream's does not: tl.max/tl.min(propagate_nan=)
# (upstream's tl.maximum has it, its reductions do not). Matched on the argument's name alone: long
# compile messages reach here with their middle cut out
ASCEND_ONLY_KEYWORDS = ("propagate_nan",)
# the error quotes the argument; the interpreter's nested reprs escape the quotes (\\'propagate_nan\\')
_KEYWORD_RE = re.compile(r"'(" + "|".join(ASCEND_ONLY_KEYWORDS) + r")\\*'")
_HF32_RE = re.compile(r"input_precision.*hf32|hf32.*input_precision|\bhf32\b")
# triton-ascend's refusal of NVIDIA's TF32 dot names hf32 as the fix: that message asks for tf32, not for hf32
TF32_REJECTED_RE = re.compile(r"tf32 or tf32x3 is invalid")


# triton-ascend launch options newer than its release on the package index (3.2.0): a library written against
# triton-ascend's main branch passes them (fla-core 0.6.0's Ascend path: enable_ubuf_saving), and 3.2.0 rejects
# them as unknown. Option -> (when it came, the public commit)
LATER_ASCEND_OPTIONS = {
    "enable_ubuf_saving": ("added to triton-ascend's compiler on 2026-01-26, after v3.2.0 (2026-01-20); no release "
                           "has it yet", "https://github.com/Ascend/triton-ascend/commit/"
                           "fcfe7e710b2bcf52a9d1d28f1c8f7546b7f2a8c6"),
}


# triton-ascend modules newer than 3.2.0 that a library's Ascend path selects (LibraryAdapter.ascend_needs):
# module -> (when it came, the public commit)
LATER_ASCEND_MODULES = {
    "triton.language.extra.cann": ("on triton-ascend's main since 2025-12-29; v3.2.0, the release on the package "
                                   "index, has extra.ascend",
                                   "https://github.com/Ascend/triton-ascend/commit/313dccecfc36"),
}


def later_option(text: str) -> tuple[str, str, str] | None:
    """(option, when it came, link) for a launch rejected over a triton-ascend option newer than 3.2.0."""
    found = re.search(r"Keyword argument (\w+) was specified but unrecognised", text)
    if found is None or found.group(1) not in LATER_ASCEND_OPTIONS:
        return None
    return (found.group(1), *LATER_ASCEND_OPTIONS[found.group(1)])


def option_finding(option: str, exc: BaseException) -> str:
    """The sentence a record carries for a launch option the active Triton rejected."""
    if option in LATER_ASCEND_OPTIONS:
        when, link = LATER_ASCEND_OPTIONS[option]
        return (f"{type(exc).__name__}: {exc}; `{option}` is a triton-ascend launch option newer than the installed "
                f"triton-ascend ({when}; {link})")
    owner = (f"`{option}` is a triton-ascend launch option (an NPU compile option); upstream Triton rejects it "
             "at launch, before compiling: pass it only when the active backend is the NPU one"
             if option in ASCEND_ONLY_OPTIONS else f"`{option}` is not a launch option of this Triton backend")
    return f"{type(exc).__name__}: {exc}; {owner}"


def launch_finding(exc: BaseException) -> str | None:
    """The reason for a launch that Triton rejected over an option it does not know, else None."""
    found = re.search(r"Keyword argument (\w+) was specified but unrecognised", str(exc))
    return option_finding(found.group(1), exc) if found else None


def language_finding(message: str) -> str | None:
    """'uses tl.X, a triton-ascend language extension' when a compile message shows one, else None."""
    found = _MISSING_ATTR_RE.search(message)
    if "triton.language.extra.cann" in message or (found and found.group(1) == "cann"):
        return ("uses triton.language.extra.cann, triton-ascend's extra module (absent upstream, and absent from "
                "triton-ascend 3.2.0, the release on the package index)")
    if found and found.group(1) in ASCEND_ONLY_LANGUAGE and "triton.language" in message:
        return f"uses tl.{found.group(1)}, a triton-ascend language extension (absent upstream)"
    keyword = _KEYWORD_RE.search(message)
    if keyword and keyword.group(1) in ASCEND_ONLY_KEYWORDS:
        return (f"passes {keyword.group(1)}= to a tl reduction (tl.max/tl.min), a triton-ascend language extension "
                "(upstream's reductions take no such argument)")
    if _HF32_RE.search(message) and not TF32_REJECTED_RE.search(message):
        return "asks for hf32 (input_precision='hf32'), an Ascend-only dot precision"
    return None
