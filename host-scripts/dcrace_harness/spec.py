"""What one guest run does: the workload's settings, the guest's memory and
CPUs, whether dcrace.ko is loaded and how the race window is widened."""

import shlex

DEBUGFS = "/sys/kernel/debug/dcrace"
TRACEFS = "/sys/kernel/tracing"
# The guest's list of filesystem types: tracefs is mounted when listed.
FILESYSTEMS = "/proc/filesystems"
# dcrace.ko's per-race trace event (docs/design.md, "Per-event ground truth").
TRACE_EVENT = "dcrace/dcrace_race"
TRACE_BUFFER_KB = 8192


def default_pruner(pruner, mode=None):
    """The workload's pruner when none is named: drop_caches in every mode
    (cp too: the pressure pruner is Hugh's conditions but too slow for a
    1 s time to the first false ENOENT; docs/design.md) but mutate, whose
    mutators are the writers (none)."""
    return pruner or ("none" if mode == "mutate" else "drop_caches")


def default_mem(pruner):
    """Guest memory: under the pressure pruner the workload runs short of
    it, as in Hugh's reproduction."""
    return "192M" if default_pruner(pruner) == "pressure" else "512M"


# compare's and check-kernel's walkers in stat mode: stats and opens of
# existing files (the RCU lookups of both walk_component() and
# open_last_lookups()).
DEFAULT_MIX = "stat=50,open=50"


def default_mix(mode):
    """compare's and check-kernel's --mix default for MODE (None: the
    workload's own, open=100 in open mode; cp has no mix)."""
    return DEFAULT_MIX if mode in ("stat", "mutate") else None


def default_window(mode):
    """dcrace.ko's inject/window when injecting (None: the module's own,
    1: after the d_seq sample): in mode mutate 2, after a step ends (the
    walker holds nd->inode), the window of the hard-error rule."""
    return 2 if mode == "mutate" else None


def default_threads(mode):
    """Walker threads: 2; in mode mutate 1. Its window (after a step) is
    widened by a busy-wait with preemption off: with 2 walkers both vCPUs
    spin and the mutator hardly runs (measured on debian, 3 s, 300 us:
    1 walker and 1 mutator 101-121 false EACCES, the first at 0.03-0.13
    s; 2 walkers and 2 mutators 0-3, the first at 1.0 s or never)."""
    return 1 if mode == "mutate" else 2


def default_inject(mode):
    """The busy-wait, us: 20; in mode mutate 300, the time the mutator
    needs to turn a file into a directory (about 150 us a syscall under
    TCG), while 20 us spans a transition too rarely."""
    return 300 if mode == "mutate" else 20


def mix_shown(mode, mix):
    """The walkers' calls as the settings line shows them."""
    if mode == "cp":
        return "copies"
    return mix or ("open=100" if mode == "open" else "stat=100")


def default_duration(pruner):
    """The pressure pruner's races come about once a minute; 20 s else."""
    return 60.0 if default_pruner(pruner) == "pressure" else 20.0


class RunSpec:
    """The settings of a run; unset ones get the defaults of the mode."""

    def __init__(self, duration=None, seed=1, threads=2, mode="stat", pruner=None,
                 inject_us=0, probability=100, smp=2, mem=None, timeout=None,
                 accel="tcg", stop_first=False, module=True, ko=None, mix=None,
                 uid=None, window=None, rename_locked=False):
        self.mode = mode
        self.duration = duration if duration is not None else default_duration(pruner)
        self.seed = seed
        self.threads = threads
        self.pruner = pruner
        self.inject_us = inject_us or 0
        self.probability = probability
        self.smp = smp
        self.mem = mem or default_mem(pruner)
        self.timeout = timeout or int(self.duration * 4 + 120)
        self.accel = accel
        self.stop_first = stop_first
        self.module = module
        self.ko = ko
        # the walkers' calls (dcrace-workload --mix); None: the workload's
        # default for the mode (stat=100, open=100), not for cp
        self.mix = mix
        # mode mutate: the walkers' uid (dcrace-workload --uid); None: root
        self.uid = uid
        # dcrace.ko's inject/window (with injection); None: the mode's
        self.window = window if window is not None else default_window(mode)
        # mode mutate: locked renamed to locked.r and back (the workload's
        # --rename-locked)
        self.rename_locked = rename_locked

    def workload_cmd(self):
        w = ["dcrace-workload", "--quiet", "--duration", str(self.duration),
             "--seed", str(self.seed), "--threads", str(self.threads),
             "--mode", self.mode]
        if self.pruner:
            w += ["--pruner", self.pruner]
        if self.mix and self.mode != "cp":
            w += ["--mix", self.mix]
        if self.uid is not None:
            w += ["--uid", str(self.uid)]
        if self.rename_locked:
            w.append("--rename-locked")
        if self.stop_first:
            w.append("--stop-at-first")
        return " ".join(shlex.quote(x) for x in w)

    def guest_script(self):
        """The guest command: the workload, with dcrace.ko's counts around it."""
        d = DEBUGFS
        parts = []
        if self.module:
            if self.inject_us:
                # The comm filter first: dcrace.ko may refuse long delays
                # without one. A refused value stops the run.
                knobs = [("comm", "dcr-walk"), ("probability", self.probability)]
                if self.window is not None:
                    knobs.append(("window", self.window))
                for f, v in knobs + [("delay_us", self.inject_us)]:
                    parts.append("echo %s > %s/inject/%s || { echo 'DCRACE-SETUP-ERROR "
                                 "dcrace.ko refused inject/%s=%s'; exit 1; }" % (v, d, f, f, v))
            # The tree first, so that the ticks below start with the timed run.
            parts += [self.workload_cmd() + " --setup-only >/dev/null || exit 1"]
            parts += ["echo 1 > %s/reset" % d]
            parts += self.trace_start()
            # Once a second: the module's running counts, for per-second
            # timelines (compare --plot). Stopped before the final stats.
            parts += ["tick() { echo \"DCRACE-TICK $(cut -d' ' -f1 /proc/uptime)"
                      " $(grep -E '^(false_enoent|caught|caught_late):' %s/stats | tr '\\n' ' ')\"; }" % d,
                      "(while :; do tick; sleep 1; done) & tickpid=$!"]
        parts.append(self.workload_cmd() + (" --no-setup" if self.module else "") + "; wrc=$?")
        if self.module:
            parts += ["kill $tickpid; wait $tickpid 2>/dev/null", "tick"]
            parts += self.trace_dump()
            parts += ["echo DCRACE-STATS-BEGIN; cat %s/stats; echo DCRACE-STATS-END" % d,
                      "echo DCRACE-PROBES-BEGIN; cat %s/probes; echo DCRACE-PROBES-END" % d,
                      "echo DCRACE-EVENTS-BEGIN; head -n 200 %s/events; echo DCRACE-EVENTS-END" % d]
        parts.append("exit $wrc")
        return "\n".join(parts)

    def trace_start(self):
        """Enable dcrace.ko's per-race trace event, when the module has it:
        a fresh buffer, large enough for a run's events. tracefs is
        mounted if needed: a failed mount stops the run with a setup error
        (only a kernel without tracefs at all goes on without it). A
        module without the event prints DCRACE-TRACE-NONE after the run
        (the harness then compares counts only); with it, the trace
        section (trace_dump()). A log with neither is an infrastructure
        error (logs.parse_trace())."""
        t = TRACEFS
        return [
            "trace_none='dcrace.ko has no %s trace event'" % TRACE_EVENT,
            "if [ ! -e %s/trace ]; then" % t,
            " if grep -qw tracefs %s; then" % FILESYSTEMS,
            "  mount -t tracefs nodev %s || { echo 'DCRACE-SETUP-ERROR mounting tracefs on %s "
            "failed'; exit 1; }" % (t, t),
            " else trace_none='the kernel has no tracefs'; fi",
            "fi",
            "if [ -e %s/events/%s/enable ]; then trace=1" % (t, TRACE_EVENT),
            " echo 0 > %s/tracing_on; echo > %s/trace" % (t, t),
            " echo %d > %s/buffer_size_kb || { echo 'DCRACE-SETUP-ERROR tracefs buffer_size_kb'; exit 1; }"
            % (TRACE_BUFFER_KB, t),
            " echo 1 > %s/events/%s/enable || { echo 'DCRACE-SETUP-ERROR enabling the trace event'; exit 1; }"
            % (t, TRACE_EVENT),
            " echo 1 > %s/tracing_on" % t,
            "else trace=0; fi",
        ]

    def trace_dump(self):
        """After the run: tracing off, the false_* events (false_enoent,
        and the hard-error rule's false_enotdir, false_eacces, ...) and the
        end_caught events (a clean kernel's evidence, per thread and
        errno) between markers, and the events the ring buffer lost
        (overrun and dropped, summed over the CPUs)."""
        t = TRACEFS
        return [
            "if [ $trace = 1 ]; then echo 0 > %s/tracing_on" % t,
            " echo DCRACE-TRACE-BEGIN; grep -E 'dcrace_race: .*verdict=(false_|end_caught )' %s/trace;"
            " echo DCRACE-TRACE-END" % t,
            " lost=0; for f in %s/per_cpu/cpu*/stats; do"
            " for n in $(sed -nE 's/^(overrun|dropped events): *//p' \"$f\"); do"
            " lost=$((lost + n)); done; done" % t,
            " echo \"DCRACE-TRACE-LOST $lost\"",
            "else echo \"DCRACE-TRACE-NONE $trace_none\"; fi",
        ]
