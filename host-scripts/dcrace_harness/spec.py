"""What one guest run does: the workload's settings, the guest's memory and
CPUs, whether dcrace.ko is loaded and how the race window is widened."""

import shlex

DEBUGFS = "/sys/kernel/debug/dcrace"


def default_mem(mode):
    """Guest memory: cp copies run short of it, as in Hugh's reproduction."""
    return "192M" if mode == "cp" else "512M"


def default_duration(mode):
    return 60.0 if mode == "cp" else 20.0


class RunSpec:
    """The settings of a run; unset ones get the defaults of the mode."""

    def __init__(self, duration=None, seed=1, threads=2, mode="stat", pruner=None,
                 inject_us=0, probability=100, smp=2, mem=None, timeout=None,
                 accel="tcg", stop_first=False, module=True, ko=None):
        self.mode = mode
        self.duration = duration if duration is not None else default_duration(mode)
        self.seed = seed
        self.threads = threads
        self.pruner = pruner
        self.inject_us = inject_us or 0
        self.probability = probability
        self.smp = smp
        self.mem = mem or default_mem(mode)
        self.timeout = timeout or int(self.duration * 4 + 120)
        self.accel = accel
        self.stop_first = stop_first
        self.module = module
        self.ko = ko

    def workload_cmd(self):
        w = ["dcrace-workload", "--quiet", "--duration", str(self.duration),
             "--seed", str(self.seed), "--threads", str(self.threads),
             "--mode", self.mode]
        if self.pruner:
            w += ["--pruner", self.pruner]
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
                for f, v in (("comm", "dcr-walk"), ("probability", self.probability),
                             ("delay_us", self.inject_us)):
                    parts.append("echo %s > %s/inject/%s || { echo 'DCRACE-SETUP-ERROR "
                                 "dcrace.ko refused inject/%s=%s'; exit 1; }" % (v, d, f, f, v))
            # The tree first, so that the ticks below start with the timed run.
            parts += [self.workload_cmd() + " --setup-only >/dev/null || exit 1"]
            parts += ["echo 1 > %s/reset" % d]
            # Once a second: the module's running counts, for per-second
            # timelines (compare --plot). Stopped before the final stats.
            parts += ["tick() { echo \"DCRACE-TICK $(cut -d' ' -f1 /proc/uptime)"
                      " $(grep -E '^(false_enoent|caught|caught_late):' %s/stats | tr '\\n' ' ')\"; }" % d,
                      "(while :; do tick; sleep 1; done) & tickpid=$!"]
        parts.append(self.workload_cmd() + (" --no-setup" if self.module else "") + "; wrc=$?")
        if self.module:
            parts += ["kill $tickpid; wait $tickpid 2>/dev/null", "tick"]
            parts += ["echo DCRACE-STATS-BEGIN; cat %s/stats; echo DCRACE-STATS-END" % d,
                      "echo DCRACE-PROBES-BEGIN; cat %s/probes; echo DCRACE-PROBES-END" % d,
                      "echo DCRACE-EVENTS-BEGIN; head -n 200 %s/events; echo DCRACE-EVENTS-END" % d]
        parts.append("exit $wrc")
        return "\n".join(parts)
