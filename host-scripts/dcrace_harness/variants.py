"""The bug-variant matrix: every kernel x workload mode x
natural/injected, RUNS boots each, one compare per cell, and a table of
what each cell proved, written to docs/variants.md (--out).

A cell is one `compare --kernels K --mode M [--natural] --runs N`; its
JSON (per run: the workload's result, dcrace.ko's stats, the per-event
match and the splats; compare's exit and verdict; the settings) is kept
under the results directory, so that --from DIR re-makes the table
without booting. With --lock FILE each compare runs under flock(FILE),
taken and released per cell, so other users of the machine can boot
guests between cells.

What is checked, per cell (dcrace_harness/judge.py judges the cell's runs
from its JSON, as compare judged them):
  every cell: healthy as compare would call it (no splat, no path really
    gone, enough syscalls, no other errors, no lost trace events, every
    run traced), every module false_enoent event of the workload matched
    one to one to a user-visible false ENOENT (0 user-only, 0
    module-only), and compare's own exit not 1, 3 or 4
  kernels expected to race (unfixed and the variants), injected: every
    run reproduced (user-visible false ENOENT > 0) and its time to the
    first <= --max-first (not in mode cp-pressure, whose rows show these
    as "not checked")
  kernels expected clean (fixed, debian): 0 user-visible false ENOENT,
    and caught > 0 on the stat path (stats' walk_caught) and, where the
    walkers open files, on the open path (open_caught) over the cell's
    runs (cp-pressure: shown, not checked)

Exit status: 0 every check holds, 1 a clean kernel had a user-visible
false ENOENT, 2 inconclusive (a race kernel did not reproduce in an
injected run or its time to the first was above --max-first; a clean
kernel without caught on a path; other errors, too few syscalls, an
unconfirmed event outside the workload), 3 infrastructure error (a cell's
compare failed to produce data or said 3, a splat, a path gone, an
untraced run, an unexpected error), 4 detector failure (an unmatched
event), 64 usage error (an unknown kernel name, before any boot), 130
interrupted (README.md, "Exit codes"); the first of 3, 4, 1, 2 that
applies.
"""

import fcntl
import json
import os
import statistics
import sys
import time

from . import argtypes as A
from . import defs
from .judge import Judgement
from .logs import InfraError
from .runner import HS, Child, guarded, results_dir, shown, writable

DEFAULT_KERNELS = "unfixed,mount-refetch,open-last,fixed"
MODES = ("stat", "open", "cp")
# Not in the default matrix: cp with the pressure pruner (Hugh's memory
# shortage), whose races are too rare for its injected checks (design.md).
EXTRA_MODES = {"cp-pressure": ("cp", ["--pruner", "pressure"])}


def compare_mode(mode):
    """(compare's --mode, extra compare arguments) for a matrix mode."""
    return EXTRA_MODES.get(mode, (mode, []))
KINDS = ("natural", "injected")


def build_parser():
    p = A.Parser(prog="variants", description=__doc__)
    p.add_argument("--kernels", default=DEFAULT_KERNELS,
                   help="comma-separated kernels (default %s)" % DEFAULT_KERNELS)
    p.add_argument("--modes", default=",".join(MODES),
                   help="comma-separated workload modes: stat, open, cp (default: all three) or "
                   "cp-pressure (cp with --pruner pressure: Hugh's memory shortage, 192M guest)")
    p.add_argument("--kinds", default=",".join(KINDS),
                   help="natural, injected or both (default natural,injected)")
    p.add_argument("--runs", type=A.positive_int, default=10, help="boots per cell (default 10)")
    p.add_argument("--duration", type=A.seconds, default=3.0,
                   help="workload seconds per run, stat and open modes (default 3)")
    p.add_argument("--cp-duration", type=A.seconds, default=5.0,
                   help="workload seconds per run, cp and cp-pressure modes (default 5)")
    p.add_argument("--max-first", type=float, default=1.0, metavar="S",
                   help="injected runs: the longest time to the first false ENOENT allowed (default 1)")
    p.add_argument("--lock", metavar="FILE", help="run each compare under flock(FILE), per cell")
    p.add_argument("--results", metavar="DIR", help="where the cells' JSON and logs go (default results/)")
    p.add_argument("--from", dest="from_dirs", metavar="DIR", action="append",
                   help="no boot: make the table from the cells' JSON in DIR (a previous run's "
                   "directory); repeat to merge several runs (a cell is taken from the last DIR "
                   "that has it)")
    p.add_argument("--out", metavar="FILE.md", help="write the table (markdown) to FILE.md, e.g. docs/variants.md")
    p.add_argument("--json", metavar="FILE", help="also write the per-cell summary as JSON to FILE")
    return p


def cell_name(kernel, mode, kind):
    """The cell's name, and its files' (6.12/fixed: 6.12-fixed; a bzImage
    path: its file name)."""
    k = defs.file_name(kernel) if kernel in defs.KERNELS else os.path.basename(kernel)
    return "%s-%s-%s" % (k, mode, kind)


def run_cell(args, outdir, kernel, mode, kind):
    """One compare for the cell; returns (its exit code, its JSON path)."""
    js = os.path.join(outdir, cell_name(kernel, mode, kind) + ".json")
    cmode, extra = compare_mode(mode)
    cmd = [os.path.join(HS, "compare"), "--kernels", kernel, "--mode", cmode, "--runs", str(args.runs),
           "--duration", str(args.cp_duration if cmode == "cp" else args.duration),
           "--json", js, "--results", os.path.join(outdir, "logs")] + extra
    if kind == "natural":
        cmd.append("--natural")
    lock = None
    if args.lock:
        lock = open(args.lock, "a")
        fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        t0 = time.time()
        rc, out, err = Child(cmd).run()
    finally:
        if lock:
            lock.close()
    with open(os.path.join(outdir, cell_name(kernel, mode, kind) + ".out"), "w") as f:
        f.write(out + err)
    sys.stderr.write("variants: %s: compare exit %d in %.0f s\n" % (
        cell_name(kernel, mode, kind), rc, time.time() - t0))
    return rc, js


def cell_counts(kernel, mode, kind, doc):
    """The counts of a cell's row, from its compare JSON's runs."""
    runs = doc["runs"][kernel]
    c = {"kernel": kernel, "mode": mode, "kind": kind, "runs": len(runs),
         "reproduced": 0, "user": 0, "module_false": 0, "matched": 0,
         "user_only": 0, "module_only": 0, "outside": 0, "runs_one_to_one": 0, "untraced": 0,
         "walk_caught": 0, "open_caught": 0, "walk_false": 0, "open_false": 0, "caught_late": 0, "firsts": [],
         "syscalls": 0, "mix": doc["settings"].get("mix"),
         "duration": doc["settings"]["duration"], "failures": [], "notes": []}
    for r in runs:
        res, st, tr = r["result"], r.get("stats") or {}, r.get("trace")
        c["syscalls"] += res["syscalls"]
        c["user"] += res["false_enoent"]
        if res["false_enoent"] > 0:
            c["reproduced"] += 1
        if res.get("first_false_enoent_s") is not None:
            c["firsts"].append(res["first_false_enoent_s"])
        c["module_false"] += st.get("false_enoent", 0)
        c["walk_caught"] += st.get("walk_caught", 0)
        c["open_caught"] += st.get("open_caught", 0)
        c["walk_false"] += st.get("walk_false_enoent", 0)
        c["open_false"] += st.get("open_false_enoent", 0)
        c["caught_late"] += st.get("caught_late", 0)
        if tr is None:
            c["untraced"] += 1
            continue
        c["matched"] += tr["matched"]
        c["user_only"] += tr["user_only"]
        c["module_only"] += tr["module_only"]
        c["outside"] += tr.get("outside", 0)
        if not tr["user_only"] and not tr["module_only"] and not tr.get("lost"):
            c["runs_one_to_one"] += 1
    return c


def summarize_cell(kernel, mode, kind, doc, max_first):
    """What one cell's compare JSON shows, and the checks it fails: the
    judge's (as compare judged the runs, every run traced), compare's own
    exit, and the matrix's injected reproduction."""
    c = cell_counts(kernel, mode, kind, doc)
    j = Judgement(kernel, doc["runs"][kernel], need_trace=True)
    # The extra modes (cp-pressure) are held to health, the one-to-one
    # match and a clean kernel's zero, not to the reproduction checks or
    # the catches: those go to notes (shown, not failed).
    extra = mode in EXTRA_MODES
    f = c["failures"]
    f.extend(j.health + ([j.failed_clean()] if j.failed_clean() else []))
    (c["notes"] if extra else f).extend(j.evidence)
    rc = doc.get("exit")
    if not isinstance(rc, int):
        f.append((defs.EX_HARNESS_INFRA, "the compare JSON holds no exit status"))
    elif rc in (defs.EX_HARNESS_INFRA, defs.EX_DETECTOR, defs.EX_FAIL) and rc not in [x for x, _ in f]:
        f.append((rc, "compare exited %d: %s" % (rc, doc.get("verdict", "?"))))
    rep = c["notes"] if extra else f
    if j.expect_race and kind == "injected":
        if c["reproduced"] < c["runs"]:
            rep.append((defs.EX_INCONCLUSIVE, "reproduced in %d of %d injected runs" % (
                c["reproduced"], c["runs"])))
        slow = [t for t in c["firsts"] if t > max_first]
        if slow:
            rep.append((defs.EX_INCONCLUSIVE, "time to the first above %g s in %d run(s) (max %.3f s)" % (
                max_first, len(slow), max(slow))))
    return c


def fmt_firsts(ts):
    if not ts:
        return "-"
    return "%.3f / %.3f / %.3f" % (min(ts), statistics.median(ts), max(ts))


def fmt_secs(v):
    """A run length, or the distinct lengths of merged runs (a list)."""
    vs = v if isinstance(v, list) else [v]
    return " or ".join("%g" % x for x in vs)


def markdown(cells, meta):
    out = ["# The bug variants: the matrix", "",
           "Generated by `host-scripts/variants` (%s); do not edit. Each row is one "
           "`compare --kernels K --mode M [--natural] --runs N`: N boots, dcrace.ko loaded, "
           "its `dcrace:dcrace_race` false_enoent events matched one to one to the "
           "workload's user-visible false ENOENTs (pid = tid, judged between the failed "
           "call's start and end, lookup and component agreeing with the call); `outside` "
           "counts the module's "
           "false_enoent events in other processes of the guest (its shell), which the workload "
           "cannot see and which are not matched (so module false_enoent = matched + module-only "
           "+ outside). Time to the first false ENOENT "
           "(workload seconds) is min / median / max over the runs that reproduced. "
           "`caught` is dcrace.ko's `walk_caught` (stat path: walk_component's steps) and "
           "`open_caught` (open()'s last component) summed over the runs; a kernel expected "
           "clean needs both > 0 in each cell (walk only where the walkers open nothing)." % meta["command"], "",
           "Run %s; stat and open modes %s s per run, cp %s s; injection 20 us (injected "
           "rows); default mix stat=50,open=50 in stat mode; pruner drop_caches (cp-pressure: "
           "the pressure pruner in a 192 MiB guest, `compare --mode cp --pruner pressure`); machine load (uptime) before: %s; "
           "after: %s." % (meta["date"], fmt_secs(meta["duration"]), fmt_secs(meta["cp_duration"]),
                           meta["load_before"], meta["load_after"]), "",
           ] + ([meta["note"], ""] if meta.get("note") else []) + [
           "| kernel | mode | window | runs reproduced | user false ENOENT | module false_enoent "
           "| matched | user-only | module-only | outside | runs one to one "
           "| time to first, s (min / median / max) | caught walk / open | checks |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in cells:
        out.append("| %s | %s | %s | %d/%d | %d | %d | %d | %d | %d | %d | %d/%d | %s | %d / %d | %s |" % (
            c["kernel"], c["mode"], c["kind"], c["reproduced"], c["runs"], c["user"],
            c["module_false"], c["matched"], c["user_only"], c["module_only"], c.get("outside", 0),
            c["runs_one_to_one"], c["runs"], fmt_firsts(c["firsts"]),
            c["walk_caught"], c["open_caught"],
            "; ".join([w for _, w in c["failures"]] + ["not checked: " + w for _, w in c.get("notes", [])])
            or "ok"))
    out.append("")
    errs = ["%s: %s" % (cell_name(c["kernel"], c["mode"], c["kind"]), w)
            for c in cells for _, w in c["failures"]]
    out.append("Result: %s" % ("every check holds" if not errs else "; ".join(errs)))
    out.append("")
    notes = ["%s: %s" % (cell_name(c["kernel"], c["mode"], c["kind"]), w)
             for c in cells for _, w in c.get("notes", [])]
    if notes:
        out.append("Not checked (cp-pressure rows are held to health, the one-to-one match and a clean "
                   "kernel's zero only: the pressure pruner is slower than the 1 s the default modes are "
                   "held to, and catches less; docs/design.md, "
                   "\"The workload's modes\"): %s" % "; ".join(notes))
        out.append("")
    return "\n".join(out)


def merged_meta(dirs, meta):
    """The settings of the runs in DIRS (their meta.json), as one: commands
    joined, the first one's date and load before, the last one's load
    after. A directory without meta.json keeps META's (this invocation)."""
    metas = []
    for d in dirs:
        try:
            with open(os.path.join(d, "meta.json")) as f:
                metas.append(json.load(f))
        except (OSError, ValueError):
            pass
    if not metas:
        return meta
    if len(metas) == 1:
        return metas[0]
    out = dict(metas[0])
    out["command"] = "; ".join("`%s`" % m["command"].replace("`", "") for m in metas)
    out["date"] = "%s to %s" % (metas[0]["date"], metas[-1]["date"])
    out["load_after"] = metas[-1].get("load_after", "?")
    for key in ("duration", "cp_duration"):
        vals = []
        for m in metas:
            if key in m and m[key] not in vals:
                vals.append(m[key])
        if len(vals) > 1:
            out[key] = vals
    return out


def uptime():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def parse_args(argv):
    """(args, kernels, modes, kinds); usage errors exit 64 before any boot."""
    parser = build_parser()
    args = parser.parse_args(argv)
    kernels = [k for k in args.kernels.split(",") if k]
    modes = [m for m in args.modes.split(",") if m]
    kinds = [k for k in args.kinds.split(",") if k]
    for m in modes:
        if m not in MODES and m not in EXTRA_MODES:
            parser.error("--modes: %r is not one of %s" % (m, ", ".join(MODES + tuple(EXTRA_MODES))))
    for k in kinds:
        if k not in KINDS:
            parser.error("--kinds: %r is not natural or injected" % k)
    if not kernels or not modes or not kinds:
        parser.error("empty --kernels, --modes or --kinds")
    unknown = A.unknown_kernels(kernels)
    if unknown and not args.from_dirs:
        parser.error("--kernels: " + A.unknown_kernels_error(unknown))
    return args, kernels, modes, kinds


def load_cell(path, name):
    """A cell's compare JSON, or raise InfraError."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise InfraError("%s: no compare JSON (%s)" % (name, e))


def gather(args, kernels, modes, kinds):
    """(cells, infra errors, compare's exit when it was 64 or 130): each
    cell booted (compare) or read from --from."""
    if not args.from_dirs:
        args.outdir = results_dir(args.results, "variants")
        sys.stderr.write("variants: cells in %s\n" % shown(args.outdir))
    cells, infra = [], []
    for k in kernels:
        for m in modes:
            for kind in kinds:
                name = cell_name(k, m, kind)
                if args.from_dirs:
                    js = [os.path.join(d, name + ".json") for d in args.from_dirs]
                    js = ([j for j in js if os.path.exists(j)] or js)[-1]
                else:
                    rc, js = run_cell(args, args.outdir, k, m, kind)
                    if rc in (defs.EX_USAGE, defs.EX_INTERRUPTED):
                        return cells, infra, rc
                try:
                    cells.append(summarize_cell(k, m, kind, load_cell(js, name), args.max_first))
                except InfraError as e:
                    infra.append(str(e))
                except (KeyError, TypeError, ValueError, AttributeError) as e:
                    infra.append("%s: a malformed compare JSON (%s: %s)" % (name, type(e).__name__, e))
    return cells, infra, None


def write(path, text):
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise InfraError("cannot write %s: %s" % (path, e.strerror or e))


def matrix(args, kernels, modes, kinds, meta):
    """Gather the cells, print and write the table; the exit code."""
    for what in ("out", "json"):
        if getattr(args, what):
            writable(getattr(args, what), "--" + what)
    cells, infra, rc = gather(args, kernels, modes, kinds)
    if rc is not None:
        return rc
    if args.from_dirs:
        meta = merged_meta(args.from_dirs, meta)
    else:
        meta["load_after"] = uptime()
        write(os.path.join(args.outdir, "meta.json"), json.dumps(meta))
    meta.setdefault("load_after", "?")
    md = markdown(cells, meta)
    if infra:
        md += "Infrastructure errors: %s\n" % "; ".join(infra)
    print(md)
    if args.out:
        write(args.out, md)
    if args.json:
        write(args.json, json.dumps({"cells": cells, "infra": infra, "meta": meta}, indent=1))
    codes = [c for x in cells for c, _ in x["failures"]]
    if infra:
        codes.append(defs.EX_HARNESS_INFRA)
    for code in (defs.EX_HARNESS_INFRA, defs.EX_DETECTOR, defs.EX_FAIL, defs.EX_INCONCLUSIVE):
        if code in codes:
            return code
    return defs.EX_OK


def main(argv):
    def body():
        args, kernels, modes, kinds = parse_args(argv)
        meta = {"command": "host-scripts/variants " + " ".join(argv),
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "duration": args.duration, "cp_duration": args.cp_duration, "load_before": uptime()}
        return matrix(args, kernels, modes, kinds, meta)
    return guarded("variants", body)
