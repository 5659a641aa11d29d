"""Benchmarks: what dcrace.ko costs, how fast the race shows, how long the
pipeline takes. Writes docs/benchmarks.md (tables, the command, kernel and
QEMU versions) and docs/benchmarks.json.

  overhead   one boot: stat-workload throughput (no pruner) before insmod,
             after insmod (injection off), after rmmod, and with each probe
             armed on its own; ratios against the same boot's baseline, so
             the noise of a shared machine cancels. Repeated --rounds times
             in that boot; the median ratio is reported.
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
from . import defs
from .logs import InfraError
from .runner import (ROOT, Child, Interrupted, catch_signals, last_line, results_dir,
                     run_guest_cmd, run_once, tool)
from .spec import RunSpec

PROBES = ["walk_component", "do_lookup", "rcu_lookup", "step_into", "dentry_kill"]
ALL_MASK = (1 << len(PROBES)) - 1


def say(msg):
    sys.stderr.write("bench: %s\n" % msg)
    sys.stderr.flush()


def build_ko(kernel):
    rc, out, err = Child([tool("build-module"), "--kernel", kernel]).run()
    if rc != 0:
        raise InfraError("build-module failed: %s" % err.strip()[-300:])
    return out.strip()


def boot(kernel, script, log, timeout, copies=()):
    rc, out, err = Child(run_guest_cmd(kernel, log, script, timeout, copies=copies)).run()
    if rc != 0:
        raise InfraError("guest failed (exit %d): %s" % (rc, last_line(err) or "?"))
    return out


# ---- overhead ----------------------------------------------------------

def overhead_script(rows, secs, rounds, settle):
    wl = "dcrace-workload --quiet --seed 1 --threads 2 --mode stat"
    lines = [
        wl + " --setup-only >/dev/null || exit 1",
        "row() { %s --no-setup --pruner none --duration %s | sed -n \"s/^DCRACE-RESULT /DCRACE-ROW $1 /p\"; }" % (wl, secs),
        "ko=/dcrace/copy/dcrace.ko",
    ]
    for r in range(rounds):
        for name, params in rows:
            if params is None:
                lines.append("row %s-r%d" % (name, r))
            else:
                lines.append("insmod $ko %s || exit 1" % params)
                # let the kprobe optimizer turn the int3s into jumps first:
                # the steady state is what a long run pays
                lines.append("sleep %d" % settle)
                lines.append("row %s-r%d" % (name, r))
                lines.append("rmmod dcrace || exit 1")
    return "\n".join(lines)


def bench_overhead(args, outdir):
    # (row name, insmod params or None for no module)
    rows = [("before", None), ("loaded", "")]
    rows.append(("after", None))
    for i, p in enumerate(PROBES):
        extra = " extra_probes=1" if p == "do_lookup" else ""
        rows.append(("only-" + p, "skip_probes=%d%s" % (ALL_MASK & ~(1 << i), extra)))
    rows.append(("only-walk+rcu", "skip_probes=%d" % (ALL_MASK & ~0b101)))
    ko = build_ko(args.kernel)
    log = os.path.join(outdir, "overhead.log")
    say("overhead: one boot, %d rounds of %d rows x %d s" % (args.rounds, len(rows), args.row_seconds))
    timeout = args.rounds * len(rows) * (args.row_seconds + args.settle + 5) + 120
    boot(args.kernel, overhead_script(rows, args.row_seconds, args.rounds, args.settle), log,
         timeout, copies=[ko])
    text = open(log, errors="replace").read()
    rates = {}
    for m in re.finditer(r"^DCRACE-ROW (\S+)-r(\d+) (\{.*\})$", text, re.M):
        res = json.loads(m.group(3))
        rates.setdefault(m.group(1), {})[int(m.group(2))] = res["syscalls"] / res["elapsed_s"]
    want = [n for n, _ in rows]
    missing = [n for n in want if len(rates.get(n, {})) != args.rounds]
    if missing:
        raise InfraError("overhead rows missing in %s: %s" % (log, ", ".join(missing)))
    out = {"rows": {}, "log": log, "release": release(text), "row_seconds": args.row_seconds,
           "rounds": args.rounds, "settle": args.settle}
    for n in want:
        ratios = []
        for r in range(args.rounds):
            base = (rates["before"][r] + rates["after"][r]) / 2
            ratios.append(base / rates[n][r])
        out["rows"][n] = {"stats_per_s": [round(rates[n][r]) for r in range(args.rounds)],
                          "slowdown": round(statistics.median(ratios), 2),
                          "slowdown_each_round": [round(x, 2) for x in ratios]}
    return out


# ---- time to first false ENOENT ---------------------------------------

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
            r = run_once(spec, "unfixed", log, "%s boot %d/%d" % (label, b + 1, args.boots))
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


def markdown(doc):
    o = doc["overhead"]
    L = ["# dcrace benchmarks", "",
         "Generated by `%s` on %s. Do not edit: rerun it." % (doc["command"], doc["date"]), "",
         "Guest kernel %s (the unfixed tree) under QEMU TCG (`-accel tcg,thread=multi`, 2 vCPUs, 512M); %s; host: %s, %d CPUs." % (
             o["release"], doc["versions"]["qemu"], doc["versions"]["host_cpu"],
             doc["versions"]["host_cpus"]), "",
         "## Probe overhead", "",
         "One boot; the `stat` workload (2 walker threads, no pruner) for %d s per row, %d rounds, "
         "each module row starting %d s after its `insmod` (the kprobe optimizer turns int3 probes into "
         "jumps after a delay; the rows measure that steady state). "
         "Slowdown = the round's baseline rate (mean of *before* and *after*) / the row's rate; "
         "the median over the rounds. Injection off in every row." % (
             o["row_seconds"], o["rounds"], o["settle"]), "",
         "| row | stat()/s per round | slowdown |", "|---|---|---|"]
    desc = {"before": "before insmod", "loaded": "dcrace.ko loaded (all default probes)",
            "after": "after rmmod"}
    for n, r in o["rows"].items():
        d = desc.get(n, n.replace("only-", "only ") + " armed" if n.startswith("only-") else n)
        L.append("| %s | %s | %.2fx |" % (d, " / ".join(str(x) for x in r["stats_per_s"]), r["slowdown"]))
    L += ["", "The whole detector (*loaded*) costs %.2fx; the issue's target is at most 2.0x." % (
        o["rows"]["loaded"]["slowdown"]), ""]
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
    p.add_argument("--kernel", default="unfixed", help="kernel for the overhead boot (default unfixed)")
    p.add_argument("--rounds", type=A.positive_int, default=3, help="overhead rounds in the boot (default 3)")
    p.add_argument("--row-seconds", type=A.positive_int, default=4, help="seconds per overhead row (default 4)")
    p.add_argument("--settle", type=int, default=2, choices=range(0, 61), metavar="S",
                   help="seconds between insmod and the row, for kprobe optimization (default 2)")
    p.add_argument("--boots", type=A.positive_int, default=10, help="boots per time-to-first row (default 10)")
    p.add_argument("--cold", action="store_true", help="also time make kernels/compare from an empty cache")
    p.add_argument("--only", choices=["overhead", "first", "pipeline"], action="append",
                   help="run only these parts (repeatable); the docs are written only for a full run")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks"),
                   help="output path without extension (default docs/benchmarks: .md and .json)")
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
    parts = args.only or ["overhead", "first", "pipeline"]
    previous = None
    try:
        with open(args.out + ".json") as f:
            previous = json.load(f)
    except (OSError, ValueError):
        pass
    outdir = results_dir(None, "bench")
    say("logs in %s" % outdir)
    t0 = time.time()
    doc = {"command": "host-scripts/bench " + " ".join(argv) if argv else "make bench",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "logs": os.path.relpath(outdir, ROOT),
           "versions": versions()}
    try:
        if "overhead" in parts:
            doc["overhead"] = bench_overhead(args, outdir)
            say("overhead: loaded %.2fx" % doc["overhead"]["rows"]["loaded"]["slowdown"])
        if "first" in parts:
            doc["first"] = bench_first(args, outdir)
        if "pipeline" in parts:
            doc["pipeline"] = bench_pipeline(args, previous)
    except InfraError as e:
        say("infrastructure error: %s" % e)
        return defs.EX_HARNESS_INFRA
    doc["wall_s"] = round(time.time() - t0, 1)
    print(json.dumps(doc, indent=1))
    if args.only:
        say("partial run (--only): %s not rewritten" % args.out)
        return 0
    with open(args.out + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write(markdown(doc))
    say("wrote %s.md and %s.json in %.0f s" % (args.out, args.out, doc["wall_s"]))
    return 0

