"""Reading a run's serial log and matching its events (judge.py judges the
parsed runs).

A run's serial log holds, between markers printed by the guest command:
  DCRACE-RESULT {json}               the workload's one result line
  DCRACE-STATS-BEGIN ... -END        dcrace.ko's debugfs "stats"
  DCRACE-PROBES-BEGIN ... -END       dcrace.ko's debugfs "probes"
  DCRACE-EVENTS-BEGIN ... -END       dcrace.ko's debugfs "events"
  DCRACE-TRACE-BEGIN ... -END        dcrace.ko's dcrace:dcrace_race trace
                                     events with verdict=false_enoent
  DCRACE-TRACE-LOST N                trace events the ring buffer lost
  DCRACE-TRACE-NONE reason           the module has no trace event: module
                                     and user space are compared by counts
  DCRACE-EXIT N                      the guest command's exit status
Missing or unparsable pieces are infrastructure errors, never "no race".
"""

import bisect
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


# A module event and a user failure match when the failure came at most
# this long after the event (compare --match-window-ms).
MATCH_WINDOW_NS = 100 * 1000 * 1000
# The module copies a dentry's name into a buffer of this many characters
# at least: a component this long may be a truncated name.
NAME_TRUNCATED_AT = 31


def parse_trace_line(line):
    """The fields of one dcrace_race trace line (TP_printk's key=value
    list after "dcrace_race: "), or None."""
    m = re.search(r"dcrace_race: (.*)$", line)
    if not m:
        return None
    kv = dict(re.findall(r"(?:^| )([a-z_]+)=(\S*)", m.group(1)))
    try:
        return {"verdict": kv["verdict"], "pid": int(kv["pid"]), "comm": kv.get("comm", ""),
                "lookup": kv.get("lookup", ""), "component": kv["component"],
                "seq": kv.get("seq", ""), "result": int(kv.get("result", "0")),
                "killer": kv.get("killer", ""), "ns": int(kv["ns"])}
    except (KeyError, ValueError):
        return None


def parse_trace(text, path):
    """(events, lost) from a log's trace section: the module's false_enoent
    events and the count of events the trace buffer lost; None when the
    module has no trace event (or the log predates it). A started but
    broken section is an infrastructure error."""
    has_begin = re.search(r"^DCRACE-TRACE-BEGIN$", text, re.M) is not None
    if not has_begin:
        return None
    block = _section(text, "TRACE")
    if block is None:
        raise InfraError("trace events cut off (no DCRACE-TRACE-END) in %s" % path)
    lost = re.findall(r"^DCRACE-TRACE-LOST (\d+)$", text, re.M)
    if not lost:
        raise InfraError("no count of lost trace events in %s" % path)
    events = []
    for line in block.splitlines():
        if "dcrace_race:" not in line:
            continue        # console noise between the markers
        ev = parse_trace_line(line)
        if ev is None:
            raise InfraError("unparsable trace event %r in %s" % (line[:120], path))
        if ev["verdict"] == "false_enoent":
            events.append(ev)
    return events, int(lost[-1])


def component_matches(comp, name):
    """Is the module's COMP the path component NAME? The module writes '?'
    for a non-printable or space, and may truncate a long name."""
    if len(comp) > len(name) or (len(comp) < len(name) and len(comp) < NAME_TRUNCATED_AT):
        return False
    return all(a == b or a == "?" for a, b in zip(comp, name))


def match_events(events, failures, window_ns=MATCH_WINDOW_NS):
    """Match module false_enoent EVENTS to the workload's user-visible
    FAILURES ("paths" entries) one to one: same pid/tid, the event's
    component is one of the path's components, and the failure came
    0..window_ns after the event. Greedy in time order: each failure, in
    order of its time, takes the latest unmatched event that fits (a
    thread's syscalls are sequential: its own event is the last one
    before it returned). Returns (matched, user_only, module_only), lists
    of (event, failure), failures and events."""
    by_pid = {}
    for e in sorted(events, key=lambda e: e["ns"]):
        by_pid.setdefault(e["pid"], []).append(e)
    times = {pid: [e["ns"] for e in evs] for pid, evs in by_pid.items()}
    used = set()
    matched, user_only = [], []
    for f in sorted(failures, key=lambda f: f["ns"]):
        comps = [c for c in f["path"].split("/") if c]
        evs = by_pid.get(f["tid"], [])
        best = None
        # from the last event at or before the failure, back in time
        for i in range(bisect.bisect_right(times.get(f["tid"], []), f["ns"]) - 1, -1, -1):
            e = evs[i]
            if f["ns"] - e["ns"] > window_ns:
                break
            if id(e) not in used and any(component_matches(e["component"], c) for c in comps):
                best = e
                break
        if best is None:
            user_only.append(f)
        else:
            used.add(id(best))
            matched.append((best, f))
    module_only = [e for e in sorted(events, key=lambda e: e["ns"]) if id(e) not in used]
    return matched, user_only, module_only


# The workload's walker (copier) threads' name: the threads whose false
# ENOENTs the result lists, when the result does not give their tids.
WALK_COMM = "dcr-walk"


def workload_tids(res):
    """The walkers' thread ids from the result's "tids", or None (a result
    without them: then the walkers are known by their name)."""
    tids = res.get("tids")
    if isinstance(tids, list) and all(isinstance(t, int) for t in tids):
        return set(tids)
    return None


def split_outside(events, tids):
    """(the workload's events, the others'): only the walkers' failures are
    in the result, so only their events can be matched; another process's
    (the guest's shell, the pruner opening drop_caches) is counted as
    outside the workload, never as module-only."""
    mine = [e for e in events if (e["pid"] in tids if tids is not None else e["comm"] == WALK_COMM)]
    ids = set(id(e) for e in mine)
    return mine, [e for e in events if id(e) not in ids]


def user_failures(res, path):
    """The workload's "paths" entries (every user-visible false ENOENT);
    a list shorter than the count (capped, dropped) is an infrastructure
    error when events are to be matched."""
    paths = res.get("paths")
    if not isinstance(paths, list):
        raise InfraError("the workload lists no false-ENOENT paths in %s" % path)
    out = []
    for p in paths:
        if not (isinstance(p, dict) and isinstance(p.get("path"), str)
                and isinstance(p.get("tid"), int) and isinstance(p.get("ns"), int)):
            raise InfraError("a workload paths entry lacks path/tid/ns in %s" % path)
        out.append(p)
    return out


REQUIRED_RESULT_KEYS = ("mode", "syscalls", "false_enoent", "per_second",
                        "first_false_enoent_s", "elapsed_s")
# Counts the workload may print; absent ones are 0.
OPTIONAL_COUNTS = ("other_errors", "prunes", "gone")


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def parse_log(path, want_module=True, window_ns=MATCH_WINDOW_NS):
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
            events, lost = tr
            failures = user_failures(res, path)
            mine, outside = split_outside(events, workload_tids(res))
            m, u, mo = match_events(mine, failures, window_ns)
            out["trace"] = {"events": len(events), "lost": lost,
                            "paths_listed": len(failures),
                            "paths_dropped": max(0, res["false_enoent"] - len(failures)),
                            "matched": len(m), "user_only": u, "module_only": mo,
                            "outside": outside,
                            "stats_differ": len(events) != st["false_enoent"]}
    dm = _section(text, "DMESG") or ""
    out["splats"] = [l for l in dm.splitlines() if defs.is_splat(l)]
    return out
