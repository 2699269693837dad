"""Tier limits as data: what a tier itself gets wrong, each with its public source and a probe.

A limit is the tier's, never the kernel author's nor a vendor compiler's: a failure it explains gets a
TIER.md note, no draft. Every entry names the tier it belongs to, how to recognise it in a record (the
error text, the kernel source), where it is documented, and a probe that checks on the installed
version whether it still holds: once a release fixes it the probe says so and the entry stops matching
(it retires itself). Limits apply to every kernel, not only to specs that opt in.

Language rules (an upstream restriction the author must handle, an Ascend-only construct on upstream)
are data here too, with owner "author": they are not bugs of any tool. So are vendor bugs already
reported upstream, with that vendor as owner: the verdict is theirs, the draft a note with the link.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

from parity import settings
from parity.backends import backend_class
from parity.paths import cache_root
from parity.results import OwnerKind, Record
from parity.triage.interpreter_probes import PROBE_TIMEOUT_S, _interpreter_probe, _is_triton_ascend
from parity.triage.limit_fits import (
    divides_by_a_block_ptr_stride,
    failure_text,
    is_numeric,
    killed_by_sigfpe,
    stores_a_lower_rank_value,
    tf32_rounding,
)


@dataclass(frozen=True)
class TierLimit:
    id: str
    # TIER (the tier's own defect), AUTHOR (a language rule the kernel must respect), or TRITON / TRITON_ASCEND
    # (that vendor's bug, already reported at `link`: a note, not a new draft); RANDOM: parity.triage.random_stream's
    who: OwnerKind
    name: str  # the owner's name in words
    what: str  # one line
    link: str
    message: str | None = None  # regex over the record's reason and compile message; None: not needed
    source: str | None = None  # regex over the kernel's source (helpers included); None: not needed
    numeric_only: bool = False  # applies to wrong values only, not to errors
    dtypes: tuple[str, ...] = ()  # the case's dtype param must be one of these (empty: any)
    probe: Callable[[], bool | None] | None = None  # True: still holds; False: fixed; None: cannot tell
    # a further test of the record and the kernel's source that a regex cannot say (an error's size, say)
    fits: Callable[[Record, str], bool] | None = None
    # the record itself proves it (the error is raised inside the tier's own code): no other tier needed
    evident: bool = False
    # a language rule or a compiler's bug: it applies on every tier whose Backend.language is this one (or one of
    # these) too
    language: str | tuple[str, ...] | None = None
    # named only with another tier's record in hand (parity.triage.unreproduced: the red-zone tier's pass of the
    # same case), never by the record alone: matching_limit skips it
    needs_evidence: bool = False

    def on(self, backend: str) -> bool:
        """Whether it applies on this tier: one of its own limits, or building with its language (the backend
        declares both: Backend.own_limits, Backend.language)."""
        tier = backend_class(backend)
        languages = (self.language,) if isinstance(self.language, str) else (self.language or ())
        return self.id in tier.own_limits or tier.language in languages

    def matches(self, record: Record, source: str) -> bool:
        if not self.on(str(record.get("backend"))):
            return False
        # a limit of wrong values explains none where the values were right (an out-of-bounds write failed it)
        if self.numeric_only and (not is_numeric(record) or (record.get("metrics") or {}).get("passed") is True):
            return False
        params = record.get("params") or {}
        # a replayed launch's case names the dtype it is judged at `out` (the loosest float it reads or writes)
        dtype = params.get("dtype", params.get("out") if "launch" in params else None)
        # a case of another dtype is never this limit's; one with no dtype parameter is, where the source says so
        if self.dtypes and str(dtype) not in self.dtypes and \
                (dtype is not None or not (self.source and source and re.search(self.source, source))):
            return False
        if self.message and not re.search(self.message, failure_text(record), re.IGNORECASE | re.DOTALL):
            return False
        if self.source and not (source and re.search(self.source, source)):
            return False
        return self.fits is None or self.fits(record, source)

    def holds(self) -> bool:
        """Whether the installed version still has it (a probe that cannot tell keeps the entry)."""
        if self.probe is None:
            return True
        try:
            verdict = _cached_probe(self.id, self.probe)
        except Exception:  # a probe must never cost a verdict
            return True
        return verdict is not False


# ---------------------------------------------------------------- probes


def _host_lacks_truncsfbf2() -> bool | None:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("gcc_s") or "libgcc_s.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    return not hasattr(lib, "__truncsfbf2")


def _tier_lacks_bf16_builtins() -> bool | None:
    """The host lacks them and the tier's runtime does not supply its own (parity.backends.ascend.cpu_softfloat)."""
    import importlib.util

    if importlib.util.find_spec("parity.backends.ascend.cpu_softfloat") is not None:
        return False
    return _host_lacks_truncsfbf2()


def _installed_version() -> str:
    import importlib.metadata

    for dist in ("triton-ascend", "triton"):
        try:
            return f"{dist} {importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return "none"


@functools.cache
def _cached_probe(limit_id: str, probe: Callable[[], bool | None]) -> bool | None:
    """Once per process, and on disk per installed version (a probe may start a Python)."""
    path = cache_root() / "triage-probes" / "verdicts.json"
    # the probe's name is in the key: a parity that answers a limit another way (the tier now supplies what
    # the host lacks) must not read an older parity's verdict
    key = f"{limit_id} ({getattr(probe, '__qualname__', '')}) @ {_installed_version()}"
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if key in known:
        cached: bool | None = known[key]
        return cached
    verdict = probe()
    if verdict is not None:
        known[key] = verdict
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    return verdict


# ---------------------------------------------------------------- the table

def _ascend_maps_no_libdevice() -> bool | None:
    """True while the installed triton-ascend's backend maps no module for triton.language.extra.libdevice."""
    try:
        from triton.backends.ascend import compiler

        return "triton.language.extra.libdevice" not in compiler.AscendBackend.get_module_map(None)
    except Exception:  # no triton-ascend here, or its backend class moved: cannot tell
        return None


# prints 1 while triton-ascend's triton-adapter cannot convert the call a noinline function makes, 0 once it can
_NOINLINE_PROBE = """
from parity.backends.ascend import driver as ascend_driver
ascend_driver.install("Ascend910B3")
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
@triton.jit(noinline=True)
def f(x, y, Z):
    tl.store(Z, x + y)
@triton.jit
def k(X, Y, Z):
    f(tl.load(X), tl.load(Y), Z)
try:
    triton.compile(ASTSource(fn=k, signature={"X": "*fp32", "Y": "*fp32", "Z": "*fp32"}, constants={}),
                   target=GPUTarget("npu", "Ascend910B3", 0))
    print(0)
except Exception as exc:
    print(int("unresolved materialization" in str(exc) or "does not reference a valid function" in str(exc)))
"""


def _ascend_cannot_call_noinline() -> bool | None:
    """Compiles a kernel that calls a noinline function with the installed triton-ascend (in a child process: the
    compile-only driver takes the process); None where this process has no triton-ascend."""
    if not _is_triton_ascend():
        return None
    from pathlib import Path

    from parity.paths import cache_root

    folder = cache_root() / "triage-probes"
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "ascend_noinline.py"
    script.write_text(_NOINLINE_PROBE, encoding="utf-8")
    root = str(Path(__file__).resolve().parents[2])  # parity's own checkout, for the child's imports
    env = {k: v for k, v in settings.child_env().items() if k != "TRITON_INTERPRET"}  # a compile, not the interpreter
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          timeout=PROBE_TIMEOUT_S, check=False)
    return {"1": True, "0": False}.get((done.stdout.strip().splitlines() or [""])[-1])


INTERPRETER = "Triton interpreter"
# a `for NAME in range(` / `tl.range(` loop whose variable later has a method called on it (`NAME.to(`)
LOOP_VAR_METHOD = r"for\s+(\w+)\s+in\s+(?:tl\.)?range\([\s\S]*?\b\1\.\w+\("

LIMITS: tuple[TierLimit, ...] = (
    TierLimit("interpret-bf16-dot", OwnerKind.TIER, INTERPRETER,
              "Triton's interpreter multiplies the raw bit patterns of bf16 tiles in tl.dot",
              "https://github.com/triton-lang/triton/issues/11584", source=r"tl\.dot\(|\.dot\(",
              numeric_only=True, dtypes=("bf16",), probe=_interpreter_probe("interpret-bf16-dot")),
    # a case judged at fp8 (the loosest float it writes): the interpreter's own float -> fp8 rounding, not the kernel's
    TierLimit("interpret-fp8-downcast", OwnerKind.TIER, INTERPRETER,
              "Triton's interpreter rounds float -> fp8 casts its own way (ties away from zero, and it drops the carry "
              "when rounding overflows the mantissa: 126.24 -> fp8e4nv gives 64, not 128), unlike the GPU's "
              "round-to-nearest-even",
              "https://github.com/triton-lang/triton/pull/11897", numeric_only=True, dtypes=("fp8",)),
    TierLimit("interpret-int-to-bf16", OwnerKind.TIER, INTERPRETER,
              "Triton's interpreter returns the raw bit patterns for an int→bf16 cast",
              "https://github.com/triton-lang/triton/issues/11584", source=r"\.to\(\s*tl\.bfloat16",
              numeric_only=True, probe=_interpreter_probe("interpret-int-to-bf16")),
    TierLimit("interpret-bf16-arith", OwnerKind.TIER, INTERPRETER,
              "Triton's interpreter keeps bf16 as uint16 and applies negation and addition to the bit patterns",
              "https://github.com/triton-lang/triton/issues/11584", numeric_only=True, dtypes=("bf16",),
              probe=_interpreter_probe("interpret-bf16-arith")),
    # the interpreter patches tl, tl.core and tl.math with its numpy builder (runtime/interpreter.py, _patch_lang),
    # not triton.language.extra.libdevice: with no GPU driver to map that module, its functions run as the empty
    # stubs they are (erf, expm1, tanh, rsqrt, ... all return None; checked on Triton 3.8.0)
    TierLimit("interpret-libdevice", OwnerKind.TIER, INTERPRETER,
              "triton.language.extra.libdevice's functions return None under Triton's interpreter on a machine with "
              "no GPU (it patches tl and tl.math only)",
              "https://github.com/triton-lang/triton/issues/8825",
              # a function imported from a libdevice module itself (FlagGems' generated code: `from
              # triton.language.extra.cuda.libdevice import erf`) is never patched: it asks for `_semantic`
              message=r"cannot convert None|NoneType|`_semantic` argument must be provided", source=r"libdevice",
              probe=_interpreter_probe("interpret-libdevice")),
    # the interpreter wraps a kernel's int, bool and tensor arguments as tensors but hands a float over as the
    # Python float it is (runtime/interpreter.py, _implicit_cvt; Triton 3.8.0), where the compiled path passes an
    # fp32 scalar: a tensor method on it (`eps.to(tl.float32)`, Liger-Kernel's rms_norm) raises there only
    TierLimit("interpret-float-arg", OwnerKind.TIER, INTERPRETER,
              "Triton's interpreter passes a float argument as a Python float, not an fp32 scalar as the compiled "
              "path does, so a tensor method on it (`eps.to(tl.float32)`) raises AttributeError",
              "https://github.com/triton-lang/triton/blob/main/python/triton/runtime/interpreter.py",
              message=r"'float' object has no attribute '\w+'", probe=_interpreter_probe("interpret-float-arg")),
    # a tl.dtype handed to a @triton.jit helper is a tl.constexpr on the compiled path (`dtype.value` is the dtype);
    # the interpreter hands over the dtype itself (FlagGems' get_dtype_min in amax/argmax; Triton 3.8.0)
    TierLimit("interpret-constexpr-arg", OwnerKind.TIER, INTERPRETER,
              "Triton's interpreter hands a tl.dtype argument of a @triton.jit helper over as the dtype, not as the "
              "tl.constexpr the compiled path wraps it in, so `dtype.value` raises AttributeError",
              "https://github.com/triton-lang/triton/blob/main/python/triton/runtime/interpreter.py",
              message=r"'dtype' object has no attribute 'value'", probe=_interpreter_probe("interpret-constexpr-arg")),
    # the interpreter runs a kernel's `for i in range(n)` / `tl.range` as Python's range (runtime/interpreter.py,
    # _patch_lang's _new_range; Triton 3.8.0), so the induction variable is a Python int where the compiled path has
    # an i32 scalar: a tensor method on it (fla's `i_t.to(tl.int64)`) raises there only. static_range is left out:
    # its variable is a constexpr on the compiled path too
    TierLimit("interpret-loop-var", OwnerKind.TIER, INTERPRETER,
              "Triton's interpreter runs `for i in range(n)` / `tl.range` as a Python loop, so `i` is a Python int, "
              "not the i32 scalar of the compiled path, and a tensor method on it (`i.to(tl.int64)`) raises "
              "AttributeError", "https://github.com/triton-lang/triton/blob/main/python/triton/runtime/interpreter.py",
              message=r"'int' object has no attribute '\w+'", source=LOOP_VAR_METHOD,
              probe=_interpreter_probe("interpret-loop-var")),
    # the interpreter's own builder or semantic layer lacks an operation: raised inside the interpreter, never
    # the kernel's (once upstream adds the operation the message no longer occurs, so the entry needs no probe)
    TierLimit("interpret-builder-gap", OwnerKind.TIER, INTERPRETER,
              "Triton's interpreter lacks an operation the compiled path has (its InterpreterBuilder or semantic "
              "layer raises AttributeError / NotImplementedError)",
              "https://github.com/triton-lang/triton/blob/main/python/triton/runtime/interpreter.py",
              message=r"(AttributeError|NotImplementedError)\W.{0,8}'Interpreter\w*' object has no attribute|"
                      r"not supported in interpreter mode", evident=True),
    TierLimit("lowered-truncsfbf2", OwnerKind.TIER, "ascend-lowered host toolchain",
              "the host's libgcc lacks the soft-float bf16 builtins a lowered module with bf16 arithmetic needs",
              "https://gcc.gnu.org/gcc-13/changes.html", message=r"undefined symbol: __(trunc|extend)\w*bf2",
              probe=_tier_lacks_bf16_builtins),
    TierLimit("lowered-cumsum-i1", OwnerKind.TIER, "ascend-lowered cumsum stand-in",
              "tl.cumsum over a boolean (i1) tile has no triton-ascend meaning to run on the CPU (bishengir "
              "rejects it at compile time), so the tier declines it", "https://github.com/triton-lang/triton-ascend/issues/2334",
              message=r"lowered-cumsum-i1"),
    TierLimit("lowered-device-print-tensor", OwnerKind.TIER, "ascend-lowered stand-ins",
              "tl.device_print of a tensor has no CPU stand-in (a scalar print has one)",
              "https://gitcode.com/Ascend/AscendNPU-IR", message=r"lowered-device-print-tensor"),
    # ascend-lowered calls the built module once per program id, one after another (cpu_abi.run_grid): a program
    # that spins until another one moves a lock or a flag has no other program running to move it
    TierLimit("lowered-spin-lock", OwnerKind.TIER, "ascend-lowered grid loop",
              "spin lock needs concurrent programs: ascend-lowered runs a grid's programs one at a time on the CPU, "
              "with no forward-progress guarantee among them, so a kernel that spins on tl.atomic_cas / "
              "tl.atomic_xchg may wait forever there (the NPU runs its programs on concurrent cores)",
              "https://triton-lang.org/main/getting-started/tutorials/05-layer-norm.html", needs_evidence=True),
    # an integer divisor loaded from the data (FlagGems' remainder and trunc_div tests divide by zero on purpose):
    # cpu_divzero finds divisions by a launch argument before the module runs, not by a loaded value
    TierLimit("lowered-int-div-trap", OwnerKind.TIER, "ascend-lowered on x86",
              "an integer division or remainder by zero in the data traps on x86 (SIGFPE) and kills the process; "
              "the NPU and GPUs return a value and go on, so this case is not checked on this tier",
              "https://www.felixcloutier.com/x86/idiv", fits=killed_by_sigfpe, evident=True),
    TierLimit("lowered-library-call", OwnerKind.TIER, "ascend-lowered stand-ins",
              "the module calls a bishengir library function the CPU tier has no definition of",
              "https://gitcode.com/Ascend/AscendNPU-IR", message=r"bodiless function|has no CPU definition"),
    # a vendor's bug already reported upstream: the vendor's, with a note pointing at the report, not a fresh draft
    TierLimit("ascend-generic-libdevice", OwnerKind.TRITON_ASCEND,
              "triton-ascend", "upstream's portable triton.language.extra.libdevice compiles to None on "
              "triton-ascend (its backend maps no module for it); triton-ascend's own extra.ascend / extra.cann "
              "libdevice, or tl.math, work", "https://github.com/triton-lang/triton-ascend/issues/2363",
              message=r"cannot convert None|NoneType",
              source=r"triton\.language\.extra(\.libdevice\b| import libdevice)", probe=_ascend_maps_no_libdevice,
              language="triton-ascend"),
    TierLimit("ascend-noinline", OwnerKind.TRITON_ASCEND, "triton-ascend",
              "triton-adapter cannot convert the tt.call a @triton.jit(noinline=True) function makes (\"failed to "
              "legalize unresolved materialization ... to '!tt.ptr'\"); upstream compiles it",
              "https://github.com/triton-lang/triton-ascend/issues/39",
              message=r"unresolved materialization|does not reference a valid function",
              source=r"noinline\s*=\s*True", probe=_ascend_cannot_call_noinline, language="triton-ascend"),
    # found in the module before it runs (parity.backends.ascend.cpu_divzero): the IR text is the evidence
    TierLimit("ascend-block-ptr-zero-stride", OwnerKind.TRITON_ASCEND, "triton-ascend",
              "triton-adapter rebuilds a block pointer's per-axis offsets for boundary_check by dividing by each "
              "axis's run-time stride, so a zero stride (a broadcast operand) divides by zero: SIGFPE on x86, an "
              "undefined value on the NPU. triton-ascend 3.2.0 has it; its main fixed it in August 2026; upstream "
              "Triton takes zero strides",
              "https://github.com/triton-lang/triton-ascend/pull/1838",
              message=r"divides by an argument that is 0 in this launch", source=r"make_block_ptr",
              fits=divides_by_a_block_ptr_stride, evident=True, language="triton-ascend"),
    # a precision class: fp32 tl.dot runs in TF32 on NVIDIA unless the kernel asks for ieee; the author's choice
    TierLimit("cuda-tf32-dot", OwnerKind.AUTHOR, "kernel author",
              "TF32 rounding of an fp32 tl.dot (NVIDIA's default, a 10-bit mantissa): pass input_precision=\"ieee\" "
              "to tl.dot for full fp32, or give the spec an fp32 tolerance with that reason (triton-ascend computes "
              "fp32 dots in ieee, its default, or hf32 only)",
              "https://triton-lang.org/main/python-api/generated/triton.language.dot.html",
              source=r"\bdot\(", numeric_only=True, fits=tf32_rounding),
    # the same precision class on Ascend, where it is an error: NVIDIA's TF32 has no Ascend counterpart of that name
    TierLimit("ascend-rejects-tf32", OwnerKind.AUTHOR, "kernel author",
              "triton-ascend takes only ieee and hf32 for an fp32 tl.dot and rejects tf32/tf32x3 (NVIDIA's): pick the "
              "precision per device (hf32 or ieee on Ascend)",
              "https://github.com/triton-lang/triton-ascend/pull/1265",
              message=r"tf32 or tf32x3 is invalid", source=r"\bdot\(", language="triton-ascend"),
    # a target without the dtype: the author's to keep off that target, no vendor bug (triton-ascend's own tests
    # expect the refusal)
    TierLimit("ascend-no-fp8", OwnerKind.AUTHOR, "kernel author",
              "triton-ascend refuses fp8 types ('unexpected type fp8') for Atlas A2/A3: its frontend builds them only "
              "for the Ascend 950 generation (910_95), and its own tests expect the refusal; keep fp8 off A2/A3 (a "
              "16-bit type there)",
              "https://github.com/triton-lang/triton-ascend/blob/a84b1eb52/third_party/ascend/unittest/"
              "generalization_cases/test_invalid_fp8.py",
              message=r"unexpected type fp8", language="triton-ascend"),
    # a random kernel's stream differs by compiler (owner "random": parity.triage.random_stream, which alone matches it)
    TierLimit("random-stream", OwnerKind.RANDOM, "random stream",
              "tl.rand / tl.randn / tl.randint draw from a seeded stream that each compiler generates its own way "
              "(triton-ascend's differs from upstream Triton's); upstream's own test_rand checks the distribution only",
              "https://github.com/triton-lang/triton/blob/main/python/test/unit/language/test_random.py",
              needs_evidence=True, language=("triton", "triton-ascend")),
    # language rules: the author's to handle, on the tiers whose language has them
    TierLimit("upstream-erf-fp32-only", OwnerKind.AUTHOR, "kernel author",
              "upstream Triton's tl.erf takes fp32/fp64 only; triton-ascend also takes fp16/bf16",
              "https://triton-lang.org/main/python-api/generated/triton.language.erf.html",
              message=r"Expected dtype.*fp32.*fp64|fp32.*fp64.*erf", source=r"\berf\(", language="triton"),
    TierLimit("upstream-tuple-store", OwnerKind.AUTHOR, "kernel author",
              "upstream Triton cannot store the tuple tl.broadcast returns; triton-ascend accepts it",
              "https://triton-lang.org/main/python-api/generated/triton.language.broadcast.html",
              message=r"tuple", source=r"tl\.broadcast\(", language="triton"),
    TierLimit("upstream-power-of-2", OwnerKind.AUTHOR, "kernel author",
              "upstream Triton takes power-of-2 tile shapes only; triton-ascend takes others",
              "https://triton-lang.org/main/python-api/generated/triton.language.arange.html",
              message=r"must be a power of 2|power of two", language="triton"),
    # a language change by version: the frontend that refuses is the older language, not a compiler bug. Seen in
    # upstream's own test_index1d, whose rank-mismatch kernels Triton 3.6 compiled on the H100 and triton-ascend
    # 3.2 refuses, as Triton 3.5.1's semantic.py does (broadcast_impl_shape in _store_legacy). No probe: a frontend
    # that raises this for a lower-rank value is an older language by that fact, and a newer one never raises it
    TierLimit("store-value-rank", OwnerKind.AUTHOR, "kernel author",
              "tl.store broadcasts a value or mask of lower rank than its pointer only from upstream Triton 3.6 on; "
              "triton-ascend 3.2 (built on Triton 3.2) and upstream 3.5 or older raise \"Cannot broadcast, rank "
              "mismatch\": give the value the pointer's rank (e.g. `z[None, :, :]`) to run on both",
              "https://github.com/triton-lang/triton/pull/8661",
              message=r"Cannot broadcast, rank mismatch", fits=stores_a_lower_rank_value, evident=True,
              language=("triton-ascend", "triton")),
    # an API upstream removed: the kernel must move off it to run on that release and later
    TierLimit("upstream-block-ptr-removed", OwnerKind.AUTHOR, "kernel author",
              "upstream Triton 3.9 removed block pointers (tl.make_block_ptr, tl.advance) in favor of tensor "
              "descriptors (tl.make_tensor_descriptor); the kernel must port to them to run on Triton 3.9 and "
              "later (triton-ascend 3.2 keeps block pointers)",
              "https://github.com/triton-lang/triton/pull/6847",
              message=r"Block pointers have been removed", language="triton"),
    # before the removal, Triton 3.8 emulates the deprecated block pointers with an aggregate (`_block_ptr`,
    # language/core.py) whose type has no `element_ty`; Triton 3.6 gave a pointer type. Seen in FlagGems 5.0.2's
    # generated pointwise kernels (`out.to(out_bptr.type.element_ty)`), recorded on the H200's 3.6
    TierLimit("upstream-block-ptr-emulated", OwnerKind.AUTHOR, "kernel author",
              "upstream Triton 3.8 emulates the deprecated block pointers with an aggregate whose `.type` has no "
              "`element_ty` (3.6 gave a pointer type): a kernel reading `bptr.type.element_ty` fails on 3.8 and later "
              "and must move to tensor descriptors (triton-ascend 3.2 keeps block pointers)",
              "https://github.com/triton-lang/triton/pull/9667",
              message=r"'_aggregate_type' object has no attribute 'element_ty'", source=r"make_block_ptr",
              language="triton"),
)


def active_limits() -> tuple[TierLimit, ...]:
    return LIMITS


def matching_limit(record: Record, source: str) -> TierLimit | None:
    """The first limit that explains this record and still holds on the installed version."""
    for limit in active_limits():
        if not limit.needs_evidence and limit.matches(record, source) and limit.holds():
            return limit
    return None
