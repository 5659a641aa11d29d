"""profile: guest instructions per call of a stat() or open() loop, per
kernel function, with dcrace.ko loaded (or not): where a walk's
instructions go, dcrace's handlers and the kprobe mechanism apart.

A TCG plugin (host-scripts/qemu-tbprof.c, built into the run's logs) counts
the instructions each translation block of kernel text executes. Two
boots, one vCPU, single-threaded TCG: the same script with CALLS and
with 2 x CALLS calls of the loop (dcrace-loop, one warm-up round and one
timed round each); per function, the difference of the two counts over
the 2 x CALLS calls it adds is what one call costs there, boot, load and
everything else cancelled. Functions are named from the guest's
/proc/kallsyms of each boot (module text as "name [module]").

Exit status: 0 done, 3 infrastructure error, 64 usage error, 130
interrupted (README.md, "Exit codes").
"""

import bisect
import collections
import json
import os
import re
import subprocess
import sys

from . import argtypes as A
from . import defs
from .logs import InfraError
from .runner import ROOT, Child, Interrupted, catch_signals, last_line, results_dir, tool

PLUGIN_SRC = os.path.join(ROOT, "host-scripts", "qemu-tbprof.c")
PATHS = {"stat": "/mnt/d00/f000", "open": "/mnt/d00/f000"}

# The kprobe mechanism: entering a probe and returning from it, whatever
# the handler (x86: optimized, int3 and ftrace forms, kretprobes).
MECHANISM = re.compile(
    r"^(kprobe_optinsn_page|opt_pre_handler|optimized_callback|get_kprobe|"
    r"kprobe_int3_handler|exc_int3|do_int3|kprobe_ftrace_handler|"
    r"kprobe_busy_(begin|end)|aggr_pre_handler|setup_singlestep|resume_singlestep|"
    r"kprobe_post_process|kprobe_emulate_\w+|arch_rethook_\w+|rethook_\w+|"
    r"pre_handler_kretprobe|kretprobe_\w+|__kretprobe_trampoline\w*|"
    r"kprobe_debug_handler|kprobe_fault_handler|ftrace_regs_caller|ftrace_caller)$")


def say(msg):
    sys.stderr.write("profile: %s\n" % msg)
    sys.stderr.flush()


def build_plugin(outdir):
    """The plugin, built into the run's directory (a second of gcc)."""
    out = os.path.join(outdir, "tbprof.so")
    r = subprocess.run(["gcc", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-O2", "-o", out,
                        PLUGIN_SRC, "-lpthread"], capture_output=True, text=True)
    if r.returncode != 0:
        raise InfraError("building the TCG plugin failed: %s" % r.stderr.strip()[-300:])
    return out


def kallsyms(text):
    """The text symbols of the guest's /proc/kallsyms (between markers):
    sorted [(address, name)], module ones as "name [module]"."""
    m = re.search(r"^DCRACE-KALLSYMS-BEGIN$(.*?)^DCRACE-KALLSYMS-END$", text, re.M | re.S)
    if not m:
        raise InfraError("no kallsyms in the guest's log")
    syms = []
    for line in m.group(1).splitlines():
        p = line.split()
        if len(p) >= 3 and p[1] in "tTwW":
            syms.append((int(p[0], 16), p[2] + (" " + p[3] if len(p) > 3 else "")))
    syms.sort()
    return syms


def per_function(blocks, syms):
    """BLOCKS: lines "VADDR INSNS EXECUTED" of the plugin; the executed
    instructions summed per function (a block belongs to the symbol at
    or before its start; none within 64 KiB: "[trampoline]")."""
    addrs = [a for a, _ in syms]
    out = collections.Counter()
    for line in blocks.splitlines():
        p = line.split()
        if len(p) != 3:
            continue
        va, c = int(p[0], 16), int(p[2])
        i = bisect.bisect_right(addrs, va) - 1
        name = syms[i][1] if i >= 0 and va - syms[i][0] < 0x10000 else "[trampoline]"
        out[name] += c
    return out


def differ(a, b, calls):
    """Per function, (B - A) / CALLS: what one call of the loop costs."""
    names = set(a) | set(b)
    return {n: (b.get(n, 0) - a.get(n, 0)) / calls for n in names}


def summarize(per_call, top):
    rows = sorted(((v, n) for n, v in per_call.items() if abs(v) >= 0.5), reverse=True)
    dcrace = sum(v for n, v in per_call.items() if n.endswith("[dcrace]"))
    mech = sum(v for n, v in per_call.items() if MECHANISM.match(n.split()[0]) or n.startswith("kprobe_insn_page")
               or n == "kprobe_optinsn_page [__builtin__kprobes]")
    total = sum(per_call.values())
    return {"total": round(total, 1), "dcrace": round(dcrace, 1), "mechanism": round(mech, 1),
            "functions": [(n, round(v, 1)) for v, n in rows[:top]]}


def script(op, calls, module, params):
    lines = ["dcrace-workload --quiet --seed 1 --threads 2 --mode stat --setup-only >/dev/null || exit 1"]
    if module:
        lines += ["insmod /dcrace/copy/dcrace.ko %s || exit 1" % params, "sleep 2"]
    lines += ["dcrace-loop %s %s %d 1 || exit 1" % (op, PATHS[op], calls),
              "echo DCRACE-KALLSYMS-BEGIN; cat /proc/kallsyms; echo DCRACE-KALLSYMS-END"]
    return "\n".join(lines)


def build_parser():
    p = A.Parser(prog="profile", description=__doc__)
    p.add_argument("--kernel", default="6.12/unfixed", help="kernel of the table (default 6.12/unfixed)")
    p.add_argument("--op", choices=["stat", "open"], default="stat", help="the call looped (default stat)")
    p.add_argument("--calls", type=A.positive_int, default=20000,
                   help="calls per round of the first boot (default 20000; the second makes twice as many)")
    p.add_argument("--no-module", action="store_true", help="no dcrace.ko: the kernel alone")
    p.add_argument("--ko", help="this dcrace.ko, not the one built from the checkout")
    p.add_argument("--params", default="", help="dcrace.ko's parameters (e.g. sample=10)")
    p.add_argument("--top", type=A.positive_int, default=30, help="functions listed (default 30)")
    p.add_argument("--json", action="store_true", help="print JSON, not the table")
    return p


def main(argv):
    catch_signals()
    try:
        args = build_parser().parse_args(argv)
        if args.kernel not in defs.KERNELS:
            say("no kernel named %s (host-scripts/dcrace_harness/defs.sh)" % args.kernel)
            return defs.EX_USAGE
        return run(args)
    except InfraError as e:
        say("infrastructure error: %s" % e)
        return defs.EX_HARNESS_INFRA
    except Interrupted as e:
        say("interrupted (%s)" % e)
        return defs.EX_INTERRUPTED


def run(args):
    outdir = results_dir(None, "profile")
    so = build_plugin(outdir)
    copies = []
    if not args.no_module:
        ko = args.ko
        if not ko:
            rc, out, err = Child([tool("build-module"), "--kernel", args.kernel]).run()
            if rc != 0:
                raise InfraError("build-module failed: %s" % err.strip()[-300:])
            ko = out.strip()
        if not os.path.isfile(ko):
            raise InfraError("--ko: no such module: %s" % ko)
        copies = ["--copy", ko]
    counts = []
    for n in (args.calls, 2 * args.calls):
        log = os.path.join(outdir, "profile-%d.log" % n)
        blocks = os.path.join(outdir, "blocks-%d.txt" % n)
        say("boot with %d calls per round (log %s)" % (n, log))
        cmd = [tool("run-guest"), "-q", "--kernel", args.kernel, "--smp", "1", "--tcg", "single",
               "--timeout", "900", "--log", log, "--plugin", "%s,out=%s" % (so, blocks),
               "--exec", script(args.op, n, not args.no_module, args.params)] + copies
        rc, _, err = Child(cmd).run()
        if rc != 0:
            raise InfraError("guest failed (exit %d): %s" % (rc, last_line(err) or "?"))
        if not os.path.isfile(blocks):
            raise InfraError("the plugin wrote no counts (%s)" % blocks)
        counts.append(per_function(open(blocks).read(), kallsyms(open(log, errors="replace").read())))
    # each boot makes a warm-up round and a timed one: 2 x calls more
    s = summarize(differ(counts[0], counts[1], 2 * args.calls), args.top)
    s.update({"kernel": args.kernel, "op": args.op, "calls": args.calls, "module": not args.no_module,
              "params": args.params, "logs": os.path.relpath(outdir, ROOT)})
    if args.json:
        print(json.dumps(s, indent=1))
        return 0
    print("%s() of %s on %s%s: %.0f kernel instructions per call; dcrace.ko %.0f, kprobe mechanism %.0f" % (
        args.op, PATHS[args.op], args.kernel,
        "" if args.no_module else " with dcrace.ko %s" % (args.params or "(defaults)"),
        s["total"], s["dcrace"], s["mechanism"]))
    for n, v in s["functions"]:
        print("%10.1f  %s" % (v, n))
    return 0
