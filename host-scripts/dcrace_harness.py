"""dcrace host harness: run the workload in guests, parse what they print,
and judge kernels. Used by host-scripts/compare and host-scripts/check-kernel.

A run's serial log holds, between markers printed by the guest command:
  DCRACE-RESULT {json}               the workload's one result line
  DCRACE-STATS-BEGIN ... -END        dcrace.ko's debugfs "stats"
  DCRACE-PROBES-BEGIN ... -END       dcrace.ko's debugfs "probes"
  DCRACE-EVENTS-BEGIN ... -END       dcrace.ko's debugfs "events"
  DCRACE-EXIT N                      the guest command's exit status
Missing or unparsable pieces are infrastructure errors, never "no race".
"""

import json
import os
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HS = os.path.join(ROOT, "host-scripts")

# compare's exit codes
EXIT_FIX_HOLDS = 0
EXIT_FIX_FAILS = 1
EXIT_INCONCLUSIVE = 2
EXIT_INFRA = 3
EXIT_USAGE = 64

# run-guest's own codes
RG_USAGE = 2
RG_TIMEOUT = 124
RG_INFRA = 125

DEBUGFS = "/sys/kernel/debug/dcrace"


def default_mem(mode):
    """Guest memory: cp copies run short of it, as in Hugh's reproduction."""
    return "192M" if mode == "cp" else "512M"


class InfraError(Exception):
    """The run produced no trustworthy data."""


def _section(text, name):
    m = re.search(r"^DCRACE-%s-BEGIN\n(.*?)^DCRACE-%s-END$" % (name, name),
                  text, re.S | re.M)
    return m.group(1) if m else None


def parse_stats(block):
    stats = {}
    for line in block.splitlines():
        m = re.match(r"^([a-z_]+): (-?\d+)$", line)
        if m:
            stats[m.group(1)] = int(m.group(2))
    return stats


def parse_ticks(text):
    """Per-second module counts from DCRACE-TICK lines: a list of
    {"t": seconds since the first tick, "false_enoent": n, "caught": n}
    holding each second's increase."""
    ticks = []
    for m in re.finditer(r"^DCRACE-TICK ([0-9.]+) (.*)$", text, re.M):
        kv = dict(re.findall(r"([a-z_]+): (\d+)", m.group(2)))
        if "false_enoent" in kv and "caught" in kv:
            ticks.append((float(m.group(1)), int(kv["false_enoent"]),
                          int(kv["caught"]) + int(kv.get("caught_late", 0))))
    out = []
    for (t0, f0, c0), (t1, f1, c1) in zip(ticks, ticks[1:]):
        out.append({"t": round(t1 - ticks[0][0], 2), "false_enoent": max(0, f1 - f0),
                    "caught": max(0, c1 - c0)})
    return out


def parse_probes(block):
    probes = []
    for line in block.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        if len(f) == 5:
            probes.append({"name": f[0], "symbol": f[1], "kind": f[2],
                           "state": f[3], "hits": int(f[4]) if f[4].isdigit() else None})
    return probes


REQUIRED_RESULT_KEYS = ("mode", "syscalls", "false_enoent", "per_second",
                        "first_false_enoent_s", "elapsed_s")


def parse_log(path, want_module=True):
    """Parse one run's serial log into a dict; raise InfraError."""
    try:
        with open(path, errors="replace") as f:
            text = f.read().replace("\r", "")
    except OSError as e:
        raise InfraError("cannot read log %s: %s" % (path, e))
    if "DCRACE-BOOTED" not in text:
        raise InfraError("guest never reached /init (log %s)" % path)
    if "Kernel panic" in text:
        raise InfraError("guest kernel panicked (log %s)" % path)
    lines = [l for l in text.splitlines() if l.startswith("DCRACE-RESULT ")]
    if not lines:
        raise InfraError("the workload printed no result line (log %s)" % path)
    try:
        res = json.loads(lines[-1][len("DCRACE-RESULT "):])
    except ValueError as e:
        raise InfraError("unparsable workload result (%s) in %s" % (e, path))
    if not isinstance(res, dict) or any(k not in res for k in REQUIRED_RESULT_KEYS):
        raise InfraError("workload result lacks fields in %s" % path)
    for k in ("syscalls", "false_enoent"):
        if not isinstance(res[k], int) or res[k] < 0:
            raise InfraError("workload result field %s is not a count in %s" % (k, path))
    m = re.findall(r"^DCRACE-EXIT (\d+)$", text, re.M)
    if not m:
        raise InfraError("guest ended without an exit status: truncated log? (%s)" % path)
    out = {"log": path, "result": res, "exit": int(m[-1])}
    if want_module:
        sb = _section(text, "STATS")
        if sb is None:
            raise InfraError("no dcrace stats in %s" % path)
        st = parse_stats(sb)
        for k in ("false_enoent", "caught", "null_inode_seen", "events"):
            if k not in st:
                raise InfraError("dcrace stats lack %s in %s" % (k, path))
        out["stats"] = st
        out["module_per_second"] = parse_ticks(text)
        pb = _section(text, "PROBES")
        out["probes"] = parse_probes(pb) if pb else []
        out["events"] = _section(text, "EVENTS") or ""
    dm = _section(text, "DMESG") or ""
    out["splats"] = [l for l in dm.splitlines()
                     if re.search(r"BUG:|WARNING:|Oops|general protection|KASAN", l)
                     and "BUG: dcrace: false ENOENT in rcu-walk" not in l]
    return out


def summarize(runs):
    """Aggregate parsed runs of one kernel."""
    s = {"runs": len(runs), "syscalls": 0, "user_false_enoent": 0,
         "module_false_enoent": 0, "module_caught": 0, "module_caught_late": 0,
         "module_races": 0,
         "agree": True, "first_s": None, "runs_reproduced": 0,
         "splats": 0, "has_module": all("stats" in r for r in runs)}
    for r in runs:
        res = r["result"]
        s["syscalls"] += res["syscalls"]
        s["user_false_enoent"] += res["false_enoent"]
        if res["false_enoent"] > 0:
            s["runs_reproduced"] += 1
        f = res.get("first_false_enoent_s")
        if f is not None and (s["first_s"] is None or f < s["first_s"]):
            s["first_s"] = f
        s["splats"] += len(r.get("splats", []))
        if "stats" in r:
            st = r["stats"]
            s["module_false_enoent"] += st["false_enoent"]
            s["module_caught"] += st["caught"]
            s["module_caught_late"] += st.get("caught_late", 0)
            s["module_races"] += (st["false_enoent"] + st["caught"] + st.get("caught_late", 0)
                                  + st.get("unexpected", 0))
            if st["false_enoent"] != res["false_enoent"]:
                s["agree"] = False
    return s


def kernel_bad(s):
    """A kernel is bad (affected) when anything saw a false ENOENT."""
    return s["user_false_enoent"] > 0 or s["module_false_enoent"] > 0


def verdict(unfixed, fixed):
    """(exit code, one-line verdict) for an unfixed/fixed pair of summaries."""
    if fixed is not None and kernel_bad(fixed):
        return EXIT_FIX_FAILS, "FIX DOES NOT HOLD: %d false ENOENT on the fixed kernel" % max(
            fixed["user_false_enoent"], fixed["module_false_enoent"])
    if unfixed is not None and not kernel_bad(unfixed):
        return EXIT_INCONCLUSIVE, "INCONCLUSIVE: the unfixed kernel did not reproduce the race"
    return EXIT_FIX_HOLDS, "fix holds: unfixed reproduces (%d false ENOENT), fixed is clean" % (
        unfixed["user_false_enoent"] if unfixed else 0)


def workload_cmd(args):
    w = ["dcrace-workload", "--quiet", "--duration", str(args.duration),
         "--seed", str(args.seed), "--threads", str(args.threads),
         "--mode", args.mode]
    if args.pruner:
        w += ["--pruner", args.pruner]
    if getattr(args, "stop_first", False):
        w.append("--stop-at-first")
    return " ".join(shlex.quote(x) for x in w)


def guest_script(args, module=True):
    parts = []
    if module:
        d = DEBUGFS
        if args.inject_us:
            # comm first: without it dcrace.ko refuses delays above 100 us
            parts += ["echo dcr-walk > %s/inject/comm" % d,
                      "echo %d > %s/inject/delay_us" % (args.inject_us, d),
                      "echo %d > %s/inject/probability" % (args.probability, d)]
        # The tree first, so that the ticks below start with the timed run.
        parts += [workload_cmd(args) + " --setup-only >/dev/null || exit 1"]
        parts += ["echo 1 > %s/reset" % d]
        # Once a second: the module's running counts, for per-second
        # timelines (compare --plot). Stopped before the final stats.
        parts += ["tick() { echo \"DCRACE-TICK $(cut -d' ' -f1 /proc/uptime)"
                  " $(grep -E '^(false_enoent|caught|caught_late):' %s/stats | tr '\\n' ' ')\"; }" % d,
                  "(while :; do tick; sleep 1; done) & tickpid=$!"]
    parts.append(workload_cmd(args) + (" --no-setup" if module else "") + "; wrc=$?")
    if module:
        d = DEBUGFS
        parts += ["kill $tickpid; wait $tickpid 2>/dev/null", "tick"]
        parts += ["echo DCRACE-STATS-BEGIN; cat %s/stats; echo DCRACE-STATS-END" % d,
                  "echo DCRACE-PROBES-BEGIN; cat %s/probes; echo DCRACE-PROBES-END" % d,
                  "echo DCRACE-EVENTS-BEGIN; head -n 200 %s/events; echo DCRACE-EVENTS-END" % d]
    parts.append("exit $wrc")
    return "\n".join(parts)


def progress(msg):
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + msg)
        sys.stderr.flush()


def progress_done(msg):
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + msg + "\n")
    else:
        sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def run_once(args, kernel, log, label, module=True):
    """Boot KERNEL, run the workload, return the parsed log."""
    cmd = [os.path.join(HS, "run-guest"), "-q", "--kernel", kernel,
           "--smp", str(args.smp), "--mem", args.mem,
           "--timeout", str(args.timeout), "--accel", args.accel,
           "--log", log, "--exec", guest_script(args, module)]
    if module:
        cmd.insert(2, "--module")
        if os.environ.get("DCRACE_KO"):
            cmd[3:3] = ["--ko", os.environ["DCRACE_KO"]]
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    while p.poll() is None:
        el = time.time() - t0
        progress("%s: %.0f s elapsed, ~%.0f s of workload left" % (
            label, el, max(0.0, args.duration + 3 - el)))
        time.sleep(0.5)
    err = p.stderr.read().strip()
    if p.returncode in (RG_USAGE, RG_TIMEOUT, RG_INFRA) or (
            p.returncode != 0 and "DCRACE-RESULT" not in _read(log)):
        raise InfraError(err.splitlines()[-1] if err else
                         "run-guest failed with status %d (log %s)" % (p.returncode, log))
    r = parse_log(log, want_module=module)
    if r["exit"] != 0:
        raise InfraError("the workload failed in the guest (exit %d; log %s)" % (r["exit"], log))
    progress_done("%s: done in %.0f s, %d false ENOENT%s" % (
        label, time.time() - t0, r["result"]["false_enoent"],
        ", module %d false / %d caught" % (r["stats"]["false_enoent"], r["stats"]["caught"])
        if module else ""))
    return r


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def results_dir(base, name):
    d = os.path.join(base or os.path.join(ROOT, "results"),
                     "%s-%s-%d" % (name, time.strftime("%Y%m%d-%H%M%S"), os.getpid()))
    os.makedirs(d, exist_ok=True)
    return d
