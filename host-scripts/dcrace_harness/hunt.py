"""hunt: the matrix kernel x filesystem x scenario, one job per cell
(docs/design.md, "The hunt"; docs/hunt.md is what it writes).

A cell boots its kernel once, loads dcrace.ko with callbacks=1 (every
filesystem callback of an RCU walk probed, delayed for the walkers), runs
guest/hunt/dcrace-hunt's scenario on the filesystem and reads three
oracles: the workload's truth table (an errno no state allows), the
module's rule (false_* in stats) and the kernel's own (a KASAN, lockdep
or RCU report: the first one of the boot, with its task and syscall).
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

from . import argtypes as A
from . import defs
from .logs import InfraError, read_text
from .runner import HS, ROOT, Child, guarded, progress_done, run_guest_cmd, shown

PROG = "hunt"

# What each filesystem is in the guest, and the scenarios that apply.
# A scenario's name may end in its start point (dcrace-hunt --start):
# "-dirfd" (a directory fd another thread closes), "-root" (a chroot),
# "-task" (the /proc/<pid>/task/<tid> of a thread that exits), "-rmdir"
# (a cwd emptied and removed under the walks, then left); without one the
# walks start at the cwd.
STARTS = ("dirfd", "root", "task", "rmdir")
_DISK = ("lazy-umount", "lazy-umount-dirfd", "lazy-umount-rmdir", "replace", "prune")
# symlink: links of every body kind replaced, evicted, unlinked (vfat has
# no symlinks)
_LINKS = _DISK + ("symlink",)
FILESYSTEMS = {
    "procfs": ("proc-umount", "proc-umount-dirfd", "proc-exit", "proc-exit-dirfd",
               "proc-exit-root", "proc-exit-task"),
    "tmpfs": _LINKS,
    "ext2": _LINKS,
    "ext4": _LINKS,
    "vfat": _DISK,
    "overlayfs": _LINKS,
}


def split_scenario(scenario):
    """"proc-exit-dirfd" -> ("proc-exit", "dirfd"); no suffix: "cwd"."""
    base, _, start = scenario.rpartition("-")
    if start in STARTS:
        return base, start
    return scenario, "cwd"
DEFAULT_KERNELS = ("pristine-debug", "6.12/pristine-debug")
DEFAULT_FS = ("tmpfs", "ext4", "procfs", "vfat", "overlayfs")
# The window bits of dcrace.ko's knob "window" (module/callbacks.c): every
# callback kind, and the walk's own window after a step (2).
KINDS = ("permission", "d_revalidate", "d_hash", "d_compare", "get_link", "load", "free")
# 256: a walker after a callback's load (get_pid_task(), pid_task()); 512:
# the controller between a put and the clearing of the pointer
WINDOW_ALL = 2 | 8 | 16 | 32 | 64 | 128 | 256 | 512
# The cells make check runs: the finding, its fix, the other line.
SHORT = ("pristine-debug:procfs:proc-umount", "procfs-debug:procfs:proc-umount",
         "backport-debug:procfs:proc-umount",
         "debian-6.12:procfs:proc-umount",
         "pristine-debug:procfs:proc-exit", "pidfree-debug:procfs:proc-exit")

HUNT_DIR = "/tmp/dcr-hunt"
# ext4 cells whose scenario walks a casefolded directory (c/F)
CASEFOLD_SCENARIOS = ("lazy-umount", "prune")

# Reached means reached (docs/design.md, "The hunt"): the window kinds a
# cell must have entered, per scenario and per filesystem, and the
# controller's lifetime ends (cycles) per second of workload below which
# the cell did not run. The rates are floors far below what a working
# cell makes on the debug kernels (docs/hunt.md), above a controller that
# failed or stalled.
REACH_SCENARIO = {
    # both wait 0, 1 or 3 grace periods a cycle (--grace): 4-5 cycles a
    # second on the 6.1 debug kernel
    "proc-umount": (("permission", "d_revalidate", "get_link"), 2),
    "proc-exit": (("permission", "d_revalidate", "get_link", "load", "free"), 2),
    "lazy-umount": (("permission", "get_link"), 2),
    "replace": (("permission",), 5),
    "prune": (("permission",), 50),
    # four renames, an eviction every other cycle, an unlink and remake of
    # the four links every fourth
    "symlink": (("permission", "get_link"), 2),
}
REACH_FS = {
    # ext4: a casefolded directory walked by a name to fold
    ("ext4", "lazy-umount"): ("d_hash", "d_compare"),
    ("ext4", "prune"): ("d_hash", "d_compare"),
    # vfat: its d_hash/d_compare on every name; no symlinks (EPERM)
    ("vfat", "lazy-umount"): ("d_revalidate", "d_hash", "d_compare"),
    ("vfat", "replace"): ("d_revalidate", "d_hash", "d_compare"),
    ("vfat", "prune"): ("d_revalidate", "d_hash", "d_compare"),
}
# overlayfs: no d_revalidate required. sb->s_d_op is ovl_dentry_operations,
# but ovl_dentry_init_flags() (6.1.192 and 6.12.118) leaves
# DCACHE_OP_REVALIDATE set only on a dentry whose upper or lower dentry has
# it, and tmpfs layers have none: ovl_dentry_revalidate() is never called
# (0 entries in every overlayfs cell). Its permission window is reached.
NO_SYMLINKS = ("vfat",)


def reach_rule(fs, scenario):
    """(kinds that must be hit, minimum cycles per second) of a cell."""
    scenario = split_scenario(scenario)[0]
    kinds, rate = REACH_SCENARIO[scenario]
    if fs in NO_SYMLINKS:
        kinds = tuple(k for k in kinds if k != "get_link")
    return tuple(dict.fromkeys(kinds + REACH_FS.get((fs, scenario), ()))), rate


def cell_id(kernel, fs, scenario):
    return "%s:%s:%s" % (kernel, fs, scenario)


def cell_file(cid):
    """A cell's file name stem: "6.12/x:procfs:s" -> "6.12-x_procfs_s"."""
    return defs.file_name(cid).replace(":", "_")


def parse_cell(cid):
    parts = cid.split(":")
    if len(parts) != 3:
        raise ValueError("a cell is KERNEL:FS:SCENARIO, not '%s'" % cid)
    kernel, fs, scenario = parts
    if kernel not in defs.kernel_names():
        raise ValueError("unknown kernel '%s' in cell %s" % (kernel, cid))
    if fs not in FILESYSTEMS:
        raise ValueError("unknown filesystem '%s' in cell %s (%s)" % (
            fs, cid, ", ".join(FILESYSTEMS)))
    if scenario not in FILESYSTEMS[fs]:
        raise ValueError("scenario '%s' does not apply to %s (%s)" % (
            scenario, fs, ", ".join(FILESYSTEMS[fs])))
    return kernel, fs, scenario


def jobs(kernels, filesystems, scenarios, args):
    out = []
    for k in kernels:
        for fs in filesystems:
            for sc in FILESYSTEMS[fs]:
                if scenarios and sc not in scenarios:
                    continue
                cid = cell_id(k, fs, sc)
                cmd = ["host-scripts/hunt", "--cell", cid, "--duration", str(args.duration),
                       "--delay-us", str(args.delay_us), "--results", "RESULTS"]
                out.append({"id": cid, "kernel": k, "fs": fs, "scenario": sc,
                            "window": WINDOW_ALL, "delay_us": args.delay_us,
                            "duration": args.duration,
                            "command": " ".join(shlex.quote(c) for c in cmd),
                            "result": "RESULTS/%s.json" % cell_file(cid)})
    return out


def fs_setup(fs, scenario):
    """The guest shell lines that prepare FS; returns (lines, mount spec)."""
    scenario = split_scenario(scenario)[0]
    d = HUNT_DIR
    if fs == "procfs":
        return "mkdir -p %s" % d, None
    if fs == "tmpfs":
        spec = "tmpfs:tmpfs:size=8m"
    elif fs == "ext2":
        return ("mke2fs -q /dev/ram1 || exit 3", "ext2:/dev/ram1") if scenario == "lazy-umount" \
            else ("mke2fs -q /dev/ram1 && mkdir -p %s && mount -t ext2 /dev/ram1 %s || exit 3" % (d, d),
                  None)
    elif fs == "ext4":
        img = "dd if=/dcrace/copy/ext4.img of=/dev/ram1 bs=1M 2>/dev/null || exit 3"
        return (img, "ext4:/dev/ram1") if scenario == "lazy-umount" else \
            ("%s && mkdir -p %s && mount -t ext4 /dev/ram1 %s || exit 3" % (img, d, d), None)
    elif fs == "vfat":
        mk = "mkdosfs /dev/ram1 >/dev/null || exit 3"
        return (mk, "vfat:/dev/ram1") if scenario == "lazy-umount" else \
            ("%s && mkdir -p %s && mount -t vfat /dev/ram1 %s || exit 3" % (mk, d, d), None)
    elif fs == "overlayfs":
        o = "/tmp/dcr-ovl"
        pre = ("mkdir -p %s %s && mount -t tmpfs tmpfs %s && mkdir -p %s/l %s/u %s/w || exit 3" %
               (o, d, o, o, o, o))
        opts = "lowerdir=%s/l,upperdir=%s/u,workdir=%s/w" % (o, o, o)
        if scenario == "lazy-umount":
            return pre, "overlay:overlay:" + opts
        return pre + " && mount -t overlay overlay -o %s %s || exit 3" % (opts, d), None
    else:
        raise ValueError(fs)
    if scenario == "lazy-umount":
        return "mkdir -p %s" % d, spec
    typ, src, opts = spec.split(":")
    return "mkdir -p %s && mount -t %s -o %s %s %s || exit 3" % (d, typ, opts, src, d), None


def guest_script(fs, scenario, duration, delay_us):
    setup, spec = fs_setup(fs, scenario)
    scenario, start = split_scenario(scenario)
    # overlayfs: a directory renamed into a merge directory (the mount's
    # root) must be marked opaque, an xattr the tmpfs upper cannot hold
    # (EXDEV): replace works in a directory of the upper layer only
    d = HUNT_DIR + "/u" if fs == "overlayfs" and scenario == "replace" else HUNT_DIR
    hunt = ["/dcrace/copy/dcrace-hunt", "--scenario", scenario, "--dir", d,
            "--duration", str(duration), "--start", start]
    if spec:
        hunt += ["--mount", spec]
    if scenario == "replace":
        hunt += ["--uid", "65534"]
    if fs == "ext4" and scenario in CASEFOLD_SCENARIOS:
        hunt += ["--casefold", "1"]
    D = "/sys/kernel/debug/dcrace"
    return "\n".join([
        setup,
        "insmod /dcrace/copy/dcrace.ko callbacks=1 comm=dcr-walk delay_us=%d window=%d || exit 3"
        % (delay_us, WINDOW_ALL),
        "echo DCRACE-H-BEGIN",
        "%s >/tmp/hunt.json 2>/tmp/hunt.err; echo DCRACE-H exit $?" % " ".join(hunt),
        "echo DCRACE-H json $(cat /tmp/hunt.json)",
        "sed 's/^/DCRACE-H err /' /tmp/hunt.err",
        "sed 's/^/DCRACE-H stat /' %s/stats" % D,
        "grep '^callback ' %s/probes | sed 's/^/DCRACE-H probe /'" % D,
        "echo DCRACE-H-END",
        "rmmod dcrace",
        "exit 0",
    ])


TASK_RES = (re.compile(r"by task (\S+)/(\d+)"),
            re.compile(r"pid: (\d+), name: (\S+)"),
            re.compile(r"\bPID: (\d+) Comm: (\S+)"),
            re.compile(r"\[(\S+):(\d+)\]"),
            re.compile(r"task:(\S+)\s+state:\S+ stack:\s*\d+\s+pid:\s*(\d+)"),
            # WARNING: CPU: 0 PID: 302 at ...: the pid alone
            re.compile(r"^WARNING: CPU: \d+ PID: (\d+) at"))


def task_of(m):
    """(comm, pid) of a TASK_RES match; comm None when only the pid is named."""
    g = m.groups()
    if len(g) == 1:
        return None, int(g[0])
    a, b = g
    return (a, int(b)) if not a.isdigit() else (b, int(a))
SYSCALL = re.compile(r"(?:__x64_sys_|__do_sys_|__se_sys_)(\w+)")
TIMESTAMP = re.compile(r"^\[\s*[\d.]+\]\s*")
# The guest's kernel command line for a hunt boot: every KASAN report (not
# only the boot's first), every message on the console as it is printed
# (a panic loses what only the final dmesg would have shown).
HUNT_APPEND = "kasan_multi_shot ignore_loglevel"
# A kernel without KASAN (Debian's stock images): SLUB's own checks, so a
# use-after-free still speaks: freed objects poisoned (0x6b: a pointer read
# from one faults at 0x6b6b6b6b6b6b6b6b, a GPF), red zones and the free
# list checked (a "kernel" BUG report).
NO_KASAN_APPEND = "slub_debug=FZP"


def hunt_append(kernel):
    """The kernel command line's additions for a hunt boot of KERNEL."""
    k = defs.KERNELS.get(kernel)
    if k is not None and k.build == "debug":
        return HUNT_APPEND
    return "%s %s" % (HUNT_APPEND, NO_KASAN_APPEND)


def report_kind(line):
    """The oracle of a report's first line (defs.REPORT_RE matched it)."""
    if "KASAN:" in line:
        return "kasan"
    if "UBSAN" in line:
        return "ubsan"
    if re.search(r"locking|lock state|lock held|recursive lock", line):
        return "lockdep"
    if "RCU" in line or re.search(r"rcu[:_]|stall", line):
        return "rcu"
    if re.search(r"soft lockup|hard LOCKUP|blocked for more than", line):
        return "lockup"
    if re.search(r"general protection|Oops|kernel BUG at|unable to handle|Kernel panic|"
                 r"BUG: (unable|kernel NULL)", line):
        return "crash"
    if line.startswith("WARNING:"):
        return "warning"
    return "kernel"


def kernel_findings(log_text):
    """Every kernel report in a boot's log (defs.REPORT_RE: KASAN, lockdep,
    RCU stalls and splats, lockups, hung tasks, crashes, UBSAN, WARNING,
    BUG): the first line of each, the task it names and the syscall in its
    call trace. A report printed twice (the console, then the final dmesg)
    or repeated (a stall reported every 78 s) counts once, with "count";
    "Kernel panic" after another report is that report's end, not one of
    its own."""
    out = []
    by_summary = {}
    raw = log_text.splitlines()
    seen_raw = set()
    lines = [TIMESTAMP.sub("", l) for l in raw]
    starts = [i for i, l in enumerate(lines)
              if defs.REPORT_RE.search(l) and defs.SPLAT_OWN not in l]
    for n, i in enumerate(starts):
        line = lines[i]
        summary = line.strip("= ").strip()
        # the same line with the same timestamp: the console's copy in the
        # final dmesg, not a report of its own
        if raw[i] in seen_raw:
            continue
        seen_raw.add(raw[i])
        # a panic ends the report before it; only a panic alone is one
        if summary.startswith("Kernel panic") and out:
            out[-1]["panic"] = True
            continue
        if summary in by_summary:
            by_summary[summary]["count"] += 1
            continue
        f = {"oracle": report_kind(summary), "summary": summary, "task": None, "pid": None,
             "syscall": None, "count": 1}
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        for ln in lines[i + 1:min(end, i + 80)]:
            for rx in TASK_RES:
                m = rx.search(ln)
                if m and f["task"] is None:
                    f["task"], f["pid"] = task_of(m)
            m = SYSCALL.search(ln)
            # "? sym" frames are stale stack words, not the call chain
            if m and f["syscall"] is None and not ln.lstrip().startswith("?"):
                f["syscall"] = m.group(1)
        # the line's own task ("... by task dcr-walk/212", "[dcr-walk:212]")
        for rx in TASK_RES:
            m = rx.search(summary)
            if m:
                f["task"], f["pid"] = task_of(m)
                break
        by_summary[summary] = f
        out.append(f)
    return out


def parse_cell_log(path, rc=0, err=""):
    """A cell's log, whatever run-guest's exit status RC: a guest that
    panicked or hung is a "crash" when the log holds a kernel report (the
    report is the finding), "broken" when it holds none (ERR says why)."""
    text = read_text(path) if os.path.exists(path) else ""
    res = {"exit": None, "workload": None, "err": [], "stats": {}, "callbacks": [],
           "status": "ran", "why": None}
    res["kernel_findings"] = kernel_findings(text)
    if "DCRACE-H-END" not in text or rc != 0:
        res["status"] = "crash" if res["kernel_findings"] else "broken"
        res["why"] = "run-guest exit %d: %s" % (rc, (err.strip().splitlines() or [
            "the cell did not finish in the guest"])[-1][:200]) if rc else \
            "the cell did not finish in the guest"
        res["workload"] = {}
    for line in text.splitlines():
        line = re.sub(r"^\[\s*[\d.]+\]\s*", "", line)
        if not line.startswith("DCRACE-H "):
            continue
        _, key, rest = (line.split(" ", 2) + [""])[:3]
        if key == "exit":
            res["exit"] = int(rest)
        elif key == "json":
            try:
                res["workload"] = json.loads(rest)
            except ValueError:
                res["workload"] = None
        elif key == "err":
            res["err"].append(rest)
        elif key == "stat":
            k, _, v = rest.partition(": ")
            if v.strip().lstrip("-").isdigit():
                res["stats"][k] = int(v)
        elif key == "probe":
            p = rest.split()
            # callback SYM kprobe|kretprobe armed|missing HITS FS:KIND
            if len(p) == 6:
                fs, _, kind = p[5].partition(":")
                res["callbacks"].append({"sym": p[1], "state": p[3], "hits": int(p[4]),
                                         "fs": fs, "kind": kind})
    if res["workload"] is None:
        res["status"] = "broken"
        res["why"] = "no result from dcrace-hunt (exit %s: %s)" % (
            res["exit"], " ".join(res["err"])[:200])
        res["workload"] = {}
    return res


def judge(cell, res):
    """Findings per oracle, and whether the cell reached its windows."""
    w = res["workload"]
    st = res["stats"]
    tids = set(w.get("walker_tids", [])) | {w.get("ctl_tid")}
    findings = []
    for f in res["kernel_findings"]:
        f = dict(f)
        f["by_workload"] = f["pid"] in tids or (f["task"] or "").startswith("dcr-")
        findings.append(f)
    for name in ("false_enoent", "false_enotdir", "false_eacces", "false_eperm"):
        if st.get(name, 0):
            findings.append({"oracle": "rule", "summary": "dcrace: %s %d" % (name, st[name]),
                             "task": "dcr-walk", "pid": None, "syscall": None,
                             "by_workload": True})
    for k, v in sorted(w.get("false_errors", {}).items()):
        findings.append({"oracle": "truth", "summary": "user-visible %s x%d" % (k, v),
                         "task": "dcr-walk", "pid": None, "syscall": None, "by_workload": True})
    # a lookup that succeeded on an object its path cannot name
    for o in w.get("wrong_objects", []):
        findings.append({"oracle": "identity", "count": o.get("count", 1),
                         "summary": "wrong object: %s gave %s" % (o["path"], o["got"]),
                         "task": "dcr-walk", "pid": None, "syscall": None, "by_workload": True})
    hits = {k: st.get("window_" + k, 0) for k in KINDS}
    _, fs, scenario = cell.split(":")
    need, rate = reach_rule(fs, scenario)
    secs = w.get("seconds") or 0
    short = []
    if not st.get("injected_delays", 0):
        short.append("no delay injected")
    short += ["no %s window entered" % k for k in need if not hits.get(k)]
    if secs and w.get("iterations", 0) < rate * secs:
        short.append("%d lifetime ends (cycles) in %.0f s, fewer than %d a second" % (
            w.get("iterations", 0), secs, rate))
    reached = not short
    why = None
    status = res.get("status", "ran")
    if status != "ran":
        reached = False
        why = res.get("why")
    elif not reached:
        why = "; ".join(short)
        status = "not reached"
    if w.get("ctl_errors"):
        why = (why + "; " if why else "") + "controller: " + w.get("ctl_error", "")
        if status == "ran":
            status = "broken"
    if status == "ran":
        status = "findings" if findings else "none"
    return {"id": cell, "status": status,
            "calls": w.get("calls", 0), "iterations": w.get("iterations", 0),
            "seconds": w.get("seconds"), "window_hits": hits,
            "delays": st.get("injected_delays", 0), "reached": reached, "why": why,
            "callbacks_armed": sorted({c["fs"] for c in res["callbacks"]
                                       if c["state"] == "armed"}),
            # the windows this cell's filesystem has that this kernel lacks
            "windows_missing": sorted("%s:%s" % (c["kind"], c["sym"]) for c in res["callbacks"]
                                      if c["state"] != "armed" and
                                      c["fs"] in ("generic", fs)),
            "grace": w.get("grace", {}),
            "identity_checks": w.get("identity_checks", 0),
            "wrong_total": w.get("wrong_total", 0),
            "callbacks_hit": sorted("%s:%s" % (c["sym"], c["hits"]) for c in res["callbacks"]
                                    if c["hits"]),
            "findings": findings, "outcomes": w.get("outcomes", {})}


def build_hunt_binary(tmp):
    out = os.path.join(tmp, "dcrace-hunt")
    d = os.path.join(ROOT, "guest", "hunt")
    srcs = sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".c"))
    r = subprocess.run(["gcc", "-O2", "-static", "-pthread", "-Wall", "-Wextra", "-Werror",
                        "-o", out] + srcs, capture_output=True, text=True, check=False)
    if r.returncode:
        raise InfraError("building dcrace-hunt failed: %s" % r.stderr.strip()[-300:])
    return out


def ext4_image(tmp):
    """An ext4 image with the casefold feature: no fallback (a directory
    that cannot be casefolded leaves ->d_hash()/->d_compare() nothing to
    do, and the cell would say "none" of windows it never reached)."""
    img = os.path.join(tmp, "ext4.img")
    with open(img, "wb") as f:
        f.truncate(16 << 20)
    r = subprocess.run(["mkfs.ext4", "-q", "-F", "-O", "casefold", img], capture_output=True,
                       text=True, check=False)
    if r.returncode:
        raise InfraError("mkfs.ext4 -O casefold failed: %s" % r.stderr.strip()[-200:])
    return img


def run_cell(cid, args, tmp, run=None):
    """One boot of cell CID; RUN (1..N) when the cell is repeated."""
    kernel, fs, scenario = parse_cell(cid)
    stem = cell_file(cid) + (".r%d" % run if run else "")
    ko = subprocess.run([os.path.join(HS, "build-module"), "--kernel", kernel],
                        capture_output=True, text=True, check=False)
    if ko.returncode:
        raise InfraError("build-module --kernel %s: %s" % (
            kernel, (ko.stderr.strip().splitlines() or ["failed"])[-1]))
    copies = [ko.stdout.strip(), build_hunt_binary(tmp)]
    if fs == "ext4":
        copies.append(ext4_image(tmp))
    log = os.path.join(args.results, "%s.log" % stem)
    cmd = run_guest_cmd(kernel, log, guest_script(fs, scenario, args.duration, args.delay_us),
                        args.duration * 4 + 300, mem="1536M", copies=copies,
                        append=hunt_append(kernel))
    t0 = time.time()
    rc, _, err = Child(cmd).run(keep_stdout=False)
    wall = time.time() - t0
    # a guest that died or hung is the cell's result, not the matrix's end
    res = parse_cell_log(log, rc, err)
    j = judge(cid, res)
    j.update({"kernel": kernel, "fs": fs, "scenario": scenario, "wall_s": round(wall, 1),
              "log": os.path.basename(log), "delay_us": args.delay_us,
              "window": WINDOW_ALL, "run": run})
    with open(os.path.join(args.results, "%s.json" % stem), "w") as f:
        json.dump(j, f, indent=1, sort_keys=True)
        f.write("\n")
    nf = len(j["findings"])
    progress_done("%s%s: %s, %d calls, window hits %s, %s in %.0f s" % (
        cid, " (run %d)" % run if run else "", j["status"], j["calls"],
        "/".join(str(j["window_hits"].get(k, 0)) for k in KINDS),
        "%d finding(s): %s" % (nf, "; ".join(f["summary"] for f in j["findings"]))
        if nf else "no finding", wall))
    return j


def cell_status(j):
    """ran with findings, none, crash, broken or not reached (results of
    an older hunt have no "status": derived)."""
    if j.get("status"):
        return j["status"]
    if not j.get("reached"):
        return "not reached"
    return "findings" if j["findings"] else "none"


def fmt_findings(j):
    st = cell_status(j)
    out = []
    if st in ("crash", "broken", "not reached"):
        out.append("**%s**%s" % (st, ": " + j["why"].replace("|", "/")[:120] if j.get("why") else ""))
    elif not j["findings"]:
        return "none"
    for f in j["findings"]:
        who = ""
        if f.get("task"):
            who = " (%s%s%s)" % (f["task"], ", %s()" % f["syscall"] if f.get("syscall") else "",
                                 "" if f.get("by_workload") else ", not the workload's")
        n = " x%d" % f["count"] if f.get("count", 1) > 1 else ""
        out.append("%s: `%s`%s%s" % (f["oracle"], f["summary"].replace("|", "/")[:90], n, who))
    return "<br>".join(out)


def render(cells, wall, out):
    lines = [
        "# The hunt: callbacks of RCU walks, widened, judged",
        "",
        "Written by `host-scripts/hunt` (do not edit: rerun it). Each cell boots its",
        "kernel once, loads dcrace.ko with `callbacks=1 comm=dcr-walk delay_us=D",
        "window=%d` (every filesystem callback of an RCU walk delayed for the" % WINDOW_ALL,
        "walkers: docs/design.md, \"The hunt\"), runs one scenario of",
        "`guest/hunt/dcrace-hunt` on one filesystem and reads three oracles:",
        "`truth` (an errno no state of the scenario allows, seen by user space;",
        "per state where the scenario has states), `identity` (a stat() or",
        "open() that succeeded on an object its path cannot name in any state",
        "the call overlapped: st_dev, st_ino and type against what the",
        "controller made; *identity checks* counts the calls checked, procfs",
        "paths are not), `rule` (dcrace.ko's `false_*`",
        "verdicts) and the kernel's own: every report of the boot (`kasan` with",
        "`kasan_multi_shot`, `lockdep`, `rcu` stalls and splats, `lockup`, `crash`",
        "for an oops, a GPF or a panic, `ubsan`, `warning`, `kernel` for another",
        "BUG), each with the task it names and the syscall in its call trace; the",
        "console shows every message as it is printed (`ignore_loglevel`). A",
        "kernel without KASAN (Debian's stock images) boots with `slub_debug=FZP`",
        "as well: freed objects are poisoned, so a use-after-free reads 0x6b",
        "bytes and faults (`crash`) or trips SLUB's checks (`kernel`).",
        "",
        "How to read a cell: *window hits* are the walkers' RCU-mode entries",
        "into each callback kind (permission / d_revalidate / d_hash / d_compare /",
        "get_link), the walkers' loads in callbacks (load: get_pid_task(),",
        "pid_task()) and the controller's frees (free: the return of",
        "proc_pid_evict_inode(), the pid put and ei->pid not yet cleared); a",
        "window the kernel lacks is listed as *missing*. The findings column is",
        "`none` only for a cell that ran and reached its windows; otherwise it",
        "says **crash** (the guest died or hung: its report is the finding),",
        "**broken** (it died with no report, or the scenario failed) or **not",
        "reached** (with why). A cell reached its windows when the walkers",
        "entered every window kind its scenario and filesystem must have (hunt.py's",
        "REACH_SCENARIO and REACH_FS: permission everywhere; get_link where",
        "symlinks are walked, one of them above tmpfs's 128-byte inline limit;",
        "d_hash and d_compare on ext4's casefolded directory `c` and on vfat;",
        "d_revalidate on procfs and vfat, not on overlayfs over tmpfs layers,",
        "which never calls it; load and free in proc-exit),",
        "delays were injected, and the controller made its minimum of lifetime",
        "ends per second. A kind at 0 in a reached cell is one the filesystem",
        "does not call on the walked paths. *grace periods* are the RCU grace",
        "periods the controller waited before the last reference went, with the",
        "number of cycles of each. *calls* are the walkers' stat() and",
        "open() calls.",
        "",
    ]
    if wall is not None:
        lines += ["Matrix: %d cells in %.0f s wall (%s)." % (len(cells), wall,
                                                          time.strftime("%Y-%m-%d")), ""]
    lines += ["| cell | calls | cycles | window hits | delays | identity checks (wrong) | findings |",
              "| --- | ---: | ---: | --- | ---: | --- | --- |"]
    for j in cells:
        hits = "/".join(str(j["window_hits"].get(k, 0)) for k in KINDS)
        if j.get("windows_missing"):
            hits += " (missing: %s)" % ", ".join(j["windows_missing"])
        if j.get("grace"):
            hits += " (grace periods: %s)" % ", ".join(
                "%s x%s" % kv for kv in sorted(j["grace"].items(), key=lambda kv: int(kv[0])))
        ident = "%d (%d)" % (j.get("identity_checks", 0), j.get("wrong_total", 0)) \
            if j.get("identity_checks") else "-"
        lines.append("| `%s`%s | %d | %d | %s | %d | %s | %s |" % (
            j["id"], " run %d" % j["run"] if j.get("run") else "", j["calls"], j["iterations"],
            hits, j["delays"], ident, fmt_findings(j)))
    lines += [
        "",
        "Findings with a report: docs/findings/ (each with its reproducer, the",
        "upstream fix and the variant kernel that makes the same cell clean).",
        "",
        "## The job list",
        "",
        "`host-scripts/hunt --list` prints the matrix as JSON, one job per cell;",
        "each job's `command` runs alone (one boot) and writes its own `result`",
        "(RESULTS is a directory of the runner's choice). A CI matrix or a",
        "LAVA/KernelCI-style runner takes the list as is; `host-scripts/hunt",
        "--render DIR` collects the results into this page. Generated example",
        "(first two jobs of the default matrix):",
        "",
        "```json",
    ]
    ex = jobs(DEFAULT_KERNELS, DEFAULT_FS, None,
              argparse.Namespace(duration=10, delay_us=100))[:2]
    lines += json.dumps(ex, indent=1).splitlines()
    lines += ["```", "",
              "A GitHub Actions matrix over it, for instance:", "",
              "```yaml",
              "strategy:",
              "  matrix:",
              "    cell: ${{ fromJSON(needs.list.outputs.cells) }}  # hunt --list | jq -c '[.[].id]'",
              "steps:",
              "  - run: host-scripts/hunt --cell '${{ matrix.cell }}' --results results/hunt",
              "```", ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))


def read_results(d):
    cells = []
    for n in sorted(os.listdir(d)):
        if n.endswith(".json"):
            with open(os.path.join(d, n)) as f:
                cells.append(json.load(f))
    return cells


def main(argv):
    p = A.Parser(
        prog=PROG,
        description="The hunt: kernels x filesystems x scenarios, one boot per cell; "
                    "writes docs/hunt.md (docs/design.md, \"The hunt\").",
        epilog="Cells are KERNEL:FS:SCENARIO. Filesystems and their scenarios: %s.\n"
               "Exit: 0 every cell ran and reached its windows (findings, crashes included, or "
               "not), 2 a cell broken (the guest died without a kernel report, the "
               "scenario failed) or not reaching its windows, 64 bad usage, 3 infrastructure "
               "error, 130 interrupted." % "; ".join(
                   "%s (%s)" % (k, ", ".join(v)) for k, v in FILESYSTEMS.items()))
    p.add_argument("--list", action="store_true", help="print the job list (JSON) and exit")
    p.add_argument("--cell", action="append", default=[], metavar="ID",
                   help="run this cell only (repeatable)")
    p.add_argument("--short", action="store_true",
                   help="the short matrix make check runs: %s" % ", ".join(SHORT))
    p.add_argument("--kernels", default=",".join(DEFAULT_KERNELS),
                   help="comma-separated (default %(default)s)")
    p.add_argument("--fs", default=",".join(DEFAULT_FS), help="comma-separated (default %(default)s)")
    p.add_argument("--scenarios", default="", help="comma-separated (default: all that apply)")
    p.add_argument("--duration", type=A.int_range(1, 3600), default=10,
                   help="seconds of workload per cell (default %(default)s)")
    p.add_argument("--delay-us", type=A.int_range(1, 10000), default=100,
                   help="busy-wait at each callback entry, us (default %(default)s)")
    p.add_argument("--results", help="where cells write (default results/hunt-<time>)")
    p.add_argument("--out", help="write the page here (default docs/hunt.md for a full "
                                 "matrix, else RESULTS/hunt.md)")
    p.add_argument("--repeat", type=A.int_range(1, 100), default=1, metavar="N",
                   help="run each cell N times, one boot each (a reproducer's N of N; "
                        "default 1)")
    p.add_argument("--render", metavar="DIR", help="only render the results in DIR")
    a = p.parse_args(argv)

    def body():
        kernels = [k for k in a.kernels.split(",") if k]
        fss = [f for f in a.fs.split(",") if f]
        scs = [s for s in a.scenarios.split(",") if s] or None
        for k in kernels:
            if k not in defs.kernel_names():
                p.error("unknown kernel '%s'" % k)
        for f in fss:
            if f not in FILESYSTEMS:
                p.error("unknown filesystem '%s' (%s)" % (f, ", ".join(FILESYSTEMS)))
        all_sc = {s for v in FILESYSTEMS.values() for s in v}
        for s in scs or ():
            if s not in all_sc:
                p.error("unknown scenario '%s' (%s)" % (s, ", ".join(sorted(all_sc))))
        if a.render:
            cells = read_results(a.render)
            if not cells:
                raise InfraError("no cell results in %s" % a.render)
            out = a.out or os.path.join(a.render, "hunt.md")
            render(cells, None, out)
            print(shown(out))
            return defs.EX_OK
        if a.cell or a.short:
            ids = list(a.cell) + (list(SHORT) if a.short else [])
            for c in ids:
                try:
                    parse_cell(c)
                except ValueError as e:
                    p.error(str(e))
        else:
            ids = [j["id"] for j in jobs(kernels, fss, scs, a)]
        if a.list:
            sel = [j for j in jobs(kernels, fss, scs, a) if j["id"] in ids] if not (
                a.cell or a.short) else [j for j in jobs(
                    sorted({parse_cell(c)[0] for c in ids}), list(FILESYSTEMS), None, a)
                    if j["id"] in ids]
            json.dump(sel, sys.stdout, indent=1)
            sys.stdout.write("\n")
            return defs.EX_OK
        if not a.results:
            a.results = os.path.join(ROOT, "results", "hunt-%s-%d" % (
                time.strftime("%Y%m%d-%H%M%S"), os.getpid()))
        os.makedirs(a.results, exist_ok=True)
        t0 = time.time()
        cells = []
        with tempfile.TemporaryDirectory(prefix="dcrace-hunt.") as tmp:
            for c in ids:
                for r in range(a.repeat):
                    cells.append(run_cell(c, a, tmp, r + 1 if a.repeat > 1 else None))
        wall = time.time() - t0
        full = not (a.cell or a.short) and a.kernels == ",".join(DEFAULT_KERNELS) and \
            a.fs == ",".join(DEFAULT_FS) and not scs
        out = a.out or (os.path.join(ROOT, "docs", "hunt.md") if full else
                        os.path.join(a.results, "hunt.md"))
        render(cells, wall, out)
        if a.repeat > 1:
            for c in ids:
                runs = [j for j in cells if j["id"] == c]
                per = {}
                for j in runs:
                    for o in sorted({f["oracle"] for f in j["findings"]}):
                        per[o] = per.get(o, 0) + 1
                print("hunt: %s: findings in %d of %d runs%s" % (
                    c, sum(1 for j in runs if j["findings"]), len(runs),
                    "".join("; %s in %d" % kv for kv in sorted(per.items()))))
        nf = sum(1 for j in cells if j["findings"])
        by = {}
        for j in cells:
            by[cell_status(j)] = by.get(cell_status(j), 0) + 1
        print("hunt: %d cells, %d with findings (%d crashed), %d broken, %d not reaching their "
              "windows, %.0f s; page %s, results %s" % (
                  len(cells), nf, by.get("crash", 0), by.get("broken", 0),
                  by.get("not reached", 0), wall, shown(out), shown(a.results)))
        # a cell that did not really run has no "none" to give
        if by.get("broken") or by.get("not reached"):
            return defs.EX_INCONCLUSIVE
        return defs.EX_OK

    return guarded(PROG, body)
