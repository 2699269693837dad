"""The proof's child: run one case with a fitting config on a tier that computes, against fp64.

`python -m parity.run.fit_proof_run` reads a JSON request on stdin and prints one JSON answer line after
PROOF_MARK. It is a fresh process because the tier that computes is not the compile tier that asked:
the interpreter decides at decoration time (TRITON_INTERPRET=1), and ascend-lowered installs its own
driver. Each config's constexprs replace what the launcher passed to the fit's kernel, on its way into
Triton's run (a layer on JITFunction.run / InterpretedFunction.run). Where the kernel multiplies a
program id by a changed constexpr and the launcher passed a fixed grid, that grid axis is scaled as a
launcher that sizes its grid from the constexpr would. Compile options in a config (stages, warps,
multibuffer) are left as launched: they change no arithmetic on a CPU tier.

Request: {"backend", "module", "file", "spec", "params" (a Python literal), "seed", "kernel", "configs"}.
Answer: {"configs": [{"config", "was", "computes", "criterion", "status", "detail", "grid_scaled"}]} or
{"error": ...}.

A config outside the spec's tolerance by its values alone is judged by rounding (parity.fit.proof.within_rounding):
a larger block reorders a long sum, which rounds differently and is as right. The accumulation bound the runner
computed (parity.run.rounding, record key `rounding`) is asked first; else the launcher's own config runs once on
the same inputs and its error is the scale (`criterion` says which test held).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import importlib.util
import inspect
import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from parity.fit.proof import BY_BOUND, BY_TOLERANCE, label, within_rounding
from parity.results import Record, Status

PROOF_MARK = "PARITY-PROOF:"


def _spec_module(module: str, file: str | None) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        if not file:
            raise
    loaded = importlib.util.spec_from_file_location(module, file)
    if loaded is None or loaded.loader is None:
        raise ImportError(f"cannot load {file}")
    mod = importlib.util.module_from_spec(loaded)
    sys.modules[module] = mod
    loaded.loader.exec_module(mod)
    return mod


def _arg_names(fn_obj: Any) -> list[str]:
    names = getattr(fn_obj, "arg_names", None)
    if names:
        return list(names)
    fn = getattr(fn_obj, "fn", fn_obj)
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


@contextlib.contextmanager
def overridden(kernel: str, constexprs: Mapping[str, Any], log: dict[str, Any]) -> Iterator[None]:
    """Launches of the kernel named `kernel` get `constexprs` in place of what the launcher passed;
    `log` gets "was" (the launcher's values) and "grid_scaled" (axis -> factor)."""
    from parity.fit.proof import grid_axes, source_text
    from parity.seams.jit import interpreted_run, jit_run

    def layer(inner: Any, self_: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(getattr(self_, "fn", None), "__name__", None) != kernel:
            return inner(self_, *args, **kwargs)
        names, given = _arg_names(self_), list(args)
        was: dict[str, Any] = {}
        for key, value in constexprs.items():
            if key in kwargs:
                was[key], kwargs[key] = kwargs[key], value
            elif key in names and names.index(key) < len(given):
                index = names.index(key)
                was[key], given[index] = given[index], value
        grid = kwargs.get("grid")
        if was and isinstance(grid, (tuple, list)):  # a fixed grid: scale the axes a program id tiles by
            source, new_grid = source_text(self_), list(grid)
            for key, old in was.items():
                new = constexprs[key]
                if not (isinstance(old, int) and isinstance(new, int) and new and old % new == 0):
                    continue
                for axis in grid_axes(source, key):
                    if axis < len(new_grid):
                        new_grid[axis] = int(new_grid[axis]) * (old // new)
                        log.setdefault("grid_scaled", {})[str(axis)] = old // new
            kwargs["grid"] = type(grid)(new_grid)
        log.setdefault("was", {}).update(was)
        return inner(self_, *given, **kwargs)

    seams = [jit_run(), *([s] if (s := interpreted_run()) is not None else [])]
    with contextlib.ExitStack() as stack:
        for one in seams:
            stack.enter_context(one.layer(layer))
        yield


def _constexprs(spec: Any, kernel: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of `config` that are parameters of the kernel (the rest are compile options)."""
    from parity.compile.counter import base_jit_function, kernel_name

    params = next((_arg_names(base_jit_function(k)) for k in spec.kernels if kernel_name(k) == kernel), None)
    return {k: v for k, v in config.items() if params is None or k in params}


def prove(request: Mapping[str, Any]) -> dict[str, Any]:
    from parity.backends import get_backend
    from parity.paths import triton_cache_dir
    from parity.run.refcache import ReferenceCache
    from parity.run.runner import run_case
    from parity.seams.env import point_triton_at  # with the line above: this child's own setup
    from parity.spec import Case
    from parity.spec.context import set_current_backend

    backend = get_backend(request["backend"])
    set_current_backend(backend.name)
    if backend.mode != "compile":
        point_triton_at(triton_cache_dir(backend.name))
    backend.prepare()
    reason = backend.unavailable()
    if reason:
        return {"error": f"{backend.name} is unavailable here: {reason}"}
    module = _spec_module(request["module"], request.get("file"))
    spec = next((s for s in getattr(module, "SPECS", []) if s.name == request["spec"]), None)
    if spec is None:
        return {"error": f"no spec {request['spec']!r} in {request['module']}"}
    case = Case(ast.literal_eval(request["params"]))
    answers, seen = [], []
    originals: list[Any] = []  # the launcher's own config's errors, run once where a config needs them

    def original() -> Any:
        if not originals:
            first, _ = run_case(spec, case, backend, seed=request["seed"], cache=ReferenceCache(enabled=False))
            originals.append((first.get("metrics") or {}).get("per_output") if _by_values(first) or
                             first["status"] is Status.PASSED else None)
        return originals[0]

    for config in request["configs"]:
        constexprs = _constexprs(spec, request["kernel"], config)
        if constexprs in seen:
            continue
        seen.append(constexprs)
        log: dict[str, Any] = {}
        with overridden(request["kernel"], constexprs, log):
            record, _ = run_case(spec, case, backend, seed=request["seed"], cache=ReferenceCache(enabled=False))
        status = record["status"]
        # a config of compile options only (fewer stages, multi-buffer off) computes as launched on a CPU tier
        applied = bool(log.get("was")) or not constexprs
        if status is Status.PASSED and not (record.get("metrics") or {}).get("per_output"):
            status, record["reason"] = Status.SKIPPED, "the reference has no output: nothing was compared"
        computes = (status in (Status.PASSED, Status.XPASSED)) \
            if applied and status in (Status.PASSED, Status.XPASSED, Status.FAILED) else None
        detail, criterion = record.get("reason") or "", BY_TOLERANCE
        if applied and status is Status.FAILED and _by_values(record):  # a reordered sum is judged by its rounding
            # the launched config's own error is needed only where the model could not be taken
            modelled = _bound(record) is not None
            computes, criterion, sentence = within_rounding((record["metrics"] or {})["per_output"],  # _by_values
                                                            None if modelled else original(),
                                                            was=f"the launched {label(log.get('was') or {})}",
                                                            bound=functools.partial(_bound, record))
            detail = sentence if computes else f"{sentence}; {detail}"
        elif computes and (_bound(record) or (False, ""))[0]:  # passed by the model: the spec set no tolerance
            criterion, detail = BY_BOUND, f"within the accumulation bound: {record['rounding']['sentence']}"
        if not applied:
            detail = (f"the launch never passed {', '.join(constexprs) or 'a constexpr'} to {request['kernel']}: "
                      "nothing was changed")
        elif computes and criterion == BY_TOLERANCE:
            m = record.get("metrics") or {}
            detail = f"max_abs_err {m.get('max_abs_err', 0):.3g} within the spec's tolerance" + (
                "" if constexprs else " (compile options only: run as launched)")
        elif computes is None and status is not Status.FAILED:
            detail = f"{status}: {detail}"
        answers.append({"config": constexprs, "was": log.get("was", {}), "computes": computes,
                        "criterion": criterion if computes is not None else None, "status": status,
                        "detail": detail[:400], "grid_scaled": log.get("grid_scaled", {})})
    return {"configs": answers}


def _bound(record: Record, failing: Any = None) -> tuple[bool, str] | None:
    """The accumulation bound's word on a record (parity.run.rounding, run by the runner on a failure):
    (within, its sentence), or None where the model had nothing to say."""
    model = record.get("rounding") or {}
    if not model or model.get("not_checked"):
        return None
    return bool(model.get("within")), str(model.get("sentence") or "")


def _by_values(record: Record) -> bool:
    """Whether a failed record failed by finite values outside the tolerance only (no NaN, no write out of
    bounds, no extra check): the one failure a different summation order can explain."""
    metrics = record.get("metrics") or {}
    per_output = metrics.get("per_output") or {}
    return (record["status"] is Status.FAILED and bool(per_output) and not record.get("oob")
            and not metrics.get("nan_count") and not all(m.get("passed") for m in per_output.values())
            and all(float(m.get("max_abs_err") or 0.0) < float("inf") for m in per_output.values()))


def main() -> None:
    request = json.loads(sys.stdin.read())
    try:
        answer = prove(request)
    except Exception as exc:  # the answer says why nothing was proven; the asking tier carries on
        answer = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    sys.stdout.write("\n" + PROOF_MARK + json.dumps(answer, default=str) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
