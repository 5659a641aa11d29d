"""Boot the unfixed and the fixed kernel in turn with dcrace.ko loaded, run
the same workload (same seed, threads, duration, injection), and print one
table side by side with a verdict.

Kernels expected to have the race (unfixed and the bug variants
mount-refetch, open-last) must reproduce it; kernels expected clean (fixed,
debian) must show no false ENOENT. Each kernel gets a column and a verdict.
A kernel is affected (reproduces, or fails the fix) only by user-visible
false ENOENTs of the workload; a dcrace.ko event alone never makes it so.

Module events (dcrace.ko's dcrace:dcrace_race trace events, false_enoent)
are matched one to one to the workload's user-visible false ENOENTs: an
event is the failed call's when it is the same thread's, judged while the
call ran (between its start and end, CLOCK_MONOTONIC), from a lookup the
call makes (lookup=open only in an open) and on a component of its path.
A module without the trace event is compared by counts only (said in a
note).

Exit status (judged by dcrace_harness/judge.py, as check-kernel and
variants are): 0 the fix holds (unfixed reproduces, fixed is clean), 1 the
fix does not hold (a user-visible false ENOENT on the fixed kernel or
another kernel expected clean), 2 inconclusive (unfixed did not reproduce,
no unfixed/fixed pair, an unhealthy run: other errors, too few syscalls,
module and user-space counts differ without trace events, module events
outside the workload with no user-visible false ENOENT; or a kernel
expected clean without evidence that the race window was reached:
dcrace.ko's walk_caught and, when the walkers opened files, open_caught
must be > 0 over its runs), 3 infrastructure error (a guest hung, printed
no result, its log could not be parsed, a kernel splat, a path really
gone, trace events lost, a truncated paths list, --json or --plot cannot
be written, an unexpected error), 4 detector failure (a module event or a
user-visible false ENOENT without its match), 64 usage error (an unknown
kernel name, before any boot), 130 interrupted (README.md, "Exit codes").

--mode mutate judges the hard-error rule instead (the kernel table's
errors column): the workload's mutators turn components file -> gone ->
directory -> gone -> file while its walkers stat and open through them; an
errno no state of the path allows is a user-visible false error, matched
to a dcrace.ko false_<errno> event of the same errno (an unmatched event
whose errno the truth table allows where it happened, on its call's path
or else its component's, is "hidden": user space cannot check it; any
other is module-only, a detector failure). A call that succeeds where no
state allows it (--uid: locked/y read) is a false success, its own row.
A kernel expected to race must show false errors; one expected clean
none, no false success, and the evidence that the window was reached:
mutations, dcrace.ko's end_caught EACCES events of the walkers' own
threads (injection sets the module's window=2, --window N to change it),
and every state of the truth table met (each errno a path allows, e.g.
mNN/y succeeded). --rename-locked: a thread renames locked to locked.r
and back (locked/y may also give ENOENT). The same exit codes apply.
Kernels of both lines may be compared in one run (dcrace.ko is built for
each).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

from . import argtypes as A
from . import defs
from .judge import ERRORS_RULE, Judgement, by_errno, states_shown, summarize, verdict
from .logs import InfraError
from .match import read_run
from .runner import guarded, results_dir, run_once, shown, writable
from .spec import (DEFAULT_MIX, RunSpec, default_inject, default_mem, default_mix,
                   default_pruner, default_threads, mix_shown)


def build_parser():
    p = A.Parser(prog="compare", description=__doc__)
    p.add_argument("--duration", type=A.seconds,
                   help="workload seconds per run (default 20; 60 with --pruner pressure)")
    p.add_argument("--seed", type=A.positive_int, default=1, help="workload seed (default 1)")
    p.add_argument("--threads", type=A.positive_int, help="walker threads (default 2; 1 in mode mutate)")
    p.add_argument("--mode", choices=["stat", "open", "cp", "mutate"], default="stat",
                   help="workload mode (default stat; mutate: the hard-error rule)")
    p.add_argument("--uid", type=A.int_range(0, 2 ** 31 - 1, "a uid"), metavar="N",
                   help="mode mutate: the walkers run as uid and gid N (dcrace-workload --uid)")
    p.add_argument("--rename-locked", action="store_true",
                   help="mode mutate: a thread renames locked to locked.r and back "
                   "(dcrace-workload --rename-locked; locked/y may also give ENOENT)")
    p.add_argument("--window", type=A.window, metavar="N",
                   help="dcrace.ko's inject/window with injection, %s (default 2 in mode "
                   "mutate, else the module's 1)" % A.WINDOW_HELP)
    p.add_argument("--mix", type=A.mix, metavar="OP=W,...",
                   help="the walkers' calls, passed to dcrace-workload --mix: OP stat, lstat, open, "
                   "openat with weights 0..1000 (default %s in stat mode, open=100 in open mode; "
                   "not for cp)" % DEFAULT_MIX)
    p.add_argument("--pruner", choices=["drop_caches", "pressure", "none"],
                   help="pruner (default drop_caches, none in mode mutate; pressure: Hugh's "
                   "memory shortage, a 192M guest and 60 s runs by default, slower to race)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--inject", type=A.inject_us, metavar="US", dest="inject_us",
                   help="busy-wait US microseconds (0..10000) in the race window, walkers only "
                   "(default 20; 300 in mode mutate)")
    g.add_argument("--natural", action="store_const", const=0, dest="inject_us",
                   help="no injection: the natural race rate")
    p.add_argument("--probability", type=A.percent, default=100, help="injection probability, percent (default 100)")
    p.add_argument("--smp", type=A.positive_int, default=2, help="guest CPUs (default 2)")
    p.add_argument("--mem", help="guest memory (default %s; %s with --pruner pressure, the "
                   "workload runs short of memory as in Hugh's reproduction)"
                   % (default_mem(None), default_mem("pressure")))
    p.add_argument("--runs", type=A.positive_int, default=1, help="runs per kernel (default 1)")
    p.add_argument("--kernels",
                   help="comma-separated kernels: %s (debian*: Debian's stock kernels; 6.12/*, "
                   "debian-6.12*: the 6.12 line; lines may be mixed) or bzImage paths (default "
                   "%s; DCRACE_LINE=6.12 makes it the 6.12 pair; mode mutate: %s)" % (
                       ", ".join(defs.kernel_names()), default_kernels("stat", defs.LINES[0]),
                       default_kernels("mutate", defs.LINES[0])))
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    p.add_argument("--plot", metavar="FILE.png",
                   help="also draw a per-second timeline of each kernel into FILE.png (gnuplot)")
    p.add_argument("--results", metavar="DIR", help="where run logs go (default results/)")
    p.add_argument("--timeout", type=A.positive_int, help="per-boot timeout, s (default duration*4+120)")
    p.add_argument("--accel", choices=["tcg", "kvm", "auto"], default="tcg", help="QEMU accelerator (default tcg)")
    p.add_argument("--from-logs", nargs="+", metavar="KERNEL=LOG",
                   help="no boot: judge existing serial logs (for tests and re-analysis)")
    return p


def default_kernels(mode, line):
    """The kernels compared when --kernels is not given: the line's
    unfixed and fixed; in mode mutate (the hard-error rule) 6.1's fixed,
    which has the race, and the line's kernel without it (6.1's
    backport, 6.12's fixed)."""
    if mode == "mutate":
        return "fixed," + ("backport" if line == defs.LINES[0] else defs.line_name(line, "fixed"))
    return ",".join(defs.line_name(line, n) for n in ("unfixed", "fixed"))


def fmt_first(v):
    return "-" if v is None else "%.2f s" % v


def traced(s, key):
    """A per-event count, "-" without trace events ("counts only")."""
    if not s["has_module"]:
        return "-"
    if s["runs_traced"] < s["runs"]:
        return "no trace" if not s["runs_traced"] else "%d (%d/%d runs)" % (
            s[key], s["runs_traced"], s["runs"])
    return str(s[key])


def walkers_caught(e):
    """A row's cell: the walkers' end_caught events of errno E ("-"
    without dcrace.ko, "no trace" without its events)."""
    def cell(s):
        if not s["has_module"]:
            return "-"
        if s["runs_traced"] < s["runs"]:
            return "no trace" if not s["runs_traced"] else "%d (%d/%d runs)" % (
                s["end_caught_walkers"].get(e, 0), s["runs_traced"], s["runs"])
        return str(s["end_caught_walkers"].get(e, 0))
    return cell


def errors_rows(sums):
    """The table's rows of mode mutate (the hard-error rule): the false
    errors per errno, dcrace.ko's per verdict, the evidence of the window
    (the walkers' end_caught per errno, the truth table's states met), the
    match."""
    mod = lambda k: lambda s: str(s["module_false"].get(k, 0)) if s["has_module"] else "-"
    count = lambda k: lambda s: str(s[k]) if s["has_module"] else "-"
    caught = sorted(set(["EACCES", "ENOTDIR"]).union(*(s["end_caught_walkers"] for s in sums.values())))
    errnos = sorted(set(["EACCES", "ENOTDIR", "EPERM", "ENOENT"]).union(
        *(s["user_false_by_errno"] for s in sums.values())))
    verdicts = sorted(set(["false_eacces", "false_enotdir", "false_eperm", "false_error",
                           "false_enoent"]).union(*(s["module_false"] for s in sums.values())))
    renames = ([("locked renames (--rename-locked)", lambda s: str(s["locked_renames"]))]
               if any(s["rename_locked"] for s in sums.values()) else [])
    return ([
        ("runs", lambda s: str(s["runs"])),
        ("syscalls made", lambda s: str(s["syscalls"])),
        ("mutations (mutator syscalls)", lambda s: str(s["mutations"])),
    ] + renames + [
        ("truth-table states met (path, errno)", states_shown),
        ("other errors (the workload's own)", lambda s: str(s["other_errors"])),
        ("identity checks (successes checked)", lambda s: str(s["identity_checks"])),
        ("wrong objects (identity oracle)", lambda s: str(s["wrong_objects"])),
        ("user-visible false errors", lambda s: str(s["user_false_errors"])),
    ] + [("  false %s" % e, (lambda e: lambda s: str(s["user_false_by_errno"].get(e, 0)))(e))
         for e in errnos] + [
        ("user-visible false success (no state allows it)", lambda s: str(s["user_false_success"])),
        ("runs that reproduced", lambda s: "%d/%d" % (s["runs_reproduced"], s["runs"])),
    ] + [("module %s" % v, mod(v)) for v in verdicts] + [
        ("module end_judged (walk ends judged)", count("end_judged")),
        ("module end_genuine (valid state)", count("end_genuine")),
        ("module end_unvouched (moved, not that errno's cause)", count("end_unvouched")),
        ("module end_not_judged (errno judged on no state)", count("end_not_judged")),
        ("module slots_reclaimed", count("slots_reclaimed")),
        ("module end_caught (caught at walk end)", count("end_caught")),
    ] + [("  end_caught %s (walkers)" % e, walkers_caught(e)) for e in caught] + [
        ("module events matched to user failures", lambda s: traced(s, "matched")),
        ("  user-only (module missed)", lambda s: traced(s, "user_only")),
        ("  module-only (no user failure)", lambda s: traced(s, "module_only")),
        ("  hidden (errno allowed: unverifiable)", lambda s: traced(s, "hidden")),
        ("  outside the workload (other processes)", lambda s: traced(s, "outside")),
        ("time to first false error", lambda s: fmt_first(s["first_s"])),
        ("kernel splats (BUG/WARNING)", lambda s: str(s["splats"])),
        ("verdict (hard-error rule)", errors_verdict),
    ])


def errors_verdict(s):
    """A kernel's verdict on the hard-error rule: its false errors per
    errno, its false successes."""
    if not s["affected"]:
        return "clean"
    what = [by_errno(s["user_false_by_errno"])] if s["user_false_errors"] else []
    if s["user_false_success"]:
        what.append("false success %d" % s["user_false_success"])
    if s["wrong_objects"]:
        what.append("wrong objects %d" % s["wrong_objects"])
    return "AFFECTED (%s)" % "; ".join(what)


def enoent_verdict(s):
    """A kernel's verdict on the 2011 rule: false ENOENTs, wrong objects."""
    if not s["affected"]:
        return "clean"
    what = ["false ENOENT"] if s["user_false_enoent"] else []
    if s["wrong_objects"]:
        what.append("wrong objects %d" % s["wrong_objects"])
    return "AFFECTED (%s)" % "; ".join(what)


def table(names, sums):
    if any(sums[n]["rule"] == ERRORS_RULE for n in names):
        rows = errors_rows(sums)
        if any(n in defs.KERNELS for n in names):
            rows.append(("expected (errors column)", lambda s: s["expect"]))
        return layout(names, sums, rows)
    rows = [
        ("runs", lambda s: str(s["runs"])),
        ("syscalls made", lambda s: str(s["syscalls"])),
        ("prunes (pruner passes)", lambda s: str(s["prunes"])),
        ("other errors (not ENOENT)", lambda s: str(s["other_errors"])),
        ("identity checks (successes checked)", lambda s: str(s["identity_checks"])),
        ("wrong objects (identity oracle)", lambda s: str(s["wrong_objects"])),
        ("user-visible false ENOENT", lambda s: str(s["user_false_enoent"])),
        ("runs that reproduced", lambda s: "%d/%d" % (s["runs_reproduced"], s["runs"])),
        ("module races seen", lambda s: str(s["module_races"]) if s["has_module"] else "-"),
        ("  false_enoent", lambda s: str(s["module_false_enoent"]) if s["has_module"] else "-"),
        ("  caught (-ECHILD at the NULL test)", lambda s: str(s["module_caught"]) if s["has_module"] else "-"),
        ("  caught_late (pruned after that test)", lambda s: str(s["module_caught_late"]) if s["has_module"] else "-"),
        ("module events matched to user failures", lambda s: traced(s, "matched")),
        ("  user-only (module missed)", lambda s: traced(s, "user_only")),
        ("  module-only (no user failure)", lambda s: traced(s, "module_only")),
        ("  outside the workload (other processes)", lambda s: traced(s, "outside")),
        ("module and user space agree", lambda s: ("yes" if s["agree"] else "NO") if s["has_module"] else "-"),
        ("time to first false ENOENT", lambda s: fmt_first(s["first_s"])),
        ("kernel splats (BUG/WARNING)", lambda s: str(s["splats"])),
        ("verdict", enoent_verdict),
    ]
    if any(n in defs.KERNELS for n in names):
        rows.append(("expected", lambda s: s["expect"]))
    return layout(names, sums, rows)


def layout(names, sums, rows):
    """ROWS (label, f(summary)) with a column per kernel of NAMES."""
    w0 = max(len(r[0]) for r in rows)
    cols = [max([len(n)] + [len(f(sums[n])) for _, f in rows]) for n in names]
    out = ["%-*s  %s" % (w0, "", "  ".join("%*s" % (c, n) for c, n in zip(cols, names)))]
    for label, f in rows:
        out.append("%-*s  %s" % (w0, label, "  ".join("%*s" % (c, f(sums[n])) for c, n in zip(cols, names))))
    return "\n".join(out)


def series(run):
    """Per-second rows of one run: (second, user false ENOENT, module
    false_enoent, module caught)."""
    user = run["result"].get("per_second") or []
    mod = run.get("module_per_second") or []
    n = max(len(user), len(mod))
    rows = []
    for i in range(n):
        u = user[i] if i < len(user) else 0
        m = mod[i] if i < len(mod) else {"false_enoent": 0, "caught": 0}
        rows.append((i, u, m["false_enoent"], m["caught"]))
    return rows


def plot(path, names, runs, title):
    """One panel per kernel (its first run), drawn by gnuplot."""
    gp = shutil.which("gnuplot")
    if not gp:
        raise InfraError("--plot needs gnuplot (apt-get install gnuplot-nox)")
    tmp = tempfile.mkdtemp(prefix="dcrace-plot-")
    try:
        script = ["set terminal pngcairo size 1000,%d font ',10'" % (260 * len(names) + 60),
                  "set output '%s'" % path.replace("'", "''"),
                  "set multiplot layout %d,1 title '%s'" % (len(names), title.replace("'", "''")),
                  "set xlabel 'seconds of workload'", "set ylabel 'per second'",
                  "set termoption noenhanced", "set key top right", "set grid", "set yrange [0:*]",
                  "set style data linespoints"]
        for i, n in enumerate(names):
            data = os.path.join(tmp, "k%d.dat" % i)
            rows = series(runs[n][0])
            with open(data, "w") as f:
                f.write("# second user_false_enoent module_false_enoent module_caught\n")
                for r in rows:
                    f.write("%d %d %d %d\n" % r)
            s = summarize(runs[n])
            script.append("set title '%s: %d user-visible false ENOENT, module %d false / %d caught'" % (
                os.path.basename(n), s["user_false_enoent"], s["module_false_enoent"],
                s["module_caught"] + s["module_caught_late"]))
            if not rows:
                script.append("set label 1 'no data' at graph 0.5,0.5 center")
                script.append("plot 0 notitle")
                script.append("unset label 1")
                continue
            script.append("plot '%s' using 1:2 title 'user-visible false ENOENT' lw 2 pt 7, "
                          "'' using 1:3 title 'dcrace.ko false_enoent' lw 1 pt 6 dt 2, "
                          "'' using 1:4 title 'dcrace.ko caught (-ECHILD, with caught_late)' lw 2 pt 5" % data)
        script.append("unset multiplot")
        sp = os.path.join(tmp, "plot.gp")
        with open(sp, "w") as f:
            f.write("\n".join(script) + "\n")
        p = subprocess.run([gp, sp], capture_output=True, text=True)
        if p.returncode != 0:
            raise InfraError("gnuplot failed: %s" % p.stderr.strip().splitlines()[-1:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def parse_args(argv):
    """(args, spec) from the command line; usage errors exit."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.plot and not args.plot.endswith(".png"):
        parser.error("--plot wants a FILE.png")
    if args.plot and not shutil.which("gnuplot"):
        parser.error("--plot needs gnuplot (apt-get install gnuplot-nox)")
    if args.kernels is None:
        args.kernels = default_kernels(args.mode, os.environ.get("DCRACE_LINE") or defs.LINES[0])
    args.names = [k for k in args.kernels.split(",") if k]
    if not args.names:
        parser.error("--kernels is empty")
    unknown = A.unknown_kernels(args.names)
    if unknown and not args.from_logs:
        parser.error("--kernels: " + A.unknown_kernels_error(unknown))
    for item in args.from_logs or []:
        if "=" not in item:
            parser.error("--from-logs wants KERNEL=LOG, got %r" % item)
    if args.mix and args.mode == "cp":
        parser.error("--mix is for --mode stat, open or mutate")
    if args.uid is not None and args.mode != "mutate":
        parser.error("--uid is for --mode mutate")
    if args.rename_locked and args.mode != "mutate":
        parser.error("--rename-locked is for --mode mutate")
    if args.inject_us is None:
        args.inject_us = default_inject(args.mode)
    if args.window is not None and not args.inject_us:
        parser.error("--window is for injected runs (not --natural or --inject 0)")
    spec = RunSpec(duration=args.duration, seed=args.seed,
                   threads=args.threads or default_threads(args.mode),
                   mode=args.mode, mix=args.mix or default_mix(args.mode),
                   pruner=args.pruner, inject_us=args.inject_us,
                   probability=args.probability, smp=args.smp, mem=args.mem,
                   timeout=args.timeout, accel=args.accel, uid=args.uid, window=args.window,
                   rename_locked=args.rename_locked)
    return args, spec


def gather(args, spec):
    """(names, runs, outdir): the parsed runs of each kernel, booted or
    from --from-logs."""
    for what in ("json", "plot"):
        if getattr(args, what):
            writable(getattr(args, what), "--" + what)
    if args.from_logs:
        names, runs = [], {}
        for item in args.from_logs:
            k, log = item.split("=", 1)
            if k not in runs:
                names.append(k)
                runs[k] = []
            runs[k].append(read_run(log))
        return names, runs, None
    names = args.names
    runs = {n: [] for n in names}
    outdir = results_dir(args.results, "compare")
    sys.stderr.write("compare: logs in %s\n" % shown(outdir))
    for i in range(args.runs):
        for n in names:
            short = defs.file_name(n) if n in defs.KERNELS else os.path.basename(n)
            label = "%s run %d/%d" % (short, i + 1, args.runs)
            log = os.path.join(outdir, "%s-run%d.log" % (short, i + 1))
            runs[n].append(run_once(spec, n, log, label))
    return names, runs, outdir


def report(args, spec, names, runs, outdir):
    judged = [Judgement(n, runs[n]) for n in names]
    code, line = verdict(judged)
    sums = {j.name: j.to_json() for j in judged}
    if not args.from_logs:
        print("dcrace compare: mode=%s mix=%s pruner=%s%s%s duration=%gs seed=%d threads=%d %s, runs=%d" % (
            spec.mode, mix_shown(spec.mode, spec.mix),
            default_pruner(spec.pruner, spec.mode),
            "" if spec.uid is None else " uid=%d" % spec.uid,
            " rename-locked" if spec.rename_locked else "",
            spec.duration, spec.seed, spec.threads,
            "natural (no injection)" if not spec.inject_us else
            "injection %d us p=%d%%%s" % (spec.inject_us, spec.probability,
                                          "" if spec.window is None else " window=%d" % spec.window),
            args.runs))
    print(table(names, sums))
    untraced = [n for n in names if sums[n]["has_module"] and sums[n]["runs_traced"] < sums[n]["runs"]]
    if untraced:
        print("note: no dcrace:dcrace_race trace events on: %s (a module without them): module and "
              "user space compared by counts only, not per event" % ", ".join(untraced))
    disagree = [n for n in names if sums[n]["has_module"] and not sums[n]["agree_counts"]]
    if disagree:
        print("note: module and user-space counts differ on: %s" % ", ".join(disagree))
    unmatched = [n for n in names if sums[n]["user_only"] or sums[n]["module_only"]]
    if unmatched:
        print("note: unmatched events on: %s (the first of each in the --json output)" % ", ".join(unmatched))
    outside = [n for n in names if sums[n].get("outside")]
    if outside:
        print("note: module false_enoent events in other processes of the guest, outside the "
              "workload (not matched; the first of each in the --json output): %s" % ", ".join(
                  "%s %d" % (n, sums[n]["outside"]) for n in outside))
    hidden_notes(names, sums)
    success = [n for n in names if sums[n].get("user_false_success")]
    if success:
        print("note: false successes (a call succeeded where no state of its path allows it; no "
              "module event can match one): %s" % ", ".join(
                  "%s %d" % (n, sums[n]["user_false_success"]) for n in success))
    for n in names:
        if sums[n].get("wrong_objects"):
            print("note: wrong objects on %s: %d calls succeeded on another object than their "
                  "path names; the first: %s" % (n, sums[n]["wrong_objects"],
                                                sums[n]["first_wrong_object"]))
    print("verdict: %s" % line)
    if outdir:
        print("logs: %s" % shown(outdir))
    if args.plot:
        plot(args.plot, names, runs, "dcrace compare: %s" % line)
        print("plot: %s" % args.plot)
    if args.json:
        settings = {k: getattr(spec, k) for k in
                    ("duration", "seed", "threads", "mode", "pruner", "inject_us",
                     "probability", "smp", "mem", "mix", "uid", "window", "rename_locked")}
        settings["runs"] = args.runs
        # what judge.Judgement needs to judge the runs again (variants)
        doc = {"verdict": line, "exit": code, "kernels": sums,
               "runs": {n: [{"log": r["log"], "result": r["result"],
                             "stats": r.get("stats"), "probes": r.get("probes"),
                             "splats": r.get("splats", []),
                             "module_per_second": r.get("module_per_second"),
                             "trace": trace_json(r.get("trace"))}
                            for r in runs[n]] for n in names},
               "settings": settings}
        try:
            with open(args.json, "w") as f:
                json.dump(doc, f, indent=1)
        except OSError as e:
            raise InfraError("cannot write --json %s: %s" % (args.json, e.strerror or e))
    return code


def hidden_notes(names, sums):
    """Hidden events (mode mutate: a module false_* event whose errno the
    path allows, which user space cannot check) are said, and on a kernel
    whose errors column is clean they are a finding."""
    hidden = [n for n in names if sums[n].get("hidden")]
    if hidden:
        print("note: hidden: module false_* events whose errno the walked path allows (user "
              "space cannot check them; the first of each in the --json output): %s" % ", ".join(
                  "%s %d" % (n, sums[n]["hidden"]) for n in hidden))
    for n in hidden:
        k = defs.KERNELS.get(n)
        if k is not None and k.errors == "clean":
            print("FINDING: %s: %d hidden module false_* event(s) on a kernel whose errors column "
                  "is clean: dcrace.ko says it returned false errors user space cannot see "
                  "(see the --json output's hidden_first)" % (n, sums[n]["hidden"]))


def trace_json(tr, keep=20):
    """A run's per-event match for --json: counts, and the first KEEP
    unmatched events of each side."""
    if tr is None:
        return None
    out = {k: tr[k] for k in ("events", "lost", "paths_listed", "paths_dropped", "matched")}
    out["stats_differ"] = tr.get("stats_differ", False)
    out["false_success_listed"] = tr.get("false_success_listed", 0)
    out["end_caught_walkers"] = tr.get("end_caught_walkers", {})
    out["end_caught_others"] = tr.get("end_caught_others", 0)
    out["user_only"] = len(tr["user_only"])
    out["module_only"] = len(tr["module_only"])
    out["user_only_first"] = tr["user_only"][:keep]
    out["module_only_first"] = tr["module_only"][:keep]
    out["outside"] = len(tr.get("outside", []))
    out["outside_first"] = tr.get("outside", [])[:keep]
    out["hidden"] = len(tr.get("hidden", []))
    out["hidden_first"] = tr.get("hidden", [])[:keep]
    return out


def main(argv):
    def body():
        args, spec = parse_args(argv)
        names, runs, outdir = gather(args, spec)
        return report(args, spec, names, runs, outdir)
    return guarded("compare", body)
