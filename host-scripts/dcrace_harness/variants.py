"""The bug-variant matrix (issue 13's acceptance): every kernel x workload
mode x natural/injected, RUNS boots each, one compare per cell, and a
table of what each cell proved, written to docs/variants.md (--out).

A cell is one `compare --kernels K --mode M [--natural] --runs N`; its
JSON (per run: the workload's result, dcrace.ko's stats and the per-event
match) is kept under the results directory, so that --from DIR re-makes
the table without booting. With --lock FILE each compare runs under
flock(FILE), taken and released per cell, so other users of the machine
can boot guests between cells.

What is checked, per cell:
  kernels expected to race (unfixed and the variants): every run's module
    false_enoent events matched one to one to the user-visible false
    ENOENTs (0 user-only, 0 module-only); injected: every run reproduced
    (user-visible false ENOENT > 0) and its time to the first <= --max-first
    (not in mode cp-pressure, whose rows show these as "not checked")
  kernels expected clean (fixed, debian): 0 user-visible false ENOENT and
    0 module false_enoent in every run; over all of a kernel's cells,
    caught > 0 on both paths (stats' walk_caught and open_caught)

Exit status: 0 every check holds, 1 a clean kernel had a false ENOENT or
no caught on a path, 2 a race kernel did not reproduce in an injected run
or its time to the first was above --max-first, 3 infrastructure error
(a cell's compare failed to produce data), 4 detector failure (an
unmatched event), 64 usage error, 130 interrupted (README.md, "Exit
codes"); the first of 3, 4, 1, 2 that applies.
"""

import fcntl
import json
import os
import statistics
import subprocess
import sys
import time

from . import argtypes as A
from . import defs
from .runner import HS, Child, Interrupted, catch_signals, results_dir, shown

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
    return "%s-%s-%s" % (kernel, mode, kind)


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


def summarize_cell(kernel, mode, kind, doc, max_first):
    """What one cell's compare JSON shows, and the checks it fails."""
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
    k = defs.KERNELS.get(kernel)
    f = c["failures"]
    if c["untraced"]:
        f.append((defs.EX_HARNESS_INFRA, "%d run(s) without trace events" % c["untraced"]))
    if c["user_only"] or c["module_only"] or c["runs_one_to_one"] < c["runs"]:
        f.append((defs.EX_DETECTOR, "%d user-only, %d module-only; %d of %d runs one to one" % (
            c["user_only"], c["module_only"], c["runs_one_to_one"], c["runs"])))
    if k is not None and k.expect_clean and (c["user"] or c["module_false"]):
        f.append((defs.EX_FAIL, "false ENOENT on a clean kernel: %d user-visible, %d module" % (
            c["user"], c["module_false"])))
    # The extra modes (cp-pressure) are held to the one-to-one match and
    # to a clean kernel's zero, not to the injected reproduction checks:
    # those go to notes (shown, not failed).
    rep = c["notes"] if mode in EXTRA_MODES else f
    if k is not None and k.expect_race and kind == "injected":
        if c["reproduced"] < c["runs"]:
            rep.append((defs.EX_INCONCLUSIVE, "reproduced in %d of %d injected runs" % (
                c["reproduced"], c["runs"])))
        slow = [t for t in c["firsts"] if t > max_first]
        if slow:
            rep.append((defs.EX_INCONCLUSIVE, "time to the first above %g s in %d run(s) (max %.3f s)" % (
                max_first, len(slow), max(slow))))
    return c


def kernel_checks(kernel, cells):
    """Checks over all of a kernel's cells: a clean kernel shows caught on
    both paths."""
    k = defs.KERNELS.get(kernel)
    if k is None or not k.expect_clean:
        return []
    walk = sum(c["walk_caught"] for c in cells)
    opn = sum(c["open_caught"] for c in cells)
    if walk and opn:
        return []
    return [(defs.EX_FAIL, "%s: caught on the stat path %d, on the open path %d (both must be > 0)" % (
        kernel, walk, opn))]


def fmt_firsts(ts):
    if not ts:
        return "-"
    return "%.3f / %.3f / %.3f" % (min(ts), statistics.median(ts), max(ts))


def fmt_secs(v):
    """A run length, or the distinct lengths of merged runs (a list)."""
    vs = v if isinstance(v, list) else [v]
    return " or ".join("%g" % x for x in vs)


def markdown(cells, kchecks, meta):
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
           "`open_caught` (open()'s last component) summed over the runs." % meta["command"], "",
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
    errs = [w for _, w in kchecks] + [
        "%s: %s" % (cell_name(c["kernel"], c["mode"], c["kind"]), w)
        for c in cells for _, w in c["failures"]]
    out.append("Result: %s" % ("every check holds" if not errs else "; ".join(errs)))
    out.append("")
    notes = ["%s: %s" % (cell_name(c["kernel"], c["mode"], c["kind"]), w)
             for c in cells for _, w in c.get("notes", [])]
    if notes:
        out.append("Not checked (cp-pressure rows are held to the one-to-one match only: the pressure "
                   "pruner is slower than the 1 s the default modes are held to; docs/design.md, "
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


def main(argv):
    catch_signals()
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
    meta = {"command": "host-scripts/variants " + " ".join(argv), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "duration": args.duration, "cp_duration": args.cp_duration, "load_before": uptime()}
    infra = []
    try:
        if args.from_dirs:
            meta = merged_meta(args.from_dirs, meta)
        else:
            outdir = results_dir(args.results, "variants")
            sys.stderr.write("variants: cells in %s\n" % shown(outdir))
        cells = []
        for k in kernels:
            for m in modes:
                for kind in kinds:
                    if args.from_dirs:
                        js = [os.path.join(d, cell_name(k, m, kind) + ".json") for d in args.from_dirs]
                        js = ([j for j in js if os.path.exists(j)] or js)[-1]
                    else:
                        rc, js = run_cell(args, outdir, k, m, kind)
                        if rc in (defs.EX_USAGE, defs.EX_INTERRUPTED):
                            return rc
                    try:
                        with open(js) as f:
                            doc = json.load(f)
                    except (OSError, ValueError) as e:
                        infra.append("%s: no compare JSON (%s)" % (cell_name(k, m, kind), e))
                        continue
                    cells.append(summarize_cell(k, m, kind, doc, args.max_first))
        if not args.from_dirs:
            meta["load_after"] = uptime()
            with open(os.path.join(outdir, "meta.json"), "w") as f:
                json.dump(meta, f)
    except Interrupted as e:
        sys.stderr.write("\nvariants: interrupted (%s)\n" % e)
        return defs.EX_INTERRUPTED
    meta.setdefault("load_after", "?")
    kchecks = [c for k in kernels for c in kernel_checks(k, [x for x in cells if x["kernel"] == k])]
    md = markdown(cells, kchecks, meta)
    if infra:
        md += "Infrastructure errors: %s\n" % "; ".join(infra)
    print(md)
    if args.out:
        with open(args.out, "w") as f:
            f.write(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cells": cells, "kernel_checks": [w for _, w in kchecks], "infra": infra,
                       "meta": meta}, f, indent=1)
    codes = [c for c, _ in kchecks] + [c for x in cells for c, _ in x["failures"]]
    if infra:
        codes.append(defs.EX_HARNESS_INFRA)
    for code in (defs.EX_HARNESS_INFRA, defs.EX_DETECTOR, defs.EX_FAIL, defs.EX_INCONCLUSIVE):
        if code in codes:
            return code
    return defs.EX_OK
