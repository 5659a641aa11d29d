"""Booting guests: run-guest as a child in its own process group, its
stderr read while it runs, the whole group killed on SIGTERM/SIGINT."""

import os
import signal
import subprocess
import sys
import threading
import time

from . import argtypes as A
from . import defs
from .logs import InfraError, false_total, read_text
from .match import read_run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HS = os.path.join(ROOT, "host-scripts")


def tool(name):
    """A host script's path; DCRACE_RUN_GUEST overrides run-guest (tests)."""
    if name == "run-guest" and os.environ.get("DCRACE_RUN_GUEST"):
        return os.environ["DCRACE_RUN_GUEST"]
    return os.path.join(HS, name)


class Interrupted(Exception):
    """SIGTERM or SIGINT arrived."""


def _interrupt(signum, frame):
    raise Interrupted(signal.Signals(signum).name)


def catch_signals():
    """Turn SIGTERM and SIGINT into Interrupted, so that the running
    child's process group is killed on the way out."""
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)


def kill_group(p, grace=3.0):
    """SIGTERM the child's process group, SIGKILL what is left after GRACE s."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        end = time.time() + wait
        while time.time() < end:
            try:
                # the group is gone once no member is left
                os.killpg(p.pid, 0)
            except ProcessLookupError:
                p.poll()
                return
            p.poll()
            time.sleep(0.05)
    p.poll()


class Child:
    """A command in its own process group; stdout and stderr read while it
    runs (no pipe fills up), the group killed if the caller leaves early."""

    KEEP = 64 * 1024

    def __init__(self, cmd, tick=None, **popen):
        self.cmd = cmd
        self.tick = tick
        self.popen = popen
        self.out = []
        self.err = []

    def _drain(self, f, into, keep):
        size = 0
        for chunk in iter(lambda: f.read(4096), ""):
            into.append(chunk)
            size += len(chunk)
            while keep and size > keep and len(into) > 1:
                size -= len(into.pop(0))

    def run(self, keep_stdout=True):
        p = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE if keep_stdout else subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, errors="replace",
                             start_new_session=True, **self.popen)
        readers = [threading.Thread(target=self._drain, args=(p.stderr, self.err, self.KEEP),
                                    daemon=True)]
        if keep_stdout:
            readers.append(threading.Thread(target=self._drain, args=(p.stdout, self.out, 0),
                                            daemon=True))
        for t in readers:
            t.start()
        try:
            while p.poll() is None:
                if self.tick:
                    self.tick()
                time.sleep(0.2)
        finally:
            if p.returncode is None:
                kill_group(p)
            else:
                # what the child left behind in its group (a QEMU) goes too
                kill_group(p, grace=1.0)
        for t in readers:
            t.join(5)
        return p.returncode, "".join(self.out), "".join(self.err)


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


def run_guest_cmd(kernel, log, script, timeout, smp=None, mem=None, accel=None,
                  module=False, ko=None, copies=(), append=None, icount=None):
    cmd = [tool("run-guest"), "-q", "--kernel", kernel, "--timeout", str(timeout),
           "--log", log, "--exec", script]
    if icount is not None:
        cmd += ["--icount", str(icount), "--tcg", "single"]
    if append:
        cmd += ["--append", append]
    if smp:
        cmd += ["--smp", str(smp)]
    if mem:
        cmd += ["--mem", mem]
    if accel:
        cmd += ["--accel", accel]
    if module:
        cmd.append("--module")
    if ko:
        cmd += ["--ko", ko]
    for c in copies:
        cmd += ["--copy", c]
    return cmd


def last_line(err):
    lines = err.strip().splitlines()
    return lines[-1] if lines else ""


def run_once(spec, kernel, log, label):
    """Boot KERNEL, run the workload of SPEC, return the parsed log."""
    cmd = run_guest_cmd(kernel, log, spec.guest_script(), spec.timeout, smp=spec.smp,
                        mem=spec.mem, accel=spec.accel, module=spec.module, ko=spec.ko)
    t0 = time.time()

    def tick():
        el = time.time() - t0
        progress("%s: %.0f s elapsed, ~%.0f s of workload left" % (
            label, el, max(0.0, spec.duration + 3 - el)))
    rc, _, err = Child(cmd, tick).run(keep_stdout=False)
    if rc in (defs.EX_USAGE, defs.EX_TIMEOUT, defs.EX_INFRA) or (
            rc != 0 and "DCRACE-RESULT" not in read_text(log)):
        raise InfraError(last_line(err) or
                         "run-guest failed with status %d (log %s)" % (rc, log))
    r = read_run(log, want_module=spec.module)
    if r["exit"] != 0:
        raise InfraError("the workload failed in the guest (exit %d; log %s)" % (r["exit"], log))
    progress_done("%s: done in %.0f s, %s%s" % (
        label, time.time() - t0,
        "%d false errors" % false_total(r["result"]) if spec.mode == "mutate" else
        "%d false ENOENT" % r["result"]["false_enoent"],
        ", module %d false / %d caught" % (r["stats"]["false_enoent"], r["stats"]["caught"])
        if spec.module and spec.mode != "mutate" else
        ", module end_caught %d" % r["stats"].get("end_caught", 0) if spec.module else ""))
    return r


def shown(path):
    """PATH as printed: relative to the current directory when it is under
    it (results/compare-...), so that output shows no machine's paths."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def writable(path, what):
    """Fail before any boot when PATH (an output file) cannot be written
    where it is named."""
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d) or not os.access(d, os.W_OK):
        raise InfraError("cannot write %s %s: no writable directory %s" % (what, path, d))


def results_dir(base, name):
    d = os.path.join(base or os.path.join(ROOT, "results"),
                     "%s-%s-%d" % (name, time.strftime("%Y%m%d-%H%M%S"), os.getpid()))
    try:
        os.makedirs(d, exist_ok=True)
    except OSError as e:
        raise InfraError("cannot make the results directory %s: %s" % (d, e.strerror or e))
    return d


def guarded(prog, body, infra_code=defs.EX_HARNESS_INFRA, infra_msg="infrastructure error",
            infra_stream=None):
    """Run a command's BODY (no arguments, returns the exit code) with the
    signals caught: an InfraError is INFRA_CODE with one line (INFRA_MSG:
    why; on INFRA_STREAM, default stderr), SIGINT/SIGTERM 130, and any other exception INFRA_CODE too, one
    line: never 1 ("the fix does not hold", bisect "bad") by accident."""
    catch_signals()
    try:
        return body()
    except InfraError as e:
        print("%s: %s: %s" % (prog, infra_msg, e), file=infra_stream or sys.stderr)
        return infra_code
    except Interrupted as e:
        sys.stderr.write("\n%s: interrupted (%s)\n" % (prog, e))
        return defs.EX_INTERRUPTED
    except Exception as e:  # pylint: disable=broad-except
        A.internal_error(prog, e)
        return infra_code

