"""Command line: `python -m parity.cli report [DIR ...]` writes reports/DIVERGENCE.md, index.html and divergence.png;
`parity record [--out DIR] -- CMD ...` records a command's Triton launches into a bundle (parity.record);
`parity replay-summary BUNDLE [DIR ...]` says per kernel what the bundle holds and how each tier replayed it;
`parity map BUNDLE DIR...` says per op and kernel of a recorded library whether it ports to Ascend
(parity.record.library_map); `parity merge OUT DIR...` joins the results dirs of one tier's `--shard K/N` runs
(parity.report.shards).
`parity check NAMES` runs them through every hardware-free tier here (parity.cli.check).
`parity envelope NAMES` gives each kernel's largest sizes that port, per target (parity.envelope).

The dirs may come from different machines; each needs its results.jsonl (and env.json).
Without DIRs every reports/*/ holding results is taken.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from parity.report import divergence, envelope_md, heatmap, index_page, perf_cross, perf_plot, versions
from parity.report import divergence_md as divergence_report
from parity.results import (
    MERGED_NAME,
    PART_GLOB,
    Record,
    SchemaError,
    Status,
    atomic_write_text,
    load_results,
    outputs_store,
)
from parity.results import dirs as rd


class CliError(RuntimeError):
    """A usage problem: the message says what is wrong and what to run instead."""


def has_results(d: Path) -> bool:
    return (d / MERGED_NAME).exists() or any(d.glob(PART_GLOB))


def default_dirs(root: Path) -> list[Path]:
    dirs = sorted(d for d in root.glob("*/") if d.is_dir() and has_results(d))
    if not dirs:
        raise CliError(f"no results dirs under {root}/ (none holds a {MERGED_NAME}); run a tier first, e.g. "
                       "`nox -s interpret`, or pass the dirs: `python -m parity.cli report DIR ...`")
    return dirs


def read_env(d: Path) -> dict[str, Any]:
    """env.json of a results dir; an unreadable one is a warning, not a lost report."""
    path = d / rd.ENV
    if not path.exists():
        return {}
    try:
        env = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        warnings.warn(f"{path}: skipped, not a JSON object ({exc}); the report goes on without it", stacklevel=2)
        return {}
    return env if isinstance(env, dict) else {}


def load_dir(d: Path) -> tuple[dict[str, Any], list[Record]]:
    """env.json and the records of one results dir, with errors that name the dir and the fix."""
    if d.is_file():
        raise CliError(f"{d}: is a file; pass the results dir that holds it, e.g. {d.parent}")
    if not d.is_dir():
        raise CliError(f"{d}: no such directory; pass a results dir such as reports/interpret")
    if not has_results(d):
        raise CliError(f"{d}: holds no {MERGED_NAME}; run a tier that writes here (e.g. `nox -s interpret`) "
                       "or copy the dir from the machine that ran it")
    records = load_results(d)
    env = read_env(d)
    if records:
        env.setdefault("backend", records[0]["backend"])
    return env, records


def load_dirs(dirs: Sequence[Path]) -> list[tuple[Path, dict[str, Any], list[Record]]]:
    """The dirs that hold records; one without any, or from another schema, is skipped with a warning."""
    loaded = []
    for d in dirs:
        try:
            env, records = load_dir(d)
        except SchemaError as exc:
            warnings.warn(f"{exc}; skipped {d}", stacklevel=2)
            continue
        if not records:
            warnings.warn(f"{d}/{MERGED_NAME}: skipped, it holds no records (the run that wrote it selected "
                          "no cases, or was stopped before the first one finished)", stacklevel=2)
            continue
        loaded.append((d, env, records))
    if not loaded:
        raise CliError(f"none of {', '.join(str(d) for d in dirs)} holds a readable record (see the warnings "
                       "above); run a tier into it first, e.g. `nox -s interpret`, or pass a dir that has results")
    return loaded


def build_columns(dirs: Sequence[Path], out_dir: Path) -> tuple[list[divergence.Column], dict[str, list[Record]],
                                                                dict[str, Path]]:
    loaded = load_dirs(dirs)
    labels = divergence.column_labels([(env["backend"], d.name) for d, env, _ in loaded])
    columns: list[divergence.Column] = []
    records: dict[str, list[Record]] = {}
    where: dict[str, Path] = {}
    for label, (d, env, recs) in zip(labels, loaded, strict=True):
        prefix = os.path.relpath(d, out_dir).replace(os.sep, "/") + "/"
        columns.append(divergence.Column(label, env["backend"], recs[0].get("mode", ""), env, prefix))
        records[label] = recs
        where[label] = d
    return sorted(columns, key=divergence.order_key), records, where


def load_stored(records: Mapping[str, Sequence[Record]], where: dict[str, Path]) -> dict[tuple[str, str, str], Any]:
    """Stored outputs of the passing cases, keyed by (column label, kernel, case)."""
    stored = {}
    for label, recs in records.items():
        for r in recs:
            path = outputs_store.path_for(where[label], r["kernel"], r["case"])
            if r["status"] == Status.PASSED and path.exists():
                stored[(label, r["kernel"], r["case"])] = outputs_store.load(path)
    return stored


def report(dirs: Sequence[Path], out: Path, perf_ratio: float) -> str:
    columns, records, where = build_columns(dirs, out.parent)
    out.parent.mkdir(parents=True, exist_ok=True)  # the heatmap goes beside it, drawn first
    from parity.triage.merged import annotate

    annotate(records, where)  # every failing case's owner in the merged view; no results dir is rewritten
    divs = versions.find_all(columns, records, load_stored(records, where), perf_ratio=perf_ratio)
    png = out.parent / "divergence.png"
    labels = [c.label for c in columns]
    drawn = heatmap.draw(heatmap.grid(labels, records), png)
    perf_png = out.parent / "divergence_perf.png"
    perf_drawn = perf_plot.draw(perf_cross.grid(labels, records), perf_png)
    text = divergence_report.render(columns, records, divs, png.name if drawn else None,
                                    None if drawn else heatmap.INSTALL_HINT, perf_png.name if perf_drawn else None)
    envelopes = envelope_md.gather(where)  # each dir's envelope.jsonl, read only
    atomic_write_text(out, text + "\n" + envelope_md.markdown(envelopes))
    index_page.write(out, columns, records, divs, png if drawn else None, None if drawn else heatmap.INSTALL_HINT,
                     envelope_md.html(envelopes))
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")  # GitHub Actions' own variable, not a parity setting
    if summary_path:
        with open(summary_path, "a", encoding="utf-8") as fh:
            fh.write(divergence_report.step_summary(columns, records, divs) + "\n")
    from parity.report import verdict

    return (verdict.render_text(verdict.build(columns, records)) + "\n"
            + divergence_report.headline(columns, divs, records))


def parse_ratio(value: str) -> float:
    try:
        ratio = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--perf-ratio takes a number above 1, got {value!r}") from None
    if not ratio > 1:
        raise argparse.ArgumentTypeError(f"--perf-ratio must be above 1, got {ratio}")
    return ratio


def main(argv: Sequence[str] | None = None) -> int:
    """The `parity` console script (pyproject's [project.scripts]) and `python -m parity.cli`."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["check"]:  # its unknown options go to each tier's pytest, so it parses its own
        from parity.cli.check import main as check_main  # lazy: it imports every backend class, the report needs none

        return check_main(args_in[1:])
    parser = argparse.ArgumentParser(prog="parity", description="parity's command line (also `nox -s report -- "
                                     "--help`, or `python -m parity.cli` where parity is importable)")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="DIVERGENCE.md across results dirs (default: every reports/*/)")
    rep.add_argument("dirs", nargs="*", type=Path, help="results dirs, possibly from different machines")
    rep.add_argument("--out", type=Path, default=Path("reports") / "DIVERGENCE.md", help="the markdown to write")
    rep.add_argument("--perf-ratio", type=parse_ratio, default=divergence.PERF_RATIO,
                     help="flag perf differences above this ratio (default 2)")
    from parity.record import command as record_command

    record_command.add_arguments(sub.add_parser(
        "record", help="run a command with every Triton launch recorded into a bundle, for --replay on any tier"))
    sub.add_parser("check", help="a kernel module through every hardware-free tier here, then its verdict "
                   "(`parity check --help`)")
    summary = sub.add_parser("replay-summary", help="per kernel: launches and specializations a bundle holds, "
                             "and how each results dir replayed them")
    summary.add_argument("bundle", type=Path)
    summary.add_argument("dirs", nargs="*", type=Path, help="results dirs of `--replay BUNDLE` runs")
    add_merge(sub)
    lmap = sub.add_parser("map", help="per op and kernel of a recorded library: ports / does not build / wrong on "
                          "Ascend / needs a newer triton-ascend / not checked (parity.record.library_map)")
    lmap.add_argument("bundle", type=Path)
    lmap.add_argument("dirs", nargs="*", type=Path, help="results dirs of `--replay BUNDLE` runs on Ascend tiers")
    lmap.add_argument("--tests", type=Path, help="bench/record_library_ops.sh's <lib>-tests.tsv: ops with no launch")
    lmap.add_argument("--html", type=Path, help="also write the same map as a self-contained HTML page here")
    from parity.envelope import command as envelope_command  # `parity envelope`: the largest sizes that port

    envelope_command.add_arguments(sub.add_parser("envelope", help="per kernel and target: the largest sizes that "
                                                  "still port, and the first limit crossed beyond them"))
    args = parser.parse_args(args_in)
    if args.command == "envelope":
        return envelope_command.run(args)
    if args.command == "map":
        from parity.record.library_map import main as map_main  # lazy: torch and the bundle reader, this command only

        return map_main(args.bundle, args.dirs, args.tests, args.html)
    if args.command == "merge":
        return merge_main(args.out, args.dirs)
    if args.command == "record":
        return record_command.run(args)
    if args.command == "replay-summary":
        from parity.record.summary import main as summary_main

        return summary_main(args.bundle, args.dirs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            dirs = list(args.dirs) or default_dirs(args.out.parent)
            line = report(dirs, args.out, args.perf_ratio)
        except CliError as exc:
            line = None
            error = exc
    for w in caught:  # one line each, without the warnings module's source-line echo
        print(f"parity report: warning: {w.message}", file=sys.stderr)
    if line is None:
        removed = remove_stale(args.out)
        print(f"parity report: {error}" + (f"\nremoved the previous {', '.join(removed)}, so no stale report "
                                            "looks current" if removed else ""), file=sys.stderr)
        return 2
    print(f"{line}\nwrote {args.out} and {index_page.html_path(args.out)}")
    return 0


def add_merge(sub: Any) -> None:
    merge = sub.add_parser("merge", help="join the results dirs of one tier's `--shard K/N` runs into one results "
                           "dir, for `parity report`")
    merge.add_argument("out", type=Path, help="the merged results dir to write (new or empty)")
    merge.add_argument("dirs", nargs="+", type=Path, help="the shards' results dirs, all N of them")


def merge_main(out: Path, dirs: Sequence[Path]) -> int:
    from parity.report.shards import MergeError, merge  # only this command: the rest of the CLI never needs it

    try:
        print(merge(out, dirs))
    except MergeError as exc:
        print(f"parity merge: {exc}", file=sys.stderr)
        return 2
    return 0


def remove_stale(out: Path) -> list[str]:
    """Delete an earlier run's report and heatmap: after a failed report they would look current."""
    removed = []
    for path in (out, index_page.html_path(out), out.parent / "divergence.png"):
        if path.exists():
            path.unlink()
            removed.append(str(path))
    return removed


if __name__ == "__main__":
    sys.exit(main())
