"""Is this kernel affected? Boots KERNEL, runs the false-ENOENT workload
TRIES times and answers with git bisect run's exit codes:

  0    good: no false ENOENT in any try
  1    bad: a false ENOENT (user-visible or seen by dcrace.ko) in some try
  125  could not test: the guest hung, printed no result, or failed; or
       the detector failed (compare's 4) in a try where user space saw no
       false ENOENT: a dcrace.ko event without a user-visible failure
       proves nothing about the kernel
  128  bad command line (git bisect run aborts the bisection)
  130  interrupted (SIGINT or SIGTERM; git bisect run aborts too)

A detector failure where user space did see a false ENOENT still says bad
(1): the user-visible failure is the ground truth; the unmatched events
are printed. (Without dcrace.ko's trace event only the counts are
compared.)

For the project's own kernels (%(ours)s) dcrace.ko is loaded and the race
window widened (--inject 20 by default); for any other bzImage the run is
natural (no module) unless --ko gives a module built for it.

Example, in a kernel tree being bisected (a failed build must say 125,
"skip", not make's 2, which git bisect run takes as "bad"):
  git bisect run sh -c 'make -j2 bzImage || exit 125
    exec /path/to/dcrace/host-scripts/check-kernel --kernel arch/x86/boot/bzImage'
"""

import os
import sys

from . import argtypes as A
from . import defs
from .logs import InfraError, problems, summarize
from .runner import Interrupted, catch_signals, results_dir, run_once, shown
from .spec import DEFAULT_MIX, RunSpec, default_mix

GOOD, BAD, UNTESTABLE = defs.EX_OK, defs.EX_FAIL, defs.EX_INFRA

DOC = __doc__ % {"ours": ", ".join(defs.kernel_names())}


def build_parser():
    p = A.Parser(prog="check-kernel", description=DOC, usage_code=defs.EX_BISECT_USAGE)
    p.add_argument("--kernel", required=True,
                   help="%s or a bzImage path" % ", ".join(defs.kernel_names()))
    p.add_argument("--tries", type=A.positive_int, default=1,
                   help="boots (default 1); a race in any makes it bad")
    p.add_argument("--duration", type=A.seconds,
                   help="workload seconds per try (default 10 with injection, 60 natural)")
    p.add_argument("--inject", type=A.inject_us, metavar="US", dest="inject_us",
                   help="window widening, 0..10000 us (needs the module)")
    p.add_argument("--natural", action="store_true", help="no module, no injection")
    p.add_argument("--ko", help="dcrace.ko built for this kernel")
    p.add_argument("--mode", choices=["stat", "open", "cp"], default="stat")
    p.add_argument("--mix", type=A.mix, metavar="OP=W,...",
                   help="the walkers' calls (dcrace-workload --mix; default %s in stat mode, "
                   "open=100 in open mode; not for cp)" % DEFAULT_MIX)
    p.add_argument("--threads", type=A.positive_int, default=2)
    p.add_argument("--seed", type=A.positive_int, default=1)
    p.add_argument("--smp", type=A.positive_int, default=2)
    p.add_argument("--mem", help="guest memory (default 512M)")
    p.add_argument("--accel", choices=["tcg", "kvm", "auto"], default="tcg")
    p.add_argument("--results", help="where logs go (default results/)")
    return p


def parse_args(argv):
    """(args, spec); usage errors exit 128. A kernel file that is missing
    is not a usage error: this commit could not be tested (125)."""
    p = build_parser()
    args = p.parse_args(argv)
    ours = args.kernel in defs.KERNELS
    if args.ko and not os.path.isfile(args.ko):
        p.error("no such module: %s" % args.ko)
    module = not args.natural and bool(ours or args.ko)
    if args.natural and args.inject_us:
        p.error("--natural and --inject exclude each other")
    inject = args.inject_us if args.inject_us is not None else (20 if module else 0)
    if inject and not module:
        p.error("--inject needs dcrace.ko: give --ko for a kernel that is not ours")
    if args.mix and args.mode == "cp":
        p.error("--mix is for --mode stat or open")
    duration = args.duration or (10.0 if inject else 60.0)
    spec = RunSpec(duration=duration, seed=args.seed, threads=args.threads, mode=args.mode,
                   mix=args.mix or default_mix(args.mode),
                   inject_us=inject, smp=args.smp, mem=args.mem, accel=args.accel,
                   module=module, ko=os.path.abspath(args.ko) if args.ko else None)
    return args, spec


def main(argv):
    catch_signals()
    try:
        args, spec = parse_args(argv)
        if args.kernel not in defs.KERNELS and not os.path.isfile(args.kernel):
            print("check-kernel: could not test: no such kernel: %s" % args.kernel)
            return UNTESTABLE
        outdir = results_dir(args.results, "check-kernel")
        bad = False
        for i in range(args.tries):
            log = os.path.join(outdir, "try%d.log" % (i + 1))
            try:
                r = run_once(spec, args.kernel, log, "try %d/%d" % (i + 1, args.tries))
            except InfraError as e:
                print("check-kernel: could not test: %s" % e)
                return UNTESTABLE
            n = r["result"]["false_enoent"]
            m = r["stats"]["false_enoent"] if spec.module else 0
            # An untrustworthy try (a splat, a path really gone) proves
            # nothing; a healthy-looking one that is not bad must be
            # healthy to count as good.
            probs = problems(summarize([r]))
            # a detector failure with no user-visible false ENOENT: only
            # the module's word, which is what failed
            if any(c == defs.EX_DETECTOR for c, _ in probs) and not n:
                print("check-kernel: could not test: try %d: detector failure: %s (log %s)" % (
                    i + 1, "; ".join(why for c, why in probs if c == defs.EX_DETECTOR), log))
                return UNTESTABLE
            if probs and (not (n or m) or any(c == defs.EX_HARNESS_INFRA for c, _ in probs)):
                print("check-kernel: could not test: try %d: %s (log %s)" % (
                    i + 1, "; ".join(why for _, why in probs), log))
                return UNTESTABLE
            print("try %d: %d syscalls, %d user-visible false ENOENT%s" % (
                i + 1, r["result"]["syscalls"], n,
                ", dcrace.ko: %d false_enoent, %d caught" % (m, r["stats"]["caught"])
                if spec.module else ""))
            tr = r.get("trace")
            if tr is not None:
                print("try %d: dcrace.ko trace events: %d matched, %d user-only, %d module-only, "
                      "%d outside the workload%s" % (
                    i + 1, tr["matched"], len(tr["user_only"]), len(tr["module_only"]),
                    len(tr.get("outside", [])),
                    " (detector failure; the user-visible false ENOENT decides)"
                    if tr["user_only"] or tr["module_only"] else ""))
            if n or m:
                bad = True
                break
        print("check-kernel: %s (logs: %s)" % (
            "BAD: the kernel reports false ENOENT" if bad else "good: no false ENOENT", shown(outdir)))
        return BAD if bad else GOOD
    except Interrupted as e:
        sys.stderr.write("\ncheck-kernel: interrupted (%s)\n" % e)
        return defs.EX_INTERRUPTED
