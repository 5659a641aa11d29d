"""Reading a run's serial log: the parse layer (match.py pairs its events
with the failures, judge.py judges the runs).

A run's serial log holds, between markers printed by the guest command:
  DCRACE-RESULT {json}               the workload's one result line
  DCRACE-STATS-BEGIN ... -END        dcrace.ko's debugfs "stats"
  DCRACE-PROBES-BEGIN ... -END       dcrace.ko's debugfs "probes"
  DCRACE-EVENTS-BEGIN ... -END       dcrace.ko's debugfs "events"
  DCRACE-TRACE-BEGIN ... -END        dcrace.ko's dcrace:dcrace_race trace
                                     events with a verdict false_* (false_enoent;
                                     false_enotdir, false_eacces, ... from the
                                     hard-error rule) or end_caught (the
                                     kernel revalidated stale state at a
                                     walk's end: a clean kernel's evidence)
  DCRACE-TRACE-LOST N                trace events the ring buffer lost
  DCRACE-TRACE-NONE reason           the module has no trace event: module
                                     and user space are compared by counts
  DCRACE-EXIT N                      the guest command's exit status
With the module loaded (its stats in the log) the guest script prints
either the trace section or DCRACE-TRACE-NONE, never neither.
Missing or unparsable pieces are infrastructure errors, never "no race".
"""

import errno as _errno
import json
import re

from . import defs


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


# The lookups of the trace event's lookup= field: a step of the walk, open()'s
# last component, the end of an RCU walk that returned a hard error.
LOOKUPS = ("walk", "open", "end")

# The verdicts of a false error, whatever its errno: the events the trace
# section holds (false_enoent, false_enotdir, false_eacces, false_eperm,
# false_error: another errno, named by errno=).
FALSE_PREFIX = "false_"
# The trace section's other events: the walk's own revalidation caught
# stale state that implied a hard error (errno= says which).
END_CAUGHT = "end_caught"
# A stats counter that counts some of a false_* verdict's events again
# (false_enoent_seq_unchanged: false_enoents whose d_seq had not moved).
SUBCOUNT_SUFFIX = "_seq_unchanged"


def false_verdicts(stats):
    """The module's stats counters of false_* verdicts, each once (not the
    sub-counts that count some of them again)."""
    return {k: v for k, v in stats.items()
            if k.startswith(FALSE_PREFIX) and not k.endswith(SUBCOUNT_SUFFIX)}


# The errno name of a call that succeeded: in mode mutate, where no state
# of its path allows success, a false success (a "paths" entry with errno
# "0", counted in false_errors["0"]).
SUCCESS = "0"


def errno_number(name):
    """An errno as the module or the workload names it (ENOENT, EACCES,
    E<number>; 0 or - for none) as a number, or None if unknown."""
    if name in ("0", "-", ""):
        return 0
    m = re.match(r"^E(\d+)$", name)
    if m:
        return int(m.group(1))
    return getattr(_errno, name, None) if re.match(r"^E[A-Z0-9]+$", name) else None


def errno_key(name):
    """The one name of an errno (NAME as above): Python's, else E<number>;
    NAME itself when unknown."""
    n = errno_number(name)
    if n is None:
        return name
    return "0" if n == 0 else _errno.errorcode.get(n, "E%d" % n)


def parse_trace_line(line):
    """The fields of one dcrace_race trace line (TP_printk's key=value
    list after "dcrace_race: "), or None. A line of a module before the
    hard-error rule has no errno=, end=, seq_state=: its errno is the one
    of its result (-2: ENOENT), end and seq_state "-"."""
    m = re.search(r"dcrace_race: (.*)$", line)
    if not m:
        return None
    kv = dict(re.findall(r"(?:^| )([a-z_]+)=(\S*)", m.group(1)))
    try:
        ev = {"verdict": kv["verdict"], "pid": int(kv["pid"]), "comm": kv.get("comm", ""),
              "lookup": kv["lookup"], "component": kv["component"],
              "seq": kv.get("seq", ""), "result": int(kv.get("result", "0")),
              "killer": kv.get("killer", ""), "ns": int(kv["ns"]),
              "end": kv.get("end", "-"), "seq_state": kv.get("seq_state", "-")}
    except (KeyError, ValueError):
        return None
    ev["errno"] = errno_key(kv["errno"] if "errno" in kv else
                            ("E%d" % -ev["result"] if ev["result"] < 0 else "-"))
    return ev if ev["lookup"] in LOOKUPS and errno_number(ev["errno"]) is not None else None


def parse_trace(text, path):
    """(events, lost, caught) from a log's trace section: the module's
    false_* events, the count of events the trace buffer lost, and its
    end_caught events (none in a log of a guest script before them); None
    when the guest said the module has no trace event (DCRACE-TRACE-NONE).
    No section at all, or a started but broken one, is an infrastructure
    error."""
    has_begin = re.search(r"^DCRACE-TRACE-BEGIN$", text, re.M) is not None
    if not has_begin:
        if re.search(r"^DCRACE-TRACE-NONE( |$)", text, re.M):
            return None
        raise InfraError("no trace section (neither DCRACE-TRACE-BEGIN nor DCRACE-TRACE-NONE) "
                         "in %s" % path)
    block = _section(text, "TRACE")
    if block is None:
        raise InfraError("trace events cut off (no DCRACE-TRACE-END) in %s" % path)
    lost = re.findall(r"^DCRACE-TRACE-LOST (\d+)$", text, re.M)
    if not lost:
        raise InfraError("no count of lost trace events in %s" % path)
    events, caught = [], []
    for line in block.splitlines():
        if "dcrace_race:" not in line:
            continue        # console noise between the markers
        ev = parse_trace_line(line)
        if ev is None:
            raise InfraError("unparsable trace event %r in %s" % (line[:120], path))
        if ev["verdict"].startswith(FALSE_PREFIX):
            events.append(ev)
        elif ev["verdict"] == END_CAUGHT:
            caught.append(ev)
    return events, int(lost[-1]), caught


PATH_KEYS = (("path", str), ("tid", int), ("op", str), ("start_ns", int), ("end_ns", int))


def false_total(res):
    """The workload's user-visible false errors, every errno, and its
    false successes (false_errors["0"]): the sum of its false_errors, or
    (a workload before them) its false_enoent; what "paths" lists."""
    fe = res.get("false_errors")
    if isinstance(fe, dict):
        return sum(fe.values())
    return res["false_enoent"]


def user_failures(res, path):
    """The workload's "paths" entries (every user-visible false error, and
    in mode mutate every false success: errno "0"), each the call's path,
    thread, op, errno (ENOENT when a workload before errno= did not say)
    and its start_ns <= end_ns; a thread's calls must not overlap (its
    syscalls are sequential). A list shorter than the
    count (capped, dropped) is an infrastructure error when events are to
    be matched (summarize())."""
    paths = res.get("paths")
    if not isinstance(paths, list):
        raise InfraError("the workload lists no false-ENOENT paths in %s" % path)
    out = []
    for p in paths:
        if not (isinstance(p, dict) and all(isinstance(p.get(k), t) for k, t in PATH_KEYS)):
            raise InfraError("a workload paths entry lacks %s in %s" % (
                "/".join(k for k, _ in PATH_KEYS), path))
        if p["start_ns"] > p["end_ns"]:
            raise InfraError("a workload paths entry ends before it starts in %s" % path)
        e = p.get("errno", "ENOENT")
        if not isinstance(e, str) or errno_number(e) is None:
            raise InfraError("a workload paths entry has no errno name (%.40r) in %s" % (e, path))
        out.append(dict(p, errno=errno_key(e)))
    last = {}
    for p in sorted(out, key=lambda p: p["start_ns"]):
        if p["tid"] in last and p["start_ns"] < last[p["tid"]]:
            raise InfraError("thread %d's failed calls overlap in time in %s" % (p["tid"], path))
        last[p["tid"]] = p["end_ns"]
    return out


REQUIRED_RESULT_KEYS = ("mode", "syscalls", "false_enoent", "per_second",
                        "first_false_enoent_s", "elapsed_s")
# Counts the workload may print; absent ones are 0.
# identity_checks, wrong_objects: the identity oracle (successes checked
# against the objects the setup made; another object met is a wrong one)
OPTIONAL_COUNTS = ("other_errors", "prunes", "gone", "mutations", "locked_renames",
                   "identity_checks", "wrong_objects")


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


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
    for k in ("syscalls", "false_enoent") + OPTIONAL_COUNTS:
        if k in res and (not isinstance(res[k], int) or res[k] < 0):
            raise InfraError("workload result field %s is not a count in %s" % (k, path))
    fe = res.get("false_errors")
    if fe is not None and not (isinstance(fe, dict) and all(
            isinstance(v, int) and v >= 0 and errno_number(k) is not None for k, v in fe.items())):
        raise InfraError("workload result field false_errors is not a count per errno in %s" % path)
    if isinstance(res.get("paths"), list) and len(res["paths"]) > false_total(res):
        raise InfraError("the workload lists %d false-ENOENT paths, more than its count %d, "
                         "in %s" % (len(res["paths"]), false_total(res), path))
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
        tr = parse_trace(text, path)
        if tr is not None:
            out["trace_events"], out["trace_lost"], out["trace_end_caught"] = tr
            out["failures"] = user_failures(res, path)
    dm = _section(text, "DMESG") or ""
    out["splats"] = [l for l in dm.splitlines() if defs.is_splat(l)]
    return out
