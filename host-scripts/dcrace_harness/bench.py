"""Benchmarks: what dcrace.ko costs, how fast the race shows, how long the
pipeline takes. Writes docs/benchmarks.md (tables, the command, kernel and
QEMU versions) and docs/benchmarks.json.

  overhead   one boot: throughput of the stat and the open workload (no
             pruner) with dcrace.ko loaded (injection off) and, on stat,
             with each probe of the module's table armed on its own; rows
             interleaved with no-module baseline rows (B M B M ...), each
             module row's ratio against its two neighbouring baselines, so
             the drift of a shared machine cancels. --rounds loaded rows
             per workload, --probe-rounds per-probe rows; min / median /
             max of the ratios are reported.
  first      time to the first false ENOENT on the unfixed kernel over
             --boots boots each: natural (no module), natural with dcrace.ko
             loaded, and injected (20 us): min / median / max seconds of
             workload time.
  pipeline   wall time of "make kernels" and "make compare" warm (now);
             cold ones (empty cache) only with --cold (about 11 minutes more),
             else carried over from the previous docs/benchmarks.json.

Exit status: 0 done, 3 infrastructure error, 64 usage error, 130 interrupted
(README.md, "Exit codes").
"""


import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from . import argtypes as A
from . import bench_icount
from . import defs
from .logs import InfraError
from .runner import (ROOT, Child, Interrupted, catch_signals, last_line, results_dir,
                     run_guest_cmd, run_once, tool)
from .spec import RunSpec

def say(msg):
    sys.stderr.write("bench: %s\n" % msg)
    sys.stderr.flush()


def build_ko(kernel, which=()):
    rc, out, err = Child([tool("build-module"), "--kernel", kernel] + list(which)).run()
    if rc != 0:
        raise InfraError("build-module failed: %s" % err.strip()[-300:])
    return out.strip()


def boot(kernel, script, log, timeout, copies=(), smp=None, icount=None):
    rc, out, err = Child(run_guest_cmd(kernel, log, script, timeout, copies=copies, smp=smp,
                                       icount=icount)).run()
    if rc != 0:
        raise InfraError("guest failed (exit %d): %s" % (rc, last_line(err) or "?"))
    return out


# ---- overhead ----------------------------------------------------------

# The workloads measured: the walkers' one call each (no pruner).
WORKLOADS = ["stat", "open"]
DEBUGFS = "/sys/kernel/debug/dcrace"


def overhead_script(secs, rounds, probe_rounds, settle, ab=None):
    """The guest side of the overhead boot. Rows are interleaved: every
    module row has a no-module baseline row of the same workload right
    before and right after it (B M1 B M2 B ...), so that the drift of a
    shared machine cancels in its ratio. The module's probe table is read
    from its "probes" file at the first insmod, so that the "only one
    probe armed" rows follow the module at hand (bit i of skip_probes is
    line i of the table; a probe that is off by default is an extra one).
    AB: the file name of a second module in /dcrace/copy/ (another build,
    e.g. the main branch's): each round then also has its "loaded-ab" rows,
    interleaved with the same baselines, for an A/B in one boot."""
    wl = "dcrace-workload --quiet --seed 1 --threads 2"
    both = " ".join(WORKLOADS)
    lines = [
        wl + " --mode stat --setup-only >/dev/null || exit 1",
        "ko=/dcrace/copy/dcrace.ko",
        # run ROW WORKLOAD...: one row per workload
        # after each module row's workload, the probes' hit counts (per
        # stat() and open(): the difference over the row's syscalls)
        "run() { r=$1; shift; for w in \"$@\"; do %s --mode $w --no-setup --pruner none "
        "--duration %s | sed -n \"s/^DCRACE-RESULT /DCRACE-ROW $r $w $round /p\"; "
        "[ -e %s/probes ] && grep -E '^(site_hits |[a-z_]+ \\S+ (kprobe|from-rcu_lookup|kretprobe) armed )' "
        "%s/probes | sed \"s/^/DCRACE-HITS $r $w $round /\"; done; }" % (wl, secs, DEBUGFS, DEBUGFS),
        # mod ROW PARAMS WORKLOAD...: the module loaded with PARAMS
        "mod() { r=$1; p=$2; shift 2; insmod $ko $p || exit 1; sleep %d; run $r \"$@\"; "
        "rmmod dcrace || exit 1; }" % settle,
        "insmod $ko || exit 1",
        "sleep %d; grep '^form ' %s/probes | sed 's/^/DCRACE-FORM /'" % (settle, DEBUGFS),
    ] + bench_icount.probe_table(DEBUGFS) + [
        "rmmod dcrace || exit 1",
        "echo \"DCRACE-PROBES $probes\"",
        # the first rows after the setup and the first insmod run faster
        # than all later ones (measured: by up to 60%): not measured
        "round=0; run warm-up %s" % both,
        "while [ $round -lt %d ]; do" % rounds,
        # a round starts where the last one ended: with a stat baseline
        "  if [ $round -eq 0 ]; then run base %s; else run base %s; fi" % (both, " ".join(WORKLOADS[1:])),
        "  mod loaded '' %s; run base %s" % (both, both),
        "  mod loaded-s10 sample=10 %s; run base %s" % (both, both),
        "  mod loaded-s100 sample=100 %s; run base %s" % (both, both),
    ] + ([
        "  ko=/dcrace/copy/%s; mod loaded-ab '' %s; run base %s; ko=/dcrace/copy/dcrace.ko" % (ab, both, both),
    ] if ab else []) + [
        "  if [ $round -lt %d ]; then" % probe_rounds,
    ] + bench_icount.probe_rows("stat; run base stat") + [
        "  fi",
        "  round=$((round + 1))",
        "done",
    ]
    return "\n".join(lines)


def spread(xs, nd=2):
    return {"min": round(min(xs), nd), "median": round(statistics.median(xs), nd),
            "max": round(max(xs), nd)}


def overhead_rows(entries):
    """ENTRIES: (row, round, rate) of one workload in log order. Each
    module row's ratio is the mean of its neighbouring baseline rows over
    its own rate (one neighbour at an end)."""
    entries = [e for e in entries if e[0] != "warm-up"]
    base = [i for i, e in enumerate(entries) if e[0] == "base"]
    rows = {}
    for i, (name, rnd, rate) in enumerate(entries):
        if name == "base":
            continue
        near = [entries[j][2] for j in ([b for b in base if b < i][-1:] + [b for b in base if b > i][:1])]
        if not near:
            raise InfraError("overhead row %s round %s has no baseline row" % (name, rnd))
        r = rows.setdefault(name, {"per_s": [], "slowdown_each_round": []})
        r["per_s"].append(round(rate))
        r["slowdown_each_round"].append(round(statistics.mean(near) / rate, 3))
    for r in rows.values():
        r["slowdown"] = spread(r["slowdown_each_round"])
    rates = [entries[j][2] for j in base]
    # adjacent baselines: how much the machine drifts between two rows
    drift = [max(a, b) / min(a, b) - 1 for a, b in zip(rates, rates[1:])]
    out = {"base": {"per_s": [round(x) for x in rates], "rows": len(rates)}, "rows": rows}
    if drift:
        out["base"]["adjacent_drift_pct"] = spread([100 * d for d in drift], 1)
    return out


def ab_copy(path, outdir):
    """A copy of the --ab module named dcrace_ab.ko (the guest's copies
    are by file name; the module inside is dcrace all the same)."""
    if not os.path.isfile(path):
        raise InfraError("--ab: no such module: %s" % path)
    dst = os.path.join(outdir, "dcrace_ab.ko")
    shutil.copyfile(path, dst)
    return dst


def bench_overhead(args, outdir):
    ko = build_ko(args.kernel)
    copies = [ko] + ([ab_copy(args.ab, outdir)] if args.ab else [])
    log = os.path.join(outdir, "overhead.log")
    probe_rounds = min(args.probe_rounds, args.rounds)
    say("overhead: one boot, %d rounds of %d s rows (%s), per-probe rows in %d of them" % (
        args.rounds, args.row_seconds, "/".join(WORKLOADS), probe_rounds))
    # a generous bound: up to 8 probes
    per_round = (12 if args.ab else 10) * len(WORKLOADS) * (args.row_seconds + 3) + 5 * args.settle + 5
    per_probe_round = 10 * (2 * (args.row_seconds + 3) + args.settle + 5)
    timeout = args.rounds * per_round + probe_rounds * per_probe_round + 180
    boot(args.kernel, overhead_script(args.row_seconds, args.rounds, probe_rounds, args.settle,
                                      "dcrace_ab.ko" if args.ab else None),
         log, timeout, copies=copies)
    text = open(log, errors="replace").read()
    m = re.search(r"^DCRACE-PROBES (.*)$", text, re.M)
    if not m:
        raise InfraError("no probe table in %s (did the first insmod fail?)" % log)
    probes = [p.split(":", 1) for p in m.group(1).split()]
    seq = {w: [] for w in WORKLOADS}
    calls = {}
    for m in re.finditer(r"^DCRACE-ROW (\S+) (\S+) (\d+) (\{.*\})$", text, re.M):
        res = json.loads(m.group(4))
        if m.group(2) in seq and res.get("elapsed_s") and res.get("syscalls"):
            seq[m.group(2)].append((m.group(1), int(m.group(3)), res["syscalls"] / res["elapsed_s"]))
            calls[(m.group(1), m.group(2), int(m.group(3)))] = res["syscalls"]
    want = {w: ["loaded", "loaded-s10", "loaded-s100"] + (["loaded-ab"] if args.ab else [])
            for w in WORKLOADS}
    if probe_rounds:
        want["stat"] += ["only-" + n for n, st in probes if st != "missing"]
        if any(n == "terminate_walk" and st != "missing" for n, st in probes):
            want["stat"] += ["only-end_return", "only-unlazy_call"]
    out = {"log": os.path.relpath(log, ROOT), "release": release(text), "row_seconds": args.row_seconds,
           "rounds": args.rounds, "probe_rounds": probe_rounds, "settle": args.settle,
           "probes": {n: st for n, st in probes}, "workloads": {}}
    for w in WORKLOADS:
        o = overhead_rows(seq[w])
        missing = [n for n in want[w]
                   if len(o["rows"].get(n, {}).get("per_s", [])) != (args.rounds if n.startswith("loaded") else probe_rounds)]
        if missing:
            raise InfraError("overhead rows missing in %s (%s workload): %s" % (log, w, ", ".join(missing)))
        out["workloads"][w] = o
    out["hits_per_call"] = hits_per_call(text, calls)
    out["forms"] = [m.groups() for m in re.finditer(r"^DCRACE-FORM form (\S+) (.*)$", text, re.M)]
    out["ab_label"] = getattr(args, "ab_label", None)
    return out


def hits_per_call(text, calls):
    """Each probe's hits per stat() and per open() in the loaded rows: the
    module's counts after each workload of a row (stat, then open, in one
    load) over that workload's calls; median over the rounds."""
    snap = {}
    for m in re.finditer(r"^DCRACE-HITS loaded (\S+) (\d+) (.*)$", text, re.M):
        f = m.group(3).split()
        name, n = ("site:" + f[1], f[2]) if f[0] == "site_hits" else (f[0], f[-1])
        try:
            snap.setdefault((m.group(1), int(m.group(2))), {})[name] = int(n)
        except ValueError:
            continue
    per = {}
    for (w, rnd), h in snap.items():
        prev = snap.get((WORKLOADS[WORKLOADS.index(w) - 1], rnd), {}) if WORKLOADS.index(w) else {}
        n = calls.get(("loaded", w, rnd))
        if not n:
            continue
        for name, v in h.items():
            per.setdefault(w, {}).setdefault(name, []).append((v - prev.get(name, 0)) / n)
    return {w: {k: round(statistics.median(v), 2) for k, v in d.items()} for w, d in per.items()}


# ---- cost in guest instructions (-icount) ------------------------------

def bench_icount_part(args, outdir):
    kernels = [k for k in args.icount_kernels.split(",") if k]
    for k in kernels:
        if k not in defs.KERNELS:
            raise InfraError("--icount-kernels: no kernel named %s (host-scripts/dcrace_harness/defs.sh)" % k)
    out = {"shift": args.shift, "calls": args.calls, "rounds": args.loop_rounds,
           "boots": args.icount_boots, "settle": args.settle, "kernels": {}}
    script = bench_icount.script(args.calls, args.loop_rounds, args.settle,
                                 "dcrace_ab.ko" if args.ab else None, probe_rows_on=args.probe_rounds > 0)
    # a generous bound: 40 rows of two loops of (rounds + 1) x calls, up
    # to 40,000 instructions a call, 4 host instructions a guest one at
    # 1 G/s, plus the boot
    timeout = int(40 * 2 * (args.loop_rounds + 1) * args.calls * 40000 * 4 / 1e9) + 600
    for k in kernels:
        copies = [build_ko(k), build_ko(k, ["--null"])]
        if args.ab:
            copies.append(ab_copy(args.ab, outdir))
        boots = []
        release_ = "?"
        for b in range(args.icount_boots):
            log = os.path.join(outdir, "icount-%s-%d.log" % (k.replace("/", "_"), b + 1))
            say("icount: %s boot %d/%d (log %s)" % (k, b + 1, args.icount_boots, log))
            boot(k, script, log, timeout, copies=copies, smp=1, icount=args.shift)
            text = open(log, errors="replace").read()
            p = bench_icount.parse(text, args.shift)
            if not any(n == "loaded" for n, _, _ in p["rows"]):
                raise InfraError("icount: no loaded row in %s" % log)
            boots.append(p)
            release_ = release(text)
        try:
            c = bench_icount.combine(boots)
        except ValueError as e:
            raise InfraError("icount: %s" % e)
        c["release"] = release_
        c["logs"] = [os.path.relpath(os.path.join(outdir, "icount-%s-%d.log" % (k.replace("/", "_"), b + 1)), ROOT)
                     for b in range(args.icount_boots)]
        out["kernels"][k] = c
        say("icount: %s: loaded stat %.3fx, open %.3fx; boots apart at most %.2f %%" % (
            k, c["rows"]["loaded"]["stat"]["ratio"], c["rows"]["loaded"]["open"]["ratio"],
            c["worst_apart_pct"]))
    return out


# ---- time to first false ENOENT ---------------------------------------

def first_kernel(args):
    """The unfixed kernel of --kernel's line: time to first runs there."""
    k = defs.KERNELS.get(args.kernel)
    return defs.line_name(k.line if k else defs.LINES[0], "unfixed")


def bench_first(args, outdir):
    kinds = [("natural, no module", 0, False, 60.0),
             ("natural, dcrace.ko loaded", 0, True, 30.0),
             ("injected 20 us, dcrace.ko", 20, True, 30.0)]
    out = {}
    for label, inject, module, dur in kinds:
        times, missed = [], 0
        for b in range(args.boots):
            log = os.path.join(outdir, "first-%s-%d.log" % (re.sub(r"\W+", "_", label), b + 1))
            spec = RunSpec(inject_us=inject, duration=dur, stop_first=True, module=module)
            r = run_once(spec, first_kernel(args), log, "%s boot %d/%d" % (label, b + 1, args.boots))
            f = r["result"].get("first_false_enoent_s")
            if f is None:
                missed += 1
            else:
                times.append(f)
        out[label] = {"boots": args.boots, "reproduced": len(times), "cap_s": dur,
                      "min_s": round(min(times), 3) if times else None,
                      "median_s": round(statistics.median(times), 3) if times else None,
                      "max_s": round(max(times), 3) if times else None,
                      "all_s": [round(t, 3) for t in times]}
    return out


# ---- pipeline ------------------------------------------------------------

def timed(cmd, env=None):
    # a clean sub-make: "make bench ARGS=..." must not pass its ARGS on
    env = {k: v for k, v in (env or os.environ).items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    t0 = time.time()
    rc, _, err = Child(cmd + ["ARGS="], cwd=ROOT, env=env).run(keep_stdout=False)
    dt = time.time() - t0
    if rc != 0:
        raise InfraError("%s failed (exit %d): %s" % (" ".join(cmd), rc, err.strip()[-300:]))
    return round(dt, 1)


def bench_pipeline(args, previous):
    out = {"warm": {}, "cold": None}
    say("pipeline: warm make kernels")
    out["warm"]["make kernels"] = timed(["make", "kernels"])
    say("pipeline: warm make compare")
    out["warm"]["make compare"] = timed(["make", "compare"])
    if args.cold:
        cache = tempfile.mkdtemp(prefix="dcrace-cold-")
        env = dict(os.environ, DCRACE_CACHE=cache)
        try:
            say("pipeline: cold make kernels (empty cache %s)" % cache)
            k = timed(["make", "kernels"], env)
            say("pipeline: make compare with cold initramfs and module")
            c = timed(["make", "compare"], env)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        out["cold"] = {"make kernels": k, "make compare": round(k + c, 1),
                       "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                       "how": "empty DCRACE_CACHE: make kernels, then make compare; "
                              "cold make compare = the sum (it builds the kernels first)"}
    elif previous and (previous.get("pipeline") or {}).get("cold"):
        out["cold"] = dict(previous["pipeline"]["cold"])
        out["cold"]["carried_over"] = True
    return out


# ---- report --------------------------------------------------------------

def release(text):
    m = re.search(r"^DCRACE-BOOTED (\S+)", text, re.M)
    return m.group(1) if m else "?"


def versions():
    q = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True,
                       text=True).stdout.splitlines()
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            cpu = m.group(1) if m else "?"
    except OSError:
        pass
    return {"qemu": q[0] if q else "?", "host_cpu": cpu, "host_cpus": os.cpu_count(),
            "host_kernel": platform.release(), "python": platform.python_version()}


def fmt(v, unit=""):
    return "-" if v is None else ("%s%s" % (v, unit))


def overhead_md(o):
    """The "Probe overhead" section of the report."""
    L = ["## Probe overhead in TCG wall time (throughput; drifts with the host)", "",
         "One boot; each workload (2 walker threads, no pruner: `stat` = stat() of existing files, "
         "`open` = open() + close() of them, `dcrace-workload --mode stat|open`) for %d s per row. "
         "Rows are interleaved: every module row has a baseline row (no module) of the same workload "
         "right before and right after it, and its slowdown is the mean of those two baselines' rates "
         "/ its own rate, so that the drift of a shared machine cancels. *loaded* (all default probes) "
         "is measured in %d round(s) per workload, each probe armed on its own in %d round(s) (`stat` only). "
         "Each module row starts %d s after its `insmod` (the kprobe optimizer turns int3 probes into "
         "jumps after a delay; the rows measure that steady state). Injection off in every row." % (
             o["row_seconds"], o["rounds"], o["probe_rounds"], o["settle"]), ""]
    for w, wo in o["workloads"].items():
        b = wo["base"]
        L += ["### `%s` workload" % w, "",
              "| row | %s()/s per round | slowdown min | median | max |" % w, "|---|---|---|---|---|"]
        for n, r in wo["rows"].items():
            d = ROW_NAMES.get(n) or (
                n.replace("only-", "only ") + " armed" if n.startswith("only-") else n)
            sd = r["slowdown"]
            L.append("| %s | %s | %.2fx | **%.2fx** | %.2fx |" % (
                d, " / ".join(str(x) for x in r["per_s"]), sd["min"], sd["median"], sd["max"]))
        dr = b.get("adjacent_drift_pct")
        L += ["", "Baseline: %d rows, %s to %s %s()/s%s." % (
            b["rows"], min(b["per_s"]), max(b["per_s"]), w,
            "; two adjacent baseline rows differ by %s%% (median), %s%% (max)" % (dr["median"], dr["max"])
            if dr else ""), ""]
    L += ["The whole detector (*loaded*) costs %s (median over the rounds)." % ", ".join(
              "%.2fx on `%s`" % (wo["rows"]["loaded"]["slowdown"]["median"], w)
              for w, wo in o["workloads"].items()), ""]
    ab = [(w, wo["rows"]["loaded"]["slowdown_each_round"], wo["rows"]["loaded-ab"]["slowdown_each_round"])
          for w, wo in o["workloads"].items() if "loaded-ab" in wo["rows"]]
    if ab:
        L += ["Against the `--ab` module (%s), same boot: *loaded*'s slowdown over the `--ab` "
              "module's, round by round, median: %s." % (
                  o.get("ab_label") or "another build", "; ".join(
                      "`%s` %.2f" % (w, statistics.median(a / b for a, b in zip(new, old)))
                      for w, new, old in ab)), ""]
    h = o.get("hits_per_call")
    if h:
        names = sorted({k for d in h.values() for k in d})
        L += ["Hits per call of each armed probe in the *loaded* rows (all tasks' hits over the "
              "workload's calls, median over the rounds; `site:` rows are the probes at the sites "
              "the layout found, summed per kind):", "",
              "| probe | " + " | ".join("per `%s()`" % w for w in h) + " |",
              "|---|" + "---|" * len(h)]
        for k in names:
            L.append("| `%s` | %s |" % (k, " | ".join("%.2f" % h[w].get(k, 0) for w in h)))
        L.append("")
    if o.get("forms"):
        L += ["The form of each armed kprobe (`probes`, `form` lines, after the settle time), "
              "the int3 ones with why:", ""]
        L += ["- `%s` %s" % (site, form) for site, form in o["forms"]] + [""]
    rows = [n[len("only-"):] for w in o["workloads"].values() for n in w["rows"] if n.startswith("only-")]
    notes = [(n, PROBE_NOTES[n]) for n in dict.fromkeys(rows) if n in PROBE_NOTES]
    if notes:
        L += ["What each probe is, and how often a `stat()` of `/mnt/dX/fY` (three components) meets it "
              "(docs/design.md, \"Probes\" and \"Cost\"):", ""]
        L += ["- `%s`: %s" % nt for nt in notes] + [""]
    return L


ROW_NAMES = {
    "loaded": "dcrace.ko loaded (all default probes)",
    "loaded-s10": "loaded, `sample=10` (one step or walk end in 10 judged)",
    "loaded-s100": "loaded, `sample=100`",
    "loaded-ab": "the `--ab` module loaded",
}

# The "only X armed" rows, explained in the report (keyed by the names in
# the module's "probes" table).
PROBE_NOTES = {
    "walk_component": "kprobe at `walk_component()`'s entry, with the return sites it learns (int3 traps in "
                      "`link_path_walk()`): the fallback way to see a step's end. Armed alone it is that "
                      "fallback; in the loaded module it is unregistered after the load's warm-up (stack "
                      "mode) and the steps end at the `step_into` exits",
    "do_lookup": "`lookup_fast()`'s entry, a hit counter, armed only with `extra_probes=1`",
    "rcu_lookup": "after `lookup_fast()`'s call of `__d_lookup_rcu()` (optimized): the sample; in stack mode "
                  "it also opens the step. Three per `stat()`",
    "step_into": "the exits: the `ret`s of `walk_component()` and `step_into()`, each probed on the pops "
                 "before it (optimized): a step's end, its result and whether it reached `step_into()`. "
                 "Three per `stat()`",
    "dentry_kill": "`__dentry_kill()`'s entry: the kill record. None in these rows (no pruner)",
    "terminate_walk": "`terminate_walk()`'s entry (optimized): where `open()`'s last step is read and "
                      "an RCU-mode end snapshot; a walk that left RCU mode only releases its slot. One "
                      "per `stat()`; armed alone here (the walk ends' sites off)",
    "end_return": "with `terminate_walk`: the probes after each call of `path_lookupat()` and "
                  "`path_parentat()`, where an RCU-mode end is judged; they return at once while no "
                  "end is pending (a successful walk). One per `stat()`",
    "unlazy_call": "with `terminate_walk`: the calls of `try_to_unlazy()` in `link_path_walk()` (int3: "
                   "a call instruction), met only before a hard error. None per `stat()` of an "
                   "existing file",
}


# How the benchmark's guests ran: "multi" for the runs made before
# run-guest's --tcg auto (every boot multi-threaded), "auto" since.
TCG_TEXT = {
    "multi": "`-accel tcg,thread=multi`, 2 vCPUs, 512M",
    "auto": "2 vCPUs, 512M; the overhead boot loads dcrace.ko once per row, so run-guest's "
            "`--tcg auto` runs it single-threaded, `-accel tcg,thread=single`; the "
            "time-to-first boots load it once: `thread=multi`",
}


PARTS = ["icount", "overhead", "first", "pipeline"]
PART_TEXT = {"icount": "the instruction bench", "overhead": "the TCG overhead rows",
             "first": "the time to the first false ENOENT", "pipeline": "the pipeline's wall times"}


def markdown(doc):
    o = doc["overhead"]
    L = ["# dcrace benchmarks", "",
         "Generated by `%s` on %s. Do not edit: rerun it." % (doc["command"], doc["date"]), ""]
    if doc.get("measured"):
        by = {}
        for part in PARTS:
            m = doc["measured"].get(part)
            if m:
                by.setdefault((m["command"], m["date"]), []).append(PART_TEXT[part])
        L += ["Measured in %d runs: %s." % (len(by), "; ".join(
            "%s by `%s` on %s" % (", ".join(v), c, d) for (c, d), v in by.items())), ""]
    L += ["%s; host: %s, %d CPUs." % (doc["versions"]["qemu"], doc["versions"]["host_cpu"],
                                      doc["versions"]["host_cpus"]), ""]
    if doc.get("icount"):
        L += bench_icount.markdown(doc["icount"])
    ov = overhead_md(o)
    L += ov[:2] + ["Guest kernel %s (the unfixed tree) under QEMU TCG (%s)." % (
        o["release"], TCG_TEXT[doc.get("tcg", "multi")]), ""] + ov[2:]
    f = doc["first"]
    L += ["## Time to the first false ENOENT (unfixed kernel)", "",
          "%d boots per row; seconds of workload time (2 walkers, drop_caches pruner) until the first user-visible false ENOENT." % (
              list(f.values())[0]["boots"]), "",
          "| how | reproduced | min | median | max |", "|---|---|---|---|---|"]
    for k, v in f.items():
        L.append("| %s | %d/%d (cap %g s) | %s | %s | %s |" % (
            k, v["reproduced"], v["boots"], v["cap_s"], fmt(v["min_s"], " s"),
            fmt(v["median_s"], " s"), fmt(v["max_s"], " s")))
    p = doc["pipeline"]
    L += ["", "## Pipeline wall time", "", "| command | warm | cold (empty cache) |", "|---|---|---|"]
    for k in ("make kernels", "make compare"):
        c = (p["cold"] or {}).get(k)
        L.append("| `%s` | %s s | %s |" % (k, p["warm"][k], fmt(c, " s")))
    if p["cold"]:
        L += ["", "Cold: %s, measured %s%s." % (
            p["cold"]["how"], p["cold"]["measured"],
            " (carried over from the previous run; `bench --cold` measures again)"
            if p["cold"].get("carried_over") else "")]
    else:
        L += ["", "Cold times not measured yet: `host-scripts/bench --cold`."]
    cold_s = (p["cold"] or {}).get("make compare") if not (p["cold"] or {}).get("carried_over") else None
    L += ["", "This run took %.0f s%s." % (
        doc["wall_s"], " (%.0f s of it the cold pipeline)" % cold_s if cold_s else ""),
        "", "Logs: `%s` (in the checkout that ran it)." % doc["logs"], ""]
    return "\n".join(L)


def build_parser():
    p = A.Parser(prog="bench", description=__doc__)
    unfixed = defs.line_name(os.environ.get("DCRACE_LINE") or defs.LINES[0], "unfixed")
    p.add_argument("--kernel", default=unfixed, help="kernel for the overhead boot (default %s; "
                   "DCRACE_LINE=6.12: 6.12/unfixed); time to first runs on its line's unfixed" % unfixed)
    p.add_argument("--rounds", type=A.positive_int, default=5,
                   help="overhead rounds in the boot: loaded rows per workload (default 5)")
    p.add_argument("--probe-rounds", type=int, default=3, choices=range(0, 101), metavar="N",
                   help="rounds that also measure each probe armed on its own, stat workload "
                        "(default 3; 0: none)")
    p.add_argument("--row-seconds", type=A.positive_int, default=3, help="seconds per overhead row (default 3)")
    p.add_argument("--settle", type=int, default=2, choices=range(0, 61), metavar="S",
                   help="seconds between insmod and the row, for kprobe optimization (default 2)")
    p.add_argument("--ab", metavar="KO", help="overhead: also a second dcrace.ko (another build, e.g. the "
                   "main branch's, for the same kernel), its rows interleaved in the same boot (loaded-ab)")
    p.add_argument("--ab-label", default=None, help="what the --ab module is, for the report (e.g. "
                   "\"main at 46f86a0\")")
    p.add_argument("--boots", type=A.positive_int, default=10, help="boots per time-to-first row (default 10)")
    p.add_argument("--cold", action="store_true", help="also time make kernels/compare from an empty cache")
    p.add_argument("--only", choices=["icount", "overhead", "first", "pipeline"], action="append",
                   help="run only these parts (repeatable); the docs are written only for a full run")
    p.add_argument("--icount", action="store_true",
                   help="the instruction bench only (--only icount): QEMU -icount, one vCPU")
    p.add_argument("--icount-kernels", default="unfixed,6.12/unfixed,debian,debian-6.12", metavar="K,K",
                   help="kernels of the instruction bench (default unfixed,6.12/unfixed,debian,debian-6.12: "
                        "both lines, ours and Debian's stock images)")
    p.add_argument("--icount-boots", type=A.positive_int, default=2,
                   help="boots per kernel of the instruction bench (default 2)")
    p.add_argument("--calls", type=A.positive_int, default=10000,
                   help="instruction bench: calls per timed round (default 10000)")
    p.add_argument("--loop-rounds", type=A.positive_int, default=3,
                   help="instruction bench: timed rounds per row, after a warm-up (default 3)")
    p.add_argument("--shift", type=int, default=4, choices=range(0, 11), metavar="S",
                   help="instruction bench: -icount shift (default 4: 16 ns an instruction)")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks"),
                   help="output path without extension (default docs/benchmarks: .md and .json)")
    p.add_argument("--update", action="store_true",
                   help="with --only/--icount: write the docs with the parts run replaced and the others "
                        "carried over from OUT.json (each part says which run measured it)")
    p.add_argument("--render", action="store_true",
                   help="no run: print the markdown that OUT.json gives (to check OUT.md against it)")
    return p


def main(argv):
    catch_signals()
    try:
        return bench(build_parser().parse_args(argv), argv)
    except Interrupted as e:
        say("interrupted (%s)" % e)
        return defs.EX_INTERRUPTED


def bench(args, argv):
    if args.render:
        try:
            with open(args.out + ".json") as f:
                sys.stdout.write(markdown(json.load(f)))
        except (OSError, ValueError, KeyError) as e:
            sys.stderr.write("bench: cannot render %s.json: %s\n" % (args.out, e))
            return defs.EX_HARNESS_INFRA
        return 0
    if args.icount:
        args.only = sorted(set((args.only or []) + ["icount"]))
    parts = args.only or list(PARTS)
    previous = None
    try:
        with open(args.out + ".json") as f:
            previous = json.load(f)
    except (OSError, ValueError):
        pass
    if args.update and not args.only:
        sys.stderr.write("bench: --update needs --only or --icount (a full run rewrites everything)\n")
        return defs.EX_USAGE
    if args.update and not all(previous and p in previous for p in PARTS if p not in parts):
        sys.stderr.write("bench: --update: %s.json lacks a part to carry over (run a full make bench)\n"
                         % args.out)
        return defs.EX_HARNESS_INFRA
    outdir = results_dir(None, "bench")
    say("logs in %s" % outdir)
    t0 = time.time()
    doc = {"command": "host-scripts/bench " + " ".join(argv) if argv else "make bench",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "logs": os.path.relpath(outdir, ROOT),
           "versions": versions(), "tcg": "auto"}
    try:
        if "icount" in parts:
            doc["icount"] = bench_icount_part(args, outdir)
        if "overhead" in parts:
            doc["overhead"] = bench_overhead(args, outdir)
            say("overhead: loaded %s" % ", ".join(
                "%s %.2fx (min %.2fx, max %.2fx)" % (w, o["rows"]["loaded"]["slowdown"]["median"],
                                                     o["rows"]["loaded"]["slowdown"]["min"],
                                                     o["rows"]["loaded"]["slowdown"]["max"])
                for w, o in doc["overhead"]["workloads"].items()))
            if args.ab:
                say("overhead: --ab module loaded %s" % ", ".join(
                    "%s %.2fx" % (w, o["rows"]["loaded-ab"]["slowdown"]["median"])
                    for w, o in doc["overhead"]["workloads"].items()))
        if "first" in parts:
            doc["first"] = bench_first(args, outdir)
        if "pipeline" in parts:
            doc["pipeline"] = bench_pipeline(args, previous)
    except InfraError as e:
        say("infrastructure error: %s" % e)
        return defs.EX_HARNESS_INFRA
    doc["wall_s"] = took = round(time.time() - t0, 1)
    print(json.dumps(doc, indent=1))
    if args.only and not args.update:
        say("partial run (--only): %s not rewritten" % args.out)
        return 0
    if args.update:
        measured = previous.get("measured") or {
            p: {"command": previous["command"], "date": previous["date"], "logs": previous["logs"]}
            for p in PARTS if p in previous}
        new = dict(previous)
        for p in parts:
            new[p] = doc[p]
            measured[p] = {"command": doc["command"], "date": doc["date"], "logs": doc["logs"]}
        new["measured"] = measured
        new["command"], new["date"] = doc["command"], doc["date"]
        doc = new
    with open(args.out + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write(markdown(doc))
    say("wrote %s.md and %s.json in %.0f s" % (args.out, args.out, took))
    return 0

