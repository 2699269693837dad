"""TRITON_INTERPRET=1: kernels run on the CPU through Triton's interpreter."""

from __future__ import annotations

from typing import Any

from parity.backends import interpret_gpu
from parity.backends.base import Backend, Check
from parity.seams.env import set_triton_env
from parity.seams.versions import package_version
from parity.spec.library import adapt_imports, tier_of


class InterpretBackend(Backend):
    name = "interpret"
    mode = "interpret"
    device_type = "cpu"
    presents = "cuda"
    check = Check("NVIDIA (Triton)", "the interpreter computes the fp64 answer", 1, "interp")
    report_rank = 2
    repro_prefix = "TRITON_INTERPRET=1 "
    language = "triton"
    own_limits = ("interpret-bf16-dot", "interpret-fp8-downcast", "interpret-int-to-bf16", "interpret-bf16-arith",
                  "interpret-libdevice", "interpret-builder-gap", "interpret-float-arg", "interpret-loop-var",
                  "interpret-constexpr-arg")
    gpu_target = ("cuda", 90, 32)
    venv = "venv-upstream"
    process_env = {"TRITON_INTERPRET": "1"}  # noqa: RUF012 (a class-level constant, never mutated)

    def prepare(self) -> None:
        # read when @triton.jit decorates, so it must be set before kernels are imported
        set_triton_env(TRITON_INTERPRET="1")  # for the process: a tier is chosen once per process
        _benchmark_free_driver()
        # libraries written for a GPU: torch.cuda names one, and interpreted kernels carry JITFunction's
        # fields (parity.backends.interpret_gpu says why each is needed)
        self._undo = [interpret_gpu.install_torch_cuda(), interpret_gpu.install_interpreted_jit()]
        # a known library imported from here on finds what this tier presents (its adapter: parity.spec.library)
        adapt_imports(tier_of(type(self)))

    def restore(self) -> None:
        """Undo prepare()'s torch.cuda and triton.jit changes (tests that prepare in-process use this)."""
        for undo in reversed(getattr(self, "_undo", [])):
            undo()
        self._undo = []

    @classmethod
    def installed(cls) -> str | None:
        return cls().unavailable()

    def unavailable(self) -> str | None:
        if package_version("triton") is None:
            return "package `triton` is not installed; `pip install triton` (or `nox -s interpret`)"
        return None

    def env(self) -> dict[str, Any]:
        return {"device_name": "cpu (TRITON_INTERPRET=1)", "device_count": 1, "target_arch": "interpreter"}


class _TieBenchmarkDriver:
    """The interpreter has no device driver, yet an Autotuner asks driver.active for its benchmarker
    ("0 active drivers"), so a library's autotuned kernel that a spec does not list (and parity does
    not pin) failed. This driver answers only that (and do_bench's queries): every config ties and the
    Autotuner runs the first, as timing interpreted configs would be slow and meaningless. Every other
    query raises, so code that probes triton for a device (fla's import) still finds none."""

    @staticmethod
    def is_active() -> bool:
        return False

    def get_benchmarker(self) -> Any:
        return lambda kernel_call, quantiles=None, **kwargs: [0.0] * len(quantiles) if quantiles else 0.0

    # an Autotuner given warmup=/rep= (FlagGems' tuner) calls triton.testing.do_bench, which asks for these;
    # its events time nothing, so each config runs a few times and the first of the ties wins
    def get_device_interface(self) -> Any:
        from parity.compile.tools import NoDeviceInterface

        return NoDeviceInterface

    def get_empty_cache_for_benchmark(self) -> Any:
        import torch

        return torch.empty(1, dtype=torch.int32)

    def clear_cache(self, cache: Any) -> None:
        cache.zero_()

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"the interpreter has no device: driver.active.{name} is not available")


def _benchmark_free_driver() -> None:
    try:
        from triton.runtime.driver import driver
    except ImportError:  # unavailable() says so
        return
    if getattr(driver, "_active", None) is None:  # never replace a real one (tests may install their own)
        driver.set_active(_TieBenchmarkDriver())
