"""ascend-compile: every kernel lowered through triton-ascend and bishengir-compile, with no NPU.

The spec's own launcher runs on CPU tensors under a compile-only driver (parity.backends.ascend.driver),
so the real JIT specialization path picks what to compile, exactly as on a device. Each case
runs in a forked child (parity.compile.isolate): a compiler that aborts or hangs costs that case only.
Needs triton-ascend and ascendnpu-ir (which ships bishengir-compile); `nox -s ascend-compile`
installs both.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from parity import settings
from parity.backends.ascend import VENV_NOTE
from parity.backends.ascend.arch import ASCEND_ARCHS, DEFAULT_ASCEND_ARCH
from parity.backends.base import Backend, Check, dist_version
from parity.backends.trackers import ASCEND
from parity.errors import CannotRunHere
from parity.fit.hook import FitTier
from parity.fit.probe import ascend_probe
from parity.spec import Case, KernelSpec

SESSION_HINT = "nox -s ascend-compile"
# a whole case (every compile its launcher triggers); vllm-ascend saw ~2.5 s per compile


def install_memo(bin_dir: Path, real: Path, store: Path) -> Path:
    """A `bishengir-compile` in bin_dir that runs the memo script over the real compiler; returns bin_dir."""
    from parity.backends.ascend import bishengir_memo

    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "bishengir-compile"
    words = [sys.executable, bishengir_memo.__file__, str(store), str(real)]
    shim.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(w) for w in words) + ' "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return bin_dir


def bishengir_bin_dir() -> Path | None:
    """ascendnpu-ir's bin/ (bishengir-compile), found without importing anything."""
    spec = importlib.util.find_spec("ascendnpuir")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "bin"
    return path if (path / "bishengir-compile").exists() else None


SKIP = "parity_skip"  # the compile child's one-entry answer for a launch this tier cannot run: its reason
FIT_SEARCH_MARGIN_S = 50.0  # left of a case's timeout when its fit search stops starting compiles (a probe: 40 s)


class AscendCompileBackend(Backend):
    name = "ascend-compile"
    mode = "compile"
    device_type = "cpu"
    target = "ascend"
    presents = "npu"
    verifies = frozenset({"vendor-compiler"})
    tracker = ASCEND
    # the device type launches see (parity.compile.device_tensors): CPU memory that says "npu"
    launch_device_type: ClassVar[str] = "npu"
    fallback_hint = SESSION_HINT
    check = Check("Ascend (triton-ascend)", "builds for {arch}", 0, "build")
    report_rank = 4
    language = "triton-ascend"
    gpu_target = ("npu", "Ascend910B3", 0)
    venv = "venv-ascend"
    venv_note = VENV_NOTE
    # the plugin copies this pytest option's value into `arch` before prepare()
    arch_option: ClassVar[str] = "--ascend-arch"
    # triton-ascend's own lowering computes a fit where LLVM 19's tools are; else triton-ascend's interpreter
    proves_on: ClassVar[tuple[str, ...]] = ("ascend-lowered", "interpret")
    repro_template: ClassVar[str] = "ascend_compile_script"

    def __init__(self) -> None:
        super().__init__()
        self.arch = DEFAULT_ASCEND_ARCH
        self.timeout_s = settings.current().compile_timeout_s
        self._reason: str | None = None
        self._driver: Any = None
        self._undo_torch: Any = None

    def _missing(self) -> str | None:
        if dist_version("triton-ascend") is None:
            found = dist_version("triton")
            also = f" (this environment has upstream triton {found}, which cannot target Ascend)" if found else ""
            return f"triton-ascend is not installed{also}; run `{SESSION_HINT}`"
        if bishengir_bin_dir() is None and shutil.which("bishengir-compile") is None:
            return f"ascendnpu-ir (bishengir-compile) is not installed; run `{SESSION_HINT}`"
        if dist_version("pybind11") is None:
            return f"pybind11 is not installed (triton-ascend imports it); run `{SESSION_HINT}`"
        return None

    def prepare(self) -> None:
        """Find bishengir-compile, give Triton a private cache, install the compile-only driver."""
        if self._driver is not None:
            return
        self._reason = self._missing()
        if self._reason and not self._can_install_driver():
            return
        # triton-ascend finds bishengir-compile on PATH, for this process and its compile children alike
        if shutil.which("bishengir-compile") is None and bishengir_bin_dir() is not None:
            os.environ["PATH"] = f"{bishengir_bin_dir()}{os.pathsep}{os.environ.get('PATH', '')}"
        # never share a cache with real NPU runs: compile-only binaries are empty placeholders; a fresh
        # dir per session under parity's own cache (parity.compile.sandbox), never ~/.triton
        from parity.compile import sandbox
        from parity.paths import cache_root, triton_cache_dir

        parent = triton_cache_dir(self.name)
        parent.mkdir(parents=True, exist_ok=True)
        cache_dir = tempfile.mkdtemp(prefix="session-", dir=parent)
        atexit.register(shutil.rmtree, cache_dir, ignore_errors=True)
        sandbox.enter(self.name, Path(cache_dir))
        real = shutil.which("bishengir-compile")
        if real is not None and not settings.current().no_compile_memo:
            # configs that differ only in what triton-ascend ignores hand bishengir the same bytes: each
            # distinct call runs once (parity.backends.ascend.bishengir_memo), for this process and its children
            shim = install_memo(Path(cache_dir) / "bin", Path(real), cache_root() / "bishengir")
            os.environ["PATH"] = f"{shim}{os.pathsep}{os.environ.get('PATH', '')}"
        from parity.backends.ascend import driver as ascend_driver
        from parity.backends.ascend import torch_device

        self._driver = ascend_driver.install(self.arch)
        # torch.npu names the target too, before any spec module (a library) imports
        self._undo_torch = torch_device.install(ASCEND_ARCHS[self.arch])

    def restore(self) -> None:
        """Undo what can be undone: torch.npu (the triton driver stays; one arch per process)."""
        if self._undo_torch is not None:
            self._undo_torch()
            self._undo_torch = None

    def _can_install_driver(self) -> bool:
        """Without bishengir-compile nothing compiles, but spec modules still import: triton-ascend 3.2's
        Autotuner asks driver.active for its benchmarker at decoration time ("0 active drivers" without
        one), so the driver goes in whenever triton-ascend itself imports, and cases skip with the reason."""
        return dist_version("triton-ascend") is not None and dist_version("pybind11") is not None

    def unavailable(self) -> str | None:
        return self._reason

    def fit_tier(self, case_started: float) -> Any:
        """What the fit advisor searches here: the arch's unified buffer, in bits, and auto multi-buffer off (on
        by default, it doubles the buffers it pipelines: the one UB knob). The search runs inside the case's
        compile child, so it stops in time for the case's own timeout."""
        driver = self._driver

        def offers(options: Mapping[str, Any]) -> dict[str, list[Any]]:
            return {"multibuffer": [False]} if options.get("multibuffer") else {}

        return FitTier(self.name, driver.arch.name, "bits", driver.arch.ub_bits, offers,
                       lambda src, target, options, config: ascend_probe(driver, src, target, options, config),
                       deadline=case_started + self.timeout_s - FIT_SEARCH_MARGIN_S)

    def compile_case(self, spec: KernelSpec, case: Case, cpu_inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One dict per compile the case's launch triggered (see parity.compile.tools.COMPILE_KEYS); CannotRunHere
        where the launcher raised a skip of this tier's."""
        from parity.compile.isolate import run_isolated

        if self._driver is None:
            raise RuntimeError(f"ascend-compile is not prepared: {self._reason or 'call prepare() first'}")
        with tempfile.TemporaryDirectory(prefix="parity-progress-") as tmp:
            progress = Path(tmp) / "compiles.json"
            result = run_isolated(lambda: self._compile_here(spec, case, cpu_inputs, progress),
                                  timeout_s=self.timeout_s)
            if result.ok:
                compiles: list[dict[str, Any]] = result.value
                if compiles and SKIP in compiles[0]:  # the child met a launch this tier cannot run
                    raise CannotRunHere(str(compiles[0][SKIP]))
                return compiles
            saved = progress.read_text() if progress.exists() else "[]"
        return self._after_failure(spec, result, saved)

    def _compile_here(self, spec: KernelSpec, case: Case, cpu_inputs: Mapping[str, Any],
                      progress: Path) -> list[dict[str, Any]]:
        """In the child: launch under the compile-only driver and turn its attempts into compile dicts."""
        from parity.backends.ascend.driver import Recorder
        from parity.compile import tools as ct
        from parity.compile.device_tensors import launch_on_target
        from parity.errors import error_text, skip_reason

        started = time.monotonic()  # the fit search stops in time for the case's timeout (fit_tier)
        ct.clear_jit_caches(spec.kernels)
        from parity.compile.keep_going import keep_going
        from parity.fit import hook as fit_hook

        recorder = self._driver.recorder = Recorder(progress)
        launch_failure = None
        try:  # every listed kernel compiles, also those the launcher calls after a failing one; on
            # tensors that say "npu", so libraries take their NPU path (parity.compile.device_tensors)
            with keep_going(spec.kernels, lambda: sum(1 for a in recorder.attempts if a.ok is False or a.launch_error)):
                launch_on_target(spec.launch, cpu_inputs, case.params, self.launch_device_type)
        except Exception as exc:  # compile errors are already on their attempt; keep anything else
            skip = skip_reason(exc)
            if skip is not None:  # this tier cannot run the case (a replay's "not replayable here"): the parent
                return [{SKIP: skip}]  # raises it, and the pipeline records a skip with the reason, never a finding
            launch_failure = error_text(exc)
        records = [self._as_compile(spec, a.as_json()) for a in recorder.attempts]
        fit_tier = self.fit_tier(started)
        fit_hook.attach(records, [a.source for a in recorder.attempts], spec.kernels, fit_tier)
        from parity.backends.ascend import perf_hook

        # the note's tuning rules as advice; UB use compiles larger configs with the fit advisor's probe
        perf_hook.attach(records, recorder.attempts, self._driver.arch, spec.kernels, fit_tier)
        explained = any(not r["ok"] or r["launch_error"] for r in records)
        if launch_failure and not explained:
            # the launcher failed outside any compile (its own Python, or a check before compiling)
            compiled = ct.empty_compile(_kernel_name(spec))
            compiled.update(ok=False, message=ct.trim_message(launch_failure), launch_error=launch_failure[:300])
            records.append(compiled)
        return records

    def _as_compile(self, spec: KernelSpec, attempt: Mapping[str, Any]) -> dict[str, Any]:
        from parity.compile import tools as ct
        compiled = ct.empty_compile(attempt["kernel"])
        constants = attempt.get("constants", {})
        config_keys = ct.autotune_keys(spec.kernels)
        variant, config = ct.variant_and_config({str(k): v for k, v in constants.items()},
                                                attempt.get("options", {}), spec.variants, config_keys)
        # Ascend autotune configs may set compile options (multibuffer, ...) rather than constexprs
        config.update({k: ct.plain(attempt["options"][k]) for k in config_keys
                       if k not in config and k in attempt.get("options", {})})
        compiled.update(variant=variant, config=config)
        for key in ("ok", "stage_reached", "error_kind", "ub_bits", "ub_limit_bits", "core_type", "grid",
                    "launch_error", "seconds", "cached", "offsets"):
            compiled[key] = attempt.get(key)
        compiled["message"] = ct.trim_message(attempt.get("message") or "") or None
        if compiled["ok"] is None:  # the process ended inside this compile
            compiled["ok"] = False
        if compiled["error_kind"] == "ub_overflow" or compiled["ub_bits"]:
            compiled["ub_limit_bits"] = compiled["ub_limit_bits"] or ASCEND_ARCHS[self.arch].ub_bits
        return compiled

    def _after_failure(self, spec: KernelSpec, result: Any, saved: str) -> list[dict[str, Any]]:
        """The child crashed, hung or raised: keep what it finished and blame the compile it was in."""
        import json

        from parity.compile import tools as ct
        kind = "timeout" if result.timed_out else "crash"
        why = (f"no answer within {self.timeout_s:g} s (PARITY_COMPILE_TIMEOUT_S)" if result.timed_out
               else result.crashed or "the compile child raised")
        detail = ct.trim_message(f"{why}\n{result.error or result.output}")
        attempts = json.loads(saved)
        records = [self._as_compile(spec, a) for a in attempts]
        open_ = [r for r, a in zip(records, attempts, strict=True) if a.get("ok") is None]
        if not open_:
            records.append(ct.empty_compile(_kernel_name(spec)))
            open_ = records[-1:]
        open_[-1].update(ok=False, error_kind=kind, message=detail)
        return records

    def env(self) -> dict[str, Any]:
        arch = ASCEND_ARCHS[self.arch]
        info: dict[str, Any] = {
            "target_arch": arch.name, "num_aicore": arch.aic_cores, "num_vectorcore": arch.aiv_cores,
            "ub_bits": arch.ub_bits, "triton_ascend": dist_version("triton-ascend"),
            "ascendnpu_ir": dist_version("ascendnpu-ir"), "hivmc": shutil.which("hivmc"),
            "stage_limit": None if shutil.which("hivmc") else "bishengir (CANN's hivmc not found)",
        }
        compiler = shutil.which("bishengir-compile")
        if compiler:
            out = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60)
            info["bishengir_compile"] = out.stdout.strip().splitlines()[0] if out.stdout.strip() else None
        return info


def _kernel_name(spec: KernelSpec) -> str:
    from parity.compile.counter import kernel_name

    return kernel_name(spec.kernels[0])
