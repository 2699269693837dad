"""The workload recorder: every Triton launch a process makes, kept by storage into a bundle.

One `WorkloadRecorder` per process, installed through parity.seams when triton is first imported
(parity.record.hook). For each launch it asks the repro capture (parity.repro.capture.LaunchRecorder)
to take the arguments by storage (views, strides, offsets, pointer tables), runs the launch, then keeps
the bytes of every storage the launch changed. Wrappers (Autotuner, Heuristics, a library's launcher
such as FlagGems' LibEntry) end in JITFunction.run, so what is recorded is the launch they make, with
the config they chose; an autotuner's timing runs are paused out.

Per dedupe key (parity.record.keys) the first `keep` launches are kept and the rest counted. A size
budget (or a full disk) stops keeping launches and says so once; the command itself runs on.
"""

from __future__ import annotations

import atexit
import hashlib
import inspect
import os
import re
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import torch

from parity.record import bundle as fmt
from parity.record.keys import dedupe_key, specialization_key
from parity.record.process import process_env, version
from parity.repro.capture import LaunchRecorder, storage_ident, storage_snapshot
from parity.repro.tensorlike import typed_pointer_view

TENSOR_REF = re.compile(r"^T\['(t\d+)'\]$")
TL_DTYPE = re.compile(r"^tl\.dtype\('(\w+)'\)$")
REINTERPRETED = re.compile(r"^triton\.reinterpret\(T\['(t\d+)'\], tl\.dtype\('(\w+)'\)\)$")


def encode_value(text: str) -> dict[str, Any]:
    """One argument as the repro capture wrote it (a source expression), as a JSON value replay decodes."""
    m = TENSOR_REF.match(text)
    if m:
        return {"tensor": m.group(1)}
    m = REINTERPRETED.match(text)
    if m:  # a TensorWrapper: the view of its base tensor, and the Triton dtype the kernel reads it as
        return {"tensor": m.group(1), "reinterpret": m.group(2)}
    m = TL_DTYPE.match(text)
    if m:
        return {"tl_dtype": m.group(1)}
    return {"literal": text}


def kernel_identity(kernel: Any, root: Path) -> dict[str, Any]:
    """module, qualname, file, line, a hash of the source, the captured standalone source (or why not)."""
    from parity.repro.source import SourceError, extract_kernel, python_function

    info: dict[str, Any] = {"wrapper": type(kernel).__name__}
    try:
        fn = python_function(kernel)
    except Exception as exc:  # an object with no plain function under it
        return {**info, "name": type(kernel).__name__, "module": type(kernel).__module__, "qualname": "?",
                "source_error": f"no Python function under {type(kernel).__name__}: {exc}"}
    info.update(name=fn.__name__, module=fn.__module__, qualname=fn.__qualname__,
                file=fn.__code__.co_filename, line=fn.__code__.co_firstlineno)
    rewritten = running_function(kernel, fn, root)
    try:
        src = inspect.getsource(rewritten or fn)
        info["source_hash"] = hashlib.sha256(src.encode()).hexdigest()[:16]
    except (OSError, TypeError) as exc:
        info["source_error"] = (f"inspect.getsource failed ({exc}): the kernel was made from a string (exec), "
                                "and this Triton keeps no text of it")
        return info
    if rewritten is not None:
        info["rewritten"] = "the JIT compiles other source than its file holds (JITFunction._unsafe_update_src); " \
                            "the running source was recorded"
    try:
        text = extract_kernel(rewritten or kernel).text()
        name = hashlib.sha256(text.encode()).hexdigest()[:16]
        info["source"] = fmt.write_source(root, name, text)
        info["entry"] = fn.__name__
    except (SourceError, OSError, SyntaxError) as exc:
        info["source_error"] = f"the kernel's source cannot be made standalone: {exc}"
    top = fn.__module__.split(".")[0]
    info["library"] = {"name": top, "version": version(top)}
    info["params"] = _param_names(kernel)
    return info


def running_function(kernel: Any, fn: Any, root: Path) -> Any:
    """The kernel's function rebuilt from the source its JIT compiles, when that is not its file's (a test that
    rewrites a template's source, as Triton's own test_core does); None when they agree. The text goes into
    the bundle's sources, so the rebuilt function's source can be read back like any other."""
    import textwrap

    from parity.compile.counter import base_jit_function

    running = getattr(base_jit_function(kernel), "src", None)
    if not isinstance(running, str) or not running.strip():
        return None
    try:
        if running.strip() in textwrap.dedent(inspect.getsource(fn)):
            return None
    except (OSError, TypeError):
        pass
    text = textwrap.dedent(running)
    path = root / fmt.write_source(root, "running-" + hashlib.sha256(text.encode()).hexdigest()[:16], text)
    scope: dict[str, Any] = {}
    exec(compile(text, str(path), "exec"), fn.__globals__, scope)  # defines the function only, in `scope`
    from parity.compile.counter import innermost

    rebuilt = innermost(scope.get(fn.__name__))  # under the decorator, where the text keeps one
    return rebuilt if inspect.isfunction(rebuilt) else None


def _param_names(kernel: Any) -> list[list[Any]]:
    from parity.compile.counter import base_jit_function
    from parity.seams.jit import kernel_params

    try:
        return [[n, c] for n, c, _ in kernel_params(base_jit_function(kernel))]
    except Exception:  # an unusual wrapper: the keys treat every argument as a plain value
        return []


def _kept_bytes(t: torch.Tensor, lo: int, hi: int) -> torch.Tensor:
    """Bytes [lo, hi) of t's storage as a uint8 CPU copy: only the kept range crosses to the host."""
    flat = torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage(), lo, (hi - lo,), (1,))
    return flat.detach().cpu().clone()


def _synchronize(devices: set[str]) -> None:
    for dev in devices:
        kind = torch.device(dev).type
        module = getattr(torch, kind, None) if kind != "cpu" else None
        sync = getattr(module, "synchronize", None)
        if sync is not None:
            sync()


class WorkloadRecorder:
    def __init__(self, root: Path, keep: int = 2, budget_bytes: int = 2 << 30) -> None:
        self.root, self.keep, self.budget = Path(root), keep, budget_bytes
        self.local = threading.local()
        self.lock = threading.RLock()
        self._undo: list[Any] = []
        self._reset()

    def _reset(self) -> None:
        """Fresh per-process state (also in a child forked from a recording process)."""
        self.pid = os.getpid()
        self.seen: Counter[str] = Counter()
        self.kept: Counter[str] = Counter()
        self.names: dict[str, str] = {}
        self.specs: dict[str, str] = {}
        self.kernel_ids: dict[str, str] = {}
        self.kernels: dict[int, dict[str, Any]] = {}
        self.order = 0
        self.written = fmt.size_on_disk(self.root)
        self.stopped: str | None = None
        self.manifest: fmt.ManifestWriter | None = fmt.ManifestWriter(self.root)  # None once closed
        self.described = False  # the process line waits for the first kept launch (see _describe)

    # ------------------------------------------------------------ seam layers

    def install(self) -> None:
        from parity.seams.jit import autotuner_bench, autotuner_run, interpreted_run, jit_run

        self._undo.append(jit_run().add(self._launch))
        interpreted = interpreted_run()
        if interpreted is not None:
            self._undo.append(interpreted.add(self._launch))
        self._undo.append(autotuner_run().add(self._tuner))
        bench = autotuner_bench()
        if bench is not None:
            self._undo.append(bench.add(self._paused))
        atexit.register(self.close)

    def uninstall(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()
        self.close()

    def _paused(self, inner: Any, *args: Any, **kwargs: Any) -> Any:
        pending = getattr(self.local, "pre_tuning", None)
        if pending and not pending[-1]["taken"]:  # the tuner's first timing run: storages before any run wrote them
            pending[-1]["taken"] = True
            try:
                for value in [*args[1:], *kwargs.values()]:
                    typed = typed_pointer_view(value)  # FlagGems' StridedBuffer: its base's storage
                    value = typed[0] if typed is not None else value
                    if isinstance(value, torch.Tensor) and storage_ident(value) not in pending[-1]["before"]:
                        pending[-1]["before"][storage_ident(value)] = storage_snapshot(value)
            except Exception as exc:  # the recorder must never break the workload
                self._note_failure(args[0], f"recording failed before the tuner's timing runs: {exc}")
        self.local.paused = getattr(self.local, "paused", 0) + 1
        try:
            return inner(*args, **kwargs)
        finally:
            self.local.paused -= 1

    def _tuner(self, inner: Any, self_: Any, *args: Any, **kwargs: Any) -> Any:
        """An autotuner's call: its timing runs write the outputs before the launch that is recorded, so the
        storages are kept as they were before its first timing run (`_paused`) and stand for that launch's
        inputs; without that, an output the timing runs already wrote looks unchanged ("not checked")."""
        stack = self.local.__dict__.setdefault("tuners", [])
        pending = self.local.__dict__.setdefault("pre_tuning", [])
        stack.append(self_)
        pending.append({"taken": False, "before": {}})
        try:
            return inner(self_, *args, **kwargs)
        finally:
            stack.pop()
            pending.pop()

    def _launch(self, inner: Any, self_: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        paused: int = getattr(self.local, "paused", 0)  # timing runs of an autotuner (_paused)
        if warmup or paused or getattr(self.local, "busy", False):
            return inner(self_, *args, grid=grid, warmup=warmup, **kwargs)
        self.local.busy = True  # a launch made while recording one (none should be) is not recorded twice
        try:
            pending = self._before(self_, args, grid, kwargs)
        except Exception as exc:  # the recorder must never break the workload
            pending = None
            self._note_failure(self_, f"recording failed before the launch: {type(exc).__name__}: {exc}")
        finally:
            self.local.busy = False
        try:
            result = inner(self_, *args, grid=grid, warmup=warmup, **kwargs)
        except BaseException as exc:  # the workload's own error: noted, then raised on unchanged
            if pending is not None:
                self._note_failure(self_, f"the launch raised {type(exc).__name__}: {str(exc)[:300]}")
            raise
        if pending is not None:
            try:
                self._after(*pending)
            except Exception as exc:
                self._note_failure(self_, f"recording failed after the launch: {type(exc).__name__}: {exc}")
        return result

    # ------------------------------------------------------------ one launch

    def _identity(self, kernel: Any) -> dict[str, Any]:
        found = self.kernels.get(id(kernel))
        if found is None:
            found = kernel_identity(kernel, self.root)
            found["id"] = hashlib.sha256(f"{found.get('module')}:{found.get('qualname')}:"
                                         f"{found.get('source_hash')}".encode()).hexdigest()[:12]
            found["_keep"] = kernel  # holds the object, so its id() is not reused
            self.kernels[id(kernel)] = found
        return found

    def _before(self, kernel: Any, args: tuple[Any, ...], grid: Any, kwargs: dict[str, Any]) -> Any:
        with self.lock:
            if os.getpid() != self.pid:
                self._reset()
            ident = self._identity(kernel)
            key = dedupe_key(ident["id"], args, kwargs)
            self.seen[key] += 1
            params = ident.get("params") or []
            names = [p[0] for p in params]
            if key not in self.names:  # a new key: its specialization, so dropped launches count in the storm
                constexprs = [p[0] for p in params if p[1]]
                self.specs[key] = specialization_key(ident["id"], args, {k: v for k, v in kwargs.items()
                                                                         if k in names}, constexprs, names)
                self.names[key] = ident.get("name", "?")
                self.kernel_ids[key] = ident["id"]
            if self.stopped is not None or self.kept[key] >= self.keep:
                return None
            self.kept[key] += 1
            self.order += 1
            order = self.order
        rec = LaunchRecorder()
        rec.record(kernel, args, grid, False, kwargs)  # tensors by storage, each buffer's bytes before
        pending = getattr(self.local, "pre_tuning", None)
        if pending and pending[-1]["before"]:  # under an autotuner that timed configs: the bytes before its runs
            for storage, buf in rec.buffers.items():
                if storage in pending[-1]["before"]:
                    buf.snapshot = pending[-1]["before"][storage]
        return ident, key, self.specs[key], order, rec, kwargs, names

    def _after(self, ident: dict[str, Any], key: str, spec: str, order: int, rec: LaunchRecorder,
               kwargs: dict[str, Any], names: list[str]) -> None:
        launch = rec.launches[-1]
        buffers = list(rec.buffers.values())
        _synchronize({dev for dev, _, _ in rec.buffers})
        tensors: dict[str, torch.Tensor] = {}
        outputs = []
        for buf in buffers:
            lo, hi = buf.kept
            before = buf.initial()
            after = _kept_bytes(buf.live, lo, hi)
            tensors[f"before.{buf.key}"] = before
            if not torch.equal(before, after):
                tensors[f"after.{buf.key}"] = after
                outputs.append(buf.key)
        launch_id = f"{self.pid}-{order}"
        entry: dict[str, Any] = {
            "type": "launch", "id": launch_id, "order": order, "key": key, "specialization": spec,
            "kernel": {k: v for k, v in ident.items() if not k.startswith("_")},
            "grid": list(launch.grid), "args": [encode_value(a) for a in launch.args],
            "kwargs": {k: encode_value(v) for k, v in launch.kwargs.items()},
            "options": {k: v for k, v in kwargs.items() if k not in names
                        and isinstance(v, (int, float, bool, str, type(None)))},
            "buffers": {b.key: {"nbytes": b.nbytes, "kept": list(b.kept), "device": dev}
                        for (dev, _, _), b in rec.buffers.items()},
            "views": {s.key: {"buffer": s.buffer.key, "dtype": s.dtype, "shape": list(s.shape),
                              "stride": list(s.stride),
                              "offset": s.offset - s.buffer.kept[0] // torch.empty((), dtype=getattr(torch, s.dtype))
                              .element_size()}
                      for s in rec.views.values()},
            "pointers": {t.key: [[e[0].key, e[1] - e[0].kept[0]] if isinstance(e, tuple) else e for e in t.entries]
                         for t in rec.pointers.values()},
            "unresolved_pointers": {t.key: len(t.unresolved) for t in rec.pointers.values() if t.unresolved},
            "outputs": outputs,
            "autotune": self._tuned(kwargs),
        }
        with self.lock:
            if self.stopped is not None:
                return
            try:
                self._describe()
                # the tensors' bytes before any is serialized: a launch over the budget (a KV cache of gigabytes)
                # is never written, so neither the memory nor the disk ever holds it, and a kill mid-write
                # cannot leave it behind
                needs = sum(t.numel() * t.element_size() for t in tensors.values())
                if self.written + needs > self.budget:
                    self._over_budget(needs)
                    self.kept[key] -= 1
                    return
                rel, size, digests = fmt.write_tensors(self.root, launch_id, tensors)
                if self.written + size > self.budget:  # the file's header tipped it over
                    (self.root / rel).unlink(missing_ok=True)
                    self._over_budget(size)
                    self.kept[key] -= 1
                    return
                self.written += size
                entry.update(tensors=rel, bytes=size, **digests)  # checked on replay (bundle.check_digests)
                self._write(entry)
            except OSError as exc:  # a full disk: stop keeping launches, never stop the command
                self._stop(f"writing the bundle failed ({exc}); free space under {self.root} and record again")
                self.kept[key] -= 1

    def _over_budget(self, size: int) -> None:
        self._stop(f"the size budget ({self.budget} bytes) is spent: {self.written} bytes kept, the next launch "
                   f"needs {size}; raise it with `parity record --budget`")

    def _describe(self) -> None:
        """The process line, written at the first kept launch: by then the workload has set up its device, so
        naming it initializes nothing (CUDA initialized at import would break a workload that forks later)."""
        if not self.described:
            self.described = True
            self._write({"type": "process", "pid": self.pid, "argv": sys.argv[:20], "env": process_env()})

    def _tuned(self, kwargs: dict[str, Any]) -> dict[str, Any] | None:
        stack = getattr(self.local, "tuners", None)
        if not stack:
            return None
        tuner = stack[-1]
        configs = getattr(tuner, "configs", None) or []
        chosen = getattr(tuner, "best_config", None)
        names = set(getattr(configs[0], "kwargs", {})) if configs else set()
        names |= {"num_warps", "num_stages", "num_ctas", "maxnreg"}
        return {"tuner": type(tuner).__qualname__, "keys": list(getattr(tuner, "keys", []) or []),
                "configs": len(configs), "config": {k: v for k, v in kwargs.items() if k in names
                                                     and isinstance(v, (int, float, bool, str, type(None)))},
                "best_config": str(chosen) if chosen is not None else None}

    def _note_failure(self, kernel: Any, reason: str) -> None:
        with self.lock:
            ident = self.kernels.get(id(kernel), {})
            try:
                self._write({"type": "unrecorded", "kernel": {k: v for k, v in ident.items()
                                                         if not k.startswith("_")}, "reason": reason})
            except (OSError, ValueError):
                pass

    def _write(self, entry: dict[str, Any]) -> None:
        if self.manifest is None:  # as a closed file refuses a write
            raise ValueError(f"the manifest of {self.root} is closed")
        self.manifest.write(entry)

    def _stop(self, reason: str) -> None:
        self.stopped = reason
        print(f"parity record: stopped keeping launches: {reason}; the command runs on", file=sys.stderr)

    def close(self) -> None:
        """The counts line: every dedupe key with launches seen and kept, and why recording stopped."""
        with self.lock:
            if os.getpid() != self.pid or self.manifest is None:
                return
            try:
                self.manifest.write({"type": "counts", "pid": self.pid, "stopped": self.stopped,
                                     "keys": {k: {"kernel": self.names[k], "seen": n, "kept": self.kept[k],
                                                  "specialization": self.specs[k], "kernel_id": self.kernel_ids[k]}
                                              for k, n in self.seen.items()}})
                self.manifest.close()
            except (OSError, ValueError):
                pass
            self.manifest = None
