"""The one place parity patches Triton and torch: one wrapper per target, layers registered by the stages.

Nothing outside this package assigns to a Triton or torch object (tests/test_layout.py checks it). A
stage asks for a target's seam (parity.seams.jit) and adds a layer (`seam.add(fn)` returns the undo;
`seam.layer(fn)` is the context manager); values a compile tier presents (the active driver, torch's
device modules, a backend module's global) go through parity.seams.device. What moved between Triton
releases is in parity.seams.versions.

Nesting order: the newest layer is the outermost, so a call passes the layers from the most recently
entered down to Triton's own function. In a run, outermost first:

- JITFunction.run, one kernel's own run: keep_going (compile tiers, per case), over the class's run;
- JITFunction.run: compile_repro's unlisted-option describer (its child only) > the repro capture's
  launch recorder > the ascend compile-only driver's grid-limit observer (for the process's life);
- Autotuner.run (and a library tuner's own run): the accuracy pass's pin (run.autotune_pin) > warm's
  argument spy (perf.warm) > the repro capture's keep-the-chosen-launch layer;
- in a process under `parity record` (parity.record.capture, for the process's life, installed when triton
  is first imported): JITFunction.run and InterpretedFunction.run get the workload recorder, Autotuner.run
  its tuner note, and Autotuner._bench its pause (the timing runs are not the workload's launches);
- triton.compiler.compile: compile_repro's describer (child) > the tier's compile record (cuda-compile
  from prepare() to restore(), ascend's driver for the process's life);
- a backend's add_stages: ascend-lowered's stop-at-ttadapter > the ascend driver's stage observer;
  cuda-compile's stage tracker alone;
- the compile hooks: the variant walk (compile.tools.reached_variants, which stops every compile) or
  the compile counters, each chaining to the one under it;
- Autotuner.check_disk_cache: the compile tiers' sandbox (bench every config, store nothing).

torch is not patched but presented to: the device modules (torch.cuda's functions, torch.npu) for a
compile tier's life; and its calls are intercepted around one launch through torch's own extension point,
a TorchFunctionMode entered only in parity.seams.torch_calls, with a handler from the stage:
run.prefill.FilledAllocations (NaN-filled allocations) inside the run tiers' launch, and
compile.device_tensors.TargetDevice (a device="cuda" allocation stays on the CPU) inside a compile tier's.
"""

from parity.seams.core import Seam, present, present_all, seam

__all__ = ["Seam", "present", "present_all", "seam"]
