"""triton-ascend's ttadapter MLIR built into an x86 shared object with Debian's LLVM/MLIR 19 tools.

ttadapter is what triton-adapter makes of a kernel (Linalg-level MLIR, upstream dialects only;
Ascend specifics ride as attributes). ascendnpu-ir 1.2.0 is LLVM 19, so `mlir-opt-19`,
`mlir-translate-19` and `llc-19` lower it to x86 code; a C compiler links the object with a
strided `memrefCopy` (the one symbol MLIR's runner utils would otherwise provide) and the bf16
soft-float builtins the host's libgcc may lack (parity.backends.ascend.cpu_softfloat).

Builds are cached under parity's own cache dir by a hash of the IR, the pipeline and the tools,
so a warm run never rebuilds. A module the pipeline cannot lower is cached too, as the reason
it cannot run (LoweringUnsupported): the tier records such a case as skipped, never failed.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from parity import settings
from parity.backends.ascend.cpu_build_errors import LoweringUnsupported
from parity.backends.ascend.cpu_library import c_stand_ins, define_library_calls, undefined_calls
from parity.backends.ascend.cpu_softfloat import BF16_BUILTINS_LL

LLVM_MAJOR = 19
APT_INSTALL = f"apt-get install -y mlir-{LLVM_MAJOR}-tools llvm-{LLVM_MAJOR} gcc"
TOOL_TIMEOUT_S = 300.0
# one change here must invalidate every cached build
PIPELINE_VERSION = "8"

# arith on tensors (named_ops=True, as the NPU path emits) -> linalg -> loops -> LLVM; math ops
# LLVM has no intrinsic for (erf, atan2, ...) become libm calls; cf goes to LLVM after memref and
# func, since branches may carry memrefs (an scf.if that yields a tile)
PASSES = (
    "--convert-elementwise-to-linalg", "--convert-linalg-to-affine-loops", "--eliminate-empty-tensors",
    "--empty-tensor-to-alloc-tensor",
    # function boundaries: the library functions parity defines (cpu_library) take and return tensors
    "--one-shot-bufferize=allow-return-allocs-from-loops=true bufferize-function-boundaries=true "
    "function-boundary-type-conversion=identity-layout-map",
    "--lower-affine", "--convert-linalg-to-loops", "--arith-expand=include-bf16=true", "--convert-scf-to-cf",
    "--convert-arith-to-llvm", "--convert-math-to-llvm", "--convert-math-to-libm",
    "--convert-complex-to-llvm", "--convert-vector-to-llvm", "--convert-index-to-llvm", "--memref-expand",
    "--expand-strided-metadata", "--finalize-memref-to-llvm", "--convert-func-to-llvm", "--convert-cf-to-llvm",
    "--lower-affine",
    "--convert-arith-to-llvm", "--reconcile-unrealized-casts",
)

# Ascend attributes whose values need Ascend's own dialects to parse (#hacc.x<...>, #hivm.y<...>)
_ASCEND_ATTR_RE = re.compile(r"\b(?:hacc|hivm|annotation)\.\w+ = #(?:hacc|hivm|annotation)\.\w+<[^>]*>,? ?")
_HACC_UNIT_RE = re.compile(r"\bhacc\.entry,? ?")
# `tl.debug_barrier()`: the host runs one program at a time and each program's ops in order, so every
# store before the barrier is visible to every load after it; a barrier orders nothing here
BARRIER_RE = re.compile(r"^[ \t]*gpu\.barrier[ \t]*\n", re.M)
_ERROR_RE = re.compile(r"error: (.*)")

# the runner-utils symbol the lowered code calls for strided memref.copy, and nothing else
MEMREF_COPY_C = r"""
#include <stdint.h>
#include <string.h>
typedef struct { int64_t rank; void *desc; } Unranked;
typedef struct { char *base; char *data; int64_t offset; int64_t rest[]; } Desc;
static void copy_dim(int64_t es, int64_t rank, int64_t d, const int64_t *sz, const int64_t *ss,
                     const int64_t *ds, const char *s, char *t) {
  if (d == rank) { memcpy(t, s, es); return; }
  for (int64_t i = 0; i < sz[d]; ++i)
    copy_dim(es, rank, d + 1, sz, ss, ds, s + i * ss[d] * es, t + i * ds[d] * es);
}
void memrefCopy(int64_t es, Unranked *src, Unranked *dst) {
  Desc *s = (Desc *)src->desc, *t = (Desc *)dst->desc;
  int64_t r = src->rank;
  copy_dim(es, r, 0, s->rest, s->rest + r, t->rest + r, s->data + s->offset * es, t->data + t->offset * es);
}
"""


@dataclass(frozen=True)
class Tools:
    mlir_opt: str
    mlir_translate: str
    llc: str
    cc: str

    def fingerprint(self) -> str:
        return "|".join((PIPELINE_VERSION, *self.__dict__.values()))


def _find(name: str) -> str | None:
    """`name-19` on PATH, then Debian's /usr/lib/llvm-19/bin (or PARITY_LLVM_BIN)."""
    for directory in (settings.current().llvm_bin, f"/usr/lib/llvm-{LLVM_MAJOR}/bin"):
        if directory and (Path(directory) / name).exists():
            return str(Path(directory) / name)
    return shutil.which(f"{name}-{LLVM_MAJOR}")


def find_tools() -> Tools | str:
    """The tools, or what is missing and the exact command that installs it."""
    found = {key: _find(name) for key, name in
             (("mlir_opt", "mlir-opt"), ("mlir_translate", "mlir-translate"), ("llc", "llc"))}
    # CC names the C compiler by make's convention: the user's, not parity's (parity.settings)
    found["cc"] = next((c for c in (os.environ.get("CC"), "cc", "gcc", f"clang-{LLVM_MAJOR}", "clang")
                        if c and shutil.which(c)), None)
    missing = [name for name, path in found.items() if path is None]
    if missing:
        names = ", ".join(m.replace("_", "-") + ("" if m == "cc" else f"-{LLVM_MAJOR}") for m in missing)
        return (f"the ascend-lowered tier needs LLVM/MLIR {LLVM_MAJOR}'s tools and a C compiler; missing: {names}. "
                f"Install them with `{APT_INSTALL}` (Debian/Ubuntu)")
    return Tools(**{k: str(v) for k, v in found.items()})


def cache_root() -> Path:
    """This tier's builds and Triton cache, under parity's own cache dir (parity.paths), never Triton's."""
    from parity.paths import cache_root as parity_cache

    return parity_cache() / "ascend-lowered"


def ir_hash(ir_text: str, tools: Tools) -> str:
    return hashlib.sha256(f"{tools.fingerprint()}\n{ir_text}".encode()).hexdigest()[:32]


def library_calls(ir_text: str) -> list[str]:
    """Functions the module declares without a body: bishengir supplies them on the NPU path."""
    from parity.backends.ascend.cpu_library import declarations

    return declarations(ir_text)


@dataclass(frozen=True)
class Prepared:
    """What the tier builds from one captured module: the MLIR with parity's stand-ins, and their C part."""

    mlir: str
    c_source: str  # "" when the module needs no C stand-in


def prepare_module(ir_text: str) -> Prepared:
    """The module with parity's stand-ins for bishengir's library calls (parity.backends.ascend.cpu_library).

    Raises LoweringUnsupported naming the tier limit for a call no stand-in can take.
    """
    defined = define_library_calls(ir_text)
    external = undefined_calls(defined)
    if external:
        raise LoweringUnsupported(
            f"ascend-lowered tier limit lowered-library-call: the module calls {', '.join(external)}, which "
            "triton-adapter leaves to bishengir's library and which has no CPU definition here (parity defines "
            "triton_cumsum_*, triton_sort, triton_gather, scalar triton_print_* and fp32/fp16 __hmf_* only)")
    return Prepared(defined, c_stand_ins(defined))


def strip_ascend_attributes(text: str) -> str:
    return _HACC_UNIT_RE.sub("", _ASCEND_ATTR_RE.sub("", text))


def drop_barriers(text: str) -> str:
    """The module without its `gpu.barrier`s (BARRIER_RE says why that is exact on the host)."""
    return BARRIER_RE.sub("", text)


@dataclass(frozen=True)
class Built:
    """A cached build: the shared object and the module it was built from."""

    so_path: Path
    mlir_path: Path
    key: str
    cached: bool


def build(ir_text: str, tools: Tools, root: Path | None = None) -> Built:
    """The shared object for this ttadapter module, built once per IR hash.

    Raises LoweringUnsupported (cached as `<key>.unsupported`) when a tool refuses the module.
    """
    root = root or cache_root()
    key = ir_hash(ir_text, tools)
    folder = root / key[:2]
    so_path, mlir_path, refused = folder / f"{key}.so", folder / f"{key}.mlir", folder / f"{key}.unsupported"
    if so_path.exists():
        return Built(so_path, mlir_path, key, cached=True)
    if refused.exists():
        raise LoweringUnsupported(refused.read_text())
    folder.mkdir(parents=True, exist_ok=True)
    _atomic_write(mlir_path, ir_text.encode())
    with tempfile.TemporaryDirectory(prefix="parity-lowered-", dir=folder) as tmp:
        work = Path(tmp)
        try:
            _lower(prepare_module(ir_text), tools, work, _runtime_object(tools, root))
        except LoweringUnsupported as exc:
            _atomic_write(refused, str(exc).encode())
            raise
        os.replace(work / "kernel.so", so_path)  # atomic: xdist workers may build the same module
    return Built(so_path, mlir_path, key, cached=False)


def _lower(module: Prepared, tools: Tools, work: Path, runtime_objs: list[Path]) -> None:
    source = work / "kernel.ttadapter.mlir"
    source.write_text(drop_barriers(strip_ascend_attributes(module.mlir)))
    llvm_mlir = work / "kernel.llvm.mlir"
    _tool("mlir-opt", [tools.mlir_opt, str(source), *PASSES, "-o", str(llvm_mlir)])
    llvm_mlir.write_text(strip_ascend_attributes(llvm_mlir.read_text()))
    _tool("mlir-translate", [tools.mlir_translate, "--mlir-to-llvmir", str(llvm_mlir), "-o", str(work / "kernel.ll")])
    _tool("llc", [tools.llc, "-O2", "--relocation-model=pic", "-filetype=obj", str(work / "kernel.ll"),
                  "-o", str(work / "kernel.o")])
    objects = [str(work / "kernel.o"), *(str(obj) for obj in runtime_objs)]
    if module.c_source:  # the module's scalar device prints and triton-ascend libdevice calls
        (work / "prints.c").write_text(module.c_source)
        _tool("cc", [tools.cc, "-O2", "-fPIC", "-c", str(work / "prints.c"), "-o", str(work / "prints.o")])
        objects.append(str(work / "prints.o"))
    _tool("link", [tools.cc, "-shared", "-fPIC", "-o", str(work / "kernel.so"), *objects, "-lm"])


def _runtime_object(tools: Tools, root: Path) -> list[Path]:
    """memrefCopy (C) and the bf16 builtins (LLVM IR, built by the kernel's own llc), once per cache dir."""
    digest = hashlib.sha256(f"{tools.fingerprint()}\n{MEMREF_COPY_C}\n{BF16_BUILTINS_LL}".encode()).hexdigest()[:16]
    objs = [root / f"memref_copy-{digest}.o", root / f"bf16_builtins-{digest}.o"]
    if all(obj.exists() for obj in objs):
        return objs
    with tempfile.TemporaryDirectory(prefix="parity-rt-", dir=root) as tmp:
        source, ll = Path(tmp) / "memref_copy.c", Path(tmp) / "bf16_builtins.ll"
        source.write_text(MEMREF_COPY_C)
        ll.write_text(BF16_BUILTINS_LL)
        _tool("cc", [tools.cc, "-O2", "-fPIC", "-c", str(source), "-o", str(Path(tmp) / "rt.o")])
        _tool("llc", [tools.llc, "-O2", "--relocation-model=pic", "-filetype=obj", str(ll), "-o",
                      str(Path(tmp) / "bf16.o")])
        os.replace(Path(tmp) / "rt.o", objs[0])
        os.replace(Path(tmp) / "bf16.o", objs[1])
    return objs


def _tool(stage: str, cmd: list[str]) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise LoweringUnsupported(f"{stage} ran past {TOOL_TIMEOUT_S:g} s on this module") from None
    if done.returncode:
        raise LoweringUnsupported(f"{stage} cannot lower this module: {first_error(done.stderr)}")


def first_error(stderr: str) -> str:
    """The first `error:` line a tool printed (the op or type it refused), else its last line."""
    found = _ERROR_RE.search(stderr)
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return (found.group(1).strip() if found else (lines[-1] if lines else "no message"))[:300]


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
