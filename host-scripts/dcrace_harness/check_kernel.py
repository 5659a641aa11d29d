"""Is this kernel affected? Boots KERNEL, runs the false-ENOENT workload
TRIES times and answers with git bisect run's exit codes:

  0    good: no false ENOENT in any try (and, on a kernel of the table
       expected clean with dcrace.ko loaded, the race caught: the window
       was reached)
  1    bad: a user-visible false ENOENT of the workload in some try
  125  could not test: the guest hung, printed no result, or failed; a
       splat, a path really gone, lost trace events; or, with no
       user-visible false ENOENT, a problem that leaves "good" unproven:
       the detector failed (compare's 4: a dcrace.ko event without a
       user-visible failure proves nothing about the kernel), a dcrace.ko
       event outside the workload, other errors, too few syscalls; a
       kernel file that does not exist (a failed build); an unexpected
       error
  128  bad command line, an unknown kernel name (git bisect run aborts
       the bisection)
  130  interrupted (SIGINT or SIGTERM; git bisect run aborts too)

The tries are judged together by dcrace_harness/judge.py, as compare's
runs are. A detector failure where user space did see a false ENOENT
still says bad (1): the user-visible failure is the ground truth; the
unmatched events are printed. (Without dcrace.ko's trace event only the
counts are compared.)

For the project's own kernels (%(ours)s) dcrace.ko is loaded and the race
window widened (--inject 20 by default); for any other bzImage the run is
natural (no module) unless --ko gives a module built for it. KERNEL is a
name of that table (a typo is a usage error, 128) or a path with a
directory (a missing file cannot be tested, 125).

--mode mutate asks the hard-error rule instead (docs/design.md, "The
judge"): bad is a user-visible false error of any errno (one no state of
the walked path allows); good on a kernel of the table expected clean on
that rule (its errors column) needs the evidence compare asks for
(mutations, dcrace.ko's end_caught EACCES events of the walkers' own
threads, every state of the truth table met), else could not test (125);
a false success (a call that succeeded where no state allows it) is bad
too; the injection sets the module's window=2 (--window N to change it).

Example, in a kernel tree being bisected (a failed build must say 125,
"skip", not make's 2, which git bisect run takes as "bad"):
  git bisect run sh -c 'make -j2 bzImage || exit 125
    exec /path/to/dcrace/host-scripts/check-kernel --kernel arch/x86/boot/bzImage'
"""

import os
import sys

from . import argtypes as A
from . import defs
from .judge import Judgement, by_errno
from .judge import user_false
from .logs import InfraError, false_verdicts
from .runner import guarded, results_dir, run_once, shown
from .spec import DEFAULT_MIX, RunSpec, default_inject, default_mix, default_threads

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
    p.add_argument("--mode", choices=["stat", "open", "cp", "mutate"], default="stat",
                   help="workload mode (default stat; mutate: the hard-error rule)")
    p.add_argument("--uid", type=A.int_range(0, 2 ** 31 - 1, "a uid"), metavar="N",
                   help="mode mutate: the walkers run as uid and gid N")
    p.add_argument("--rename-locked", action="store_true",
                   help="mode mutate: a thread renames locked to locked.r and back")
    p.add_argument("--window", type=A.window, metavar="N",
                   help="dcrace.ko's inject/window with injection, %s (default 2 in mode "
                   "mutate, else the module's 1)" % A.WINDOW_HELP)
    p.add_argument("--mix", type=A.mix, metavar="OP=W,...",
                   help="the walkers' calls (dcrace-workload --mix; default %s in stat mode, "
                   "open=100 in open mode; not for cp)" % DEFAULT_MIX)
    p.add_argument("--threads", type=A.positive_int)
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
    if A.unknown_kernels([args.kernel]) and A.table_like(args.kernel):
        p.error("--kernel: " + A.unknown_kernels_error([args.kernel]))
    ours = args.kernel in defs.KERNELS
    if args.ko and not os.path.isfile(args.ko):
        p.error("no such module: %s" % args.ko)
    module = not args.natural and bool(ours or args.ko)
    if args.natural and args.inject_us:
        p.error("--natural and --inject exclude each other")
    inject = args.inject_us if args.inject_us is not None else (
        default_inject(args.mode) if module else 0)
    if inject and not module:
        p.error("--inject needs dcrace.ko: give --ko for a kernel that is not ours")
    if args.mix and args.mode == "cp":
        p.error("--mix is for --mode stat, open or mutate")
    if args.uid is not None and args.mode != "mutate":
        p.error("--uid is for --mode mutate")
    if args.rename_locked and args.mode != "mutate":
        p.error("--rename-locked is for --mode mutate")
    if args.window is not None and not inject:
        p.error("--window needs injection")
    duration = args.duration or (10.0 if inject else 60.0)
    spec = RunSpec(duration=duration, seed=args.seed,
                   threads=args.threads or default_threads(args.mode), mode=args.mode,
                   mix=args.mix or default_mix(args.mode),
                   inject_us=inject, smp=args.smp, mem=args.mem, accel=args.accel,
                   module=module, ko=os.path.abspath(args.ko) if args.ko else None,
                   uid=args.uid, window=args.window, rename_locked=args.rename_locked)
    return args, spec


def show_try(i, r, spec):
    """One try's counts, and its per-event match."""
    res, st = r["result"], r.get("stats") or {}
    tr = r.get("trace")
    if spec.mode == "mutate":
        errors, ok = user_false(res)
        caught = (tr or {}).get("end_caught_walkers", {})
        print("try %d: %d syscalls, %d user-visible false errors (%s), %d false successes%s" % (
            i, res["syscalls"], errors,
            by_errno({k: v for k, v in (res.get("false_errors") or {}).items() if k != "0"}) or "none",
            ok, ", dcrace.ko: %s, end_caught %d (the walkers': %s)" % (
                by_errno(false_verdicts(st)) or "no false_*", st.get("end_caught", 0),
                by_errno(caught) or "none") if spec.module else ""))
    else:
        print("try %d: %d syscalls, %d user-visible false ENOENT%s" % (
            i, res["syscalls"], res["false_enoent"],
            ", dcrace.ko: %d false_enoent, %d caught" % (st["false_enoent"], st["caught"])
            if spec.module else ""))
    if res.get("wrong_objects"):
        print("try %d: %d of %d successes met another object than their path names (the "
              "identity oracle); the first: %s" % (i, res["wrong_objects"],
                                                  res.get("identity_checks", 0),
                                                  res.get("first_wrong_object")))
    if tr is not None:
        print("try %d: dcrace.ko trace events: %d matched, %d user-only, %d module-only, "
              "%d outside the workload or hidden%s" % (
                  i, tr["matched"], len(tr["user_only"]), len(tr["module_only"]),
                  len(tr.get("outside", [])) + len(tr.get("hidden", [])),
                  " (detector failure; the user-visible false ENOENT decides)"
                  if tr["user_only"] or tr["module_only"] else ""))


def check(args, spec):
    """The tries, judged together; stops at the first bad one or at data
    that cannot be trusted. Returns git bisect run's code."""
    if args.kernel not in defs.KERNELS and not os.path.isfile(args.kernel):
        print("check-kernel: could not test: no such kernel: %s" % args.kernel)
        return UNTESTABLE
    outdir = results_dir(args.results, "check-kernel")
    runs = []
    for i in range(1, args.tries + 1):
        log = os.path.join(outdir, "try%d.log" % i)
        try:
            runs.append(run_once(spec, args.kernel, log, "try %d/%d" % (i, args.tries)))
        except InfraError as e:
            print("check-kernel: could not test: %s" % e)
            return UNTESTABLE
        show_try(i, runs[-1], spec)
        j = Judgement(args.kernel, runs)
        code, why = j.bisect()
        if code == BAD or (code == UNTESTABLE and any(c == defs.EX_HARNESS_INFRA for c, _ in j.problems)):
            break
    print("check-kernel: %s (logs: %s)" % (why, shown(outdir)))
    return code


def main(argv):
    def body():
        args, spec = parse_args(argv)
        return check(args, spec)
    # git bisect skips (125) what could not be tested, never "bad" (1)
    return guarded("check-kernel", body, UNTESTABLE, "could not test", sys.stdout)
