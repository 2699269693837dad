"""Standalone repros for compile failures on the compile-only tiers (cuda-compile, ascend-compile).

A failing compile record holds the kernel, its variant and config, but not the exact
specialization (signature, constexprs, divisibility attrs, compile options). So the case's
launch is run once more in a forked child with `triton.compiler.compile` observed: each
compile the JIT starts is described as source text (plain JSON), and each failing record is
matched to its description (parity.repro.compile_match). The failing ones become repro.py: the
kernel source with its helpers, and one `triton.compile(ASTSource(...), target=GPUTarget(...))`
of that specialization, which needs no device. The ascend script carries its own compile-only
driver shim inline.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from parity.backends import backend_class
from parity.backends.trackers import Tracker
from parity.compile.tools import trim_message
from parity.findings.finding import Finding
from parity.repro import template
from parity.repro.source import SourceError, extract_kernel, literal
from parity.results import Record, Status
from parity.triage.drafts import finding_of

# options that name paths on the generating machine: the compiler fills them in itself
MACHINE_OPTIONS = ("extern_libs", "backend_name")
CAPTURE_TIMEOUT_S = 600.0


# ---------------------------------------------------------------- describing one compile


# the key a compile's description holds instead of its source when it could not be described (its why)
ENTRY_ERROR = "error"


def value_source(value: Any) -> str:
    """Source text for a constexpr value: triton dtypes and constexpr wrappers included."""
    kind = type(value).__name__
    if kind == "constexpr":
        return value_source(value.value)
    if type(value).__module__.startswith("triton") and hasattr(value, "primitive_bitwidth"):
        return f"tl.dtype({literal(str(value.name))})"
    return literal(value)


def key_source(key: Any) -> str:
    if isinstance(key, (str, int)) or (isinstance(key, tuple) and all(isinstance(k, int) for k in key)):
        return repr(key)
    raise SourceError(f"compile key {key!r} is neither a name, an index nor a path tuple")


def mapping_source(items: Mapping[Any, Any], render: Any) -> str:
    return "{" + ", ".join(f"{key_source(k)}: {render(v)}" for k, v in items.items()) + "}"


def _plain_literal(value: Any) -> str:
    """Lists of lists (attrs) and tuples, via literal(), which checks they round-trip."""
    return literal(value)


def option_sources(options: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, str]:
    """The compile options that differ from the backend's defaults, as source text."""
    out = {}
    for key, value in options.items():
        if key in MACHINE_OPTIONS or defaults.get(key, object()) == value:
            continue
        try:
            out[key] = literal(value)
        except SourceError:
            continue  # not expressible; the compiler's default stands in for it
    return out


def importable_module(cls: type) -> str:
    """Where a script can import cls from: triton loads backend modules by file path (as `ascend`)."""
    import importlib

    name = cls.__module__
    for candidate in (name, f"triton.backends.{name}.compiler", f"triton.backends.{name}"):
        try:
            if getattr(importlib.import_module(candidate), cls.__name__, None) is not None:
                return candidate
        except ImportError:
            continue
    raise SourceError(f"{cls.__qualname__} (module {name!r}) cannot be imported by name in a script")


def plain_values(src: Any, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The compile's constexprs by argument name and its options, as plain values: what a record's
    variant and config are compared against (parity.repro.compile_match)."""
    from parity.compile.tools import plain

    names = list(getattr(src.fn, "arg_names", []))
    out: dict[str, Any] = {}
    for key, value in (src.constants or {}).items():
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]
        if isinstance(key, int) and 0 <= key < len(names):
            key = names[key]
        if isinstance(key, str):
            out[key] = plain(value)
    out.update({k: v for k, v in dict(options or {}).items() if v is None or isinstance(v, (bool, int, float, str))})
    return out


def describe(src: Any, target: Any, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """One compile as plain JSON: the kernel's source and its specialization, as source text."""
    from triton.compiler import make_backend

    fn = src.fn
    entry: dict[str, Any] = {"kernel": fn.__name__}
    try:
        entry["values"] = plain_values(src, options)
        entry["source"] = extract_kernel(fn).text()
        entry["signature"] = mapping_source(src.signature, repr)
        entry["constants"] = mapping_source(src.constants or {}, value_source)
        attrs = src.attrs
        if hasattr(attrs, "to_dict"):  # triton 3.2 (triton-ascend): an AttrsDescriptor object
            entry["attrs"] = f"{type(attrs).__name__}.from_dict({literal(attrs.to_dict())})"
            entry["attrs_import"] = f"from {importable_module(type(attrs))} import {type(attrs).__name__}"
        else:
            entry["attrs"] = mapping_source(attrs or {}, _plain_literal)
            entry["attrs_import"] = ""
        defaults = make_backend(target).parse_options({}).__dict__
        entry["options"] = option_sources(dict(options or {}), defaults)
    except (SourceError, TypeError, ValueError, AttributeError) as exc:
        entry[ENTRY_ERROR] = f"{type(exc).__name__}: {exc}"
    return entry


def _describe_launch(spec: Any, case: Any, cpu_inputs: Mapping[str, Any], device_type: str,
                     on_no_compile: Any = None) -> dict[str, Any]:
    """In the child: launch the case with every compile described before it runs. As on the tier
    (parity.compile.keep_going), the launch goes on past a failing kernel and a rejected option, on
    tensors of the tier's device type, so a library takes the same path and compiles the same kernels.
    A kernel the spec does not list that is rejected for a launch option is described too (the tier
    records that launcher's raise). A launch that raised before compiling anything is handed, with
    its frames, to on_no_compile (only here, in the child, are they at hand); its answer comes back."""
    from parity.compile.device_tensors import launch_on_target
    from parity.compile.keep_going import keep_going, unknown_option
    from parity.compile.tools import clear_jit_caches
    from parity.repro.launch_repro import describe_rejected
    from parity.seams.jit import compile_function, jit_run

    seen: list[dict[str, Any]] = []
    raised = [0]

    def observed(inner: Any, src: Any, target: Any = None, options: Any = None, **kwargs: Any) -> Any:
        if getattr(src, "fn", None) is not None:
            seen.append(describe(src, target, options))
        try:
            return inner(src, target=target, options=options, **kwargs)
        except Exception:
            raised[0] += 1
            raise

    def rejected(jit: Any, option: str, exc: BaseException, args: Any, kwargs: Any, grid: Any) -> None:
        seen.append(describe_rejected(jit, option, exc, args, kwargs, grid))

    def run_unlisted(plain_run: Any, self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return plain_run(self, *args, **kwargs)
        except Exception as exc:
            option = unknown_option(exc)
            if option is not None and option in kwargs and "run" not in vars(self):  # keep_going reports listed ones
                launch = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
                rejected(self, option, exc, args, launch, kwargs.get("grid"))
            raise

    compile_function().add(observed)  # the child's copy only, for the rest of its life
    remove_unlisted = jit_run().add(run_unlisted)
    clear_jit_caches(spec.kernels)
    answer = None
    try:
        with keep_going(spec.kernels, lambda: raised[0], rejected):
            launch_on_target(spec.launch, cpu_inputs, case.params, device_type)
    except Exception as exc:  # the failing compile raises here; its description is already taken
        if not seen and on_no_compile is not None:
            answer = on_no_compile(exc)
    finally:
        remove_unlisted()
    return {"entries": seen, "no_compile": answer}


def describe_compiles(spec: Any, case: Any, cpu_inputs: Mapping[str, Any], device_type: str,
                      timeout_s: float = CAPTURE_TIMEOUT_S, on_no_compile: Any = None) -> dict[str, Any]:
    """{"entries": one description per compile or rejected launch, "no_compile": on_no_compile's answer}."""
    from parity.compile.isolate import run_isolated

    result = run_isolated(lambda: _describe_launch(spec, case, cpu_inputs, device_type, on_no_compile),
                          timeout_s=timeout_s)
    if not result.ok:
        raise RuntimeError(f"re-running {spec.name}[{case.id}] to describe its compiles failed: "
                           f"{result.error or result.crashed or 'timed out'}")
    described: dict[str, Any] = result.value
    return described


# ---------------------------------------------------------------- the script


def render_script(backend: str, arch: Any, entry: Mapping[str, Any], record: Record,
                  limits: Mapping[str, Any]) -> str:
    """repro.py for one compile: cuda-compile or ascend-compile."""
    if ENTRY_ERROR in entry:
        raise SourceError(entry[ENTRY_ERROR])
    comp = record.get("compile") or {}
    title = f"{record['kernel']} [{record['case']}] on {backend}"
    fields = dict(
        source=entry["source"].replace("import triton\nimport triton.language as tl\n", "").strip(),
        attrs_import=entry["attrs_import"], kernel=entry["kernel"], signature=entry["signature"],
        constants=entry["constants"], attrs=entry["attrs"],
        options="{" + ", ".join(f"{k!r}: {v}" for k, v in entry["options"].items()) + "}",
        arch=literal(arch), expected=literal(trim_message(comp.get("message") or record.get("reason") or "")),
        max_shared=literal(limits.get("max_shared_bytes")), hivmc=literal(limits.get("hivmc_missing", "")),
    )
    name = backend_class(backend).repro_template or "cuda_compile_script"
    if name == "ascend_compile_script":  # its marks: hivmc, attrs_import (after the shim); no max_shared
        del fields["max_shared"]
        fields["attrs_import"] += "  # noqa: E402"
    else:
        del fields["hivmc"], fields["attrs_import"]
    return template.render(name, title, **fields)


# ---------------------------------------------------------------- ISSUE.md


def render_issue(tracker: Tracker, record: Record, env: Mapping[str, Any], backend: str,
                 finding: Finding | None = None) -> str:
    """ISSUE.md for a failing compile, shaped for the tracker's bug template, from the record's Finding."""
    from parity.repro.issue import environment_text, provenance

    finding = finding or finding_of(record)
    comp = record.get("compile") or {}
    kind, stage = comp.get("error_kind") or "compile error", comp.get("stage_reached") or "none (frontend)"
    message = trim_message(comp.get("message") or record.get("reason") or "")
    title = f"`{comp.get('kernel') or record['kernel']}` fails to compile ({kind}): {finding.title}"
    env_text = environment_text(tracker, env)
    needs = ("triton-ascend and ascendnpu-ir (bishengir-compile); no NPU and no CANN"
             if backend_class(backend).target == "ascend" else "upstream triton (its bundled ptxas); no GPU")
    ub = (f"UB: requires {comp['ub_bits']} bits while {comp['ub_limit_bits']} bits are available.\n\n"
          if comp.get("ub_bits") and comp.get("ub_limit_bits") else "")
    return "\n".join([
        f"# {tracker.form.title_prefix}{title}", "",
        f"File at: {tracker.new_issue}", "",
        "### Describe the bug", "",
        f"Kernel `{comp.get('kernel') or record['kernel']}` (parity kernel `{record['kernel']}`, case "
        f"`{record['case']}`), compile-only tier `{backend}`.", "",
        *provenance(record),
        *finding.evidence,
        f"**Expected:** the kernel compiles for {env.get('target_arch') or 'the target'}.", "",
        f"**Actual:** `{kind}`; last stage reached: `{stage}`.", "",
        f"{ub}```text", message, "```", "",
        f"Variant: `{comp.get('variant') or {}}`; config: `{comp.get('config') or {}}`.", "",
        "### To reproduce", "",
        f"`repro.py` is self-contained: the kernel source and one compile of the failing specialization. It needs "
        f"{needs}.", "",
        "```bash", "python repro.py   # exits 1 and prints the compiler's message while the compile fails", "```", "",
        "### Environment details", "", "```text", env_text, "```", "",
    ])


# ---------------------------------------------------------------- wiring


def _limits(backend: Any) -> dict[str, Any]:
    if backend.target == "ascend":
        from parity.backends.ascend.diagnostics import HIVMC_MISSING

        return {"hivmc_missing": HIVMC_MISSING}
    from parity.backends.cuda.arch import CUDA_ARCHS

    return {"max_shared_bytes": CUDA_ARCHS[backend.arch].max_shared_bytes}


def write_repro(out_dir: Path, script: str, record: Record, env: Mapping[str, Any], backend: str) -> None:
    from parity.repro.run_repro import write_drafts

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "repro.py").write_text(script, encoding="utf-8")
    finding = finding_of(record)  # once: the drafts below all render it
    write_drafts(out_dir, record, backend, "python repro.py",
                 lambda tracker: render_issue(tracker, record, env, backend, finding), env, finding)


def attach_all(records: Sequence[Record], spec: Any, case: Any, backend: Any,
               cpu_inputs: Mapping[str, Any], results_dir: Path, seed: int = 0) -> None:
    """Write a repro for every failed compile record of one case (the records of its compiles, in order),
    as each one's owner (parity.triage, already decided) calls for. Never raises for a repro: the records
    stay, with `repro_error`."""
    from parity.triage import interrupt

    if any(r.get("status") == Status.INTERRUPTED for r in records):
        return  # the run was cut: nothing it left half-done is a finding
    try:
        _attach_all(records, spec, case, backend, cpu_inputs, results_dir, seed)
    except KeyboardInterrupt:
        interrupt.note()
        for record in records:
            interrupt.settle(record)
        raise
    except Exception as exc:  # whatever raised, every record keeps its verdict
        for record in records:
            if record.get("status") in (Status.FAILED, Status.XFAILED, Status.ERROR) and not record.get("repro"):
                record.setdefault("repro_error", f"{type(exc).__name__}: {exc}"[:600])


def _attach_all(records: Sequence[Record], spec: Any, case: Any, backend: Any,
                cpu_inputs: Mapping[str, Any], results_dir: Path, seed: int) -> None:
    from parity.repro import compile_match

    # known divergences too: a compiler bug someone already linked still needs a repro for its vendor
    failing = [r for r in records if r.get("status") in (Status.FAILED, Status.XFAILED)
               and (r.get("compile") or {}).get("ok") is False]
    from parity.repro import by_limit, compile_prelaunch

    failing = [r for r in failing if not by_limit.link(r, results_dir)]  # a limit's repro is made once per kernel
    if not failing:
        return

    t0 = time.perf_counter()
    # a launcher that raised before compiling anything (a library's check, parity's source scan):
    # its library's draft and standalone call, made in the re-run's child, where the raise has its frames
    unlaunched = [r for r in failing if not ((r.get("compile") or {}).get("stage_reached")
                                             or (r.get("compile") or {}).get("error_kind"))]
    on_no_compile = (compile_prelaunch.in_child(unlaunched[0], spec, case, backend, results_dir, seed)
                     if len(unlaunched) == 1 and len(records) == 1 else None)
    try:
        rerun = describe_compiles(spec, case, cpu_inputs, backend.launch_device_type, on_no_compile=on_no_compile)
    except Exception as exc:  # a repro must never stop the tier
        for record in failing:
            record["repro_error"] = f"{type(exc).__name__}: {exc}"[:600]
        return
    entries = rerun["entries"]
    if rerun["no_compile"] is not None:  # the pre-launch path answered for the one record
        unlaunched[0].update(rerun["no_compile"])
        failing = [r for r in failing if r is not unlaunched[0]]
    found = compile_match.match([r.get("compile") or {} for r in records], entries)
    seen_ids: dict[str, int] = {}
    for record in failing:
        index = next(i for i, r in enumerate(records) if r is record)
        # compiles that differ only in what the case id leaves out (signature, attrs) get a folder each
        nth = seen_ids[record["case"]] = seen_ids.get(record["case"], 0) + 1
        try:
            if found[index] is None:
                raise RuntimeError(f"none of the {len(entries)} compile(s) of the re-run is this record's "
                                   f"({(record.get('compile') or {}).get('kernel')}); the compile cannot be matched "
                                   "to its record")
            _write_one(record, entries[found[index]], spec, backend, results_dir, "" if nth == 1 else f"-{nth}")
        except Exception as exc:  # any stage of one repro: the record keeps its verdict
            record["repro_error"] = f"{type(exc).__name__}: {exc}"[:600]
    from parity.repro import verify

    for record in failing:  # kept only where repro.py fails standalone as the record did
        verify.finalize(record, results_dir)
        by_limit.remember(record, results_dir)
    seconds = (time.perf_counter() - t0) / max(len(failing), 1)
    for record in failing:
        record.setdefault("timing", {})["repro_s"] = round(seconds, 3)


def _write_one(record: Record, entry: Mapping[str, Any], spec: Any, backend: Any, results_dir: Path,
               suffix: str) -> None:
    from parity.repro.run_repro import REPROS_DIR, session_env
    from parity.results.outputs_store import case_filename

    out_dir = results_dir / REPROS_DIR / case_filename(spec.name, record["case"], suffix)
    if "launch_option" in entry:  # rejected before compiling: the launch itself is the repro
        from parity.repro import launch_repro

        script = launch_repro.render_script(entry, record, backend.arch, backend.name)
        launch_repro.write_repro(out_dir, script, record, backend.name)
    else:
        script = render_script(backend.name, backend.arch, entry, record, _limits(backend))
        write_repro(out_dir, script, record, session_env(backend), backend.name)
    record["repro"] = out_dir.relative_to(results_dir).as_posix()
