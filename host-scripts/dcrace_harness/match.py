"""Matching dcrace.ko's false_* trace events to the workload's
user-visible false errors (false ENOENTs; in mode mutate any errno its
paths do not allow), one to one: the match layer, between parsing
(logs.py) and judging (judge.py). read_run() is parse + match of one log.
"""

import bisect
import os
import re

from .logs import errno_key, errno_number, false_total, false_verdicts, parse_log

DCRACE_H = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "include", "dcrace", "dcrace.h")


def _name_len(path=DCRACE_H):
    """DCRACE_NAME_LEN, read from the module's header (its one definition)."""
    with open(path) as f:
        m = re.search(r"^#define\s+DCRACE_NAME_LEN\s+(\d+)\s*$", f.read(), re.M)
    if not m:
        raise RuntimeError("no DCRACE_NAME_LEN in %s" % path)
    return int(m.group(1))


# The module's component is a NUL-terminated copy of the dentry's name in
# DCRACE_NAME_LEN bytes (dcrace_copy_name()): a name longer than
# NAME_TRUNCATED_AT characters comes out as its first NAME_TRUNCATED_AT.
NAME_TRUNCATED_AT = _name_len() - 1


def component_matches(comp, name):
    """Is the module's COMP the path component NAME? The module writes '?'
    for a non-printable or space, and truncates a name longer than
    NAME_TRUNCATED_AT characters to that many."""
    if len(comp) > len(name) or (len(comp) < len(name) and len(comp) != NAME_TRUNCATED_AT):
        return False
    return all(a == b or a == "?" for a, b in zip(comp, name))


# The workload's calls that go through open()'s last-component lookup
# (open_last_lookups(), the event's lookup=open): open(), openat() and
# opendir() (an openat()). Every call's path walk (lookup=walk) may hold
# an event.
OPEN_OPS = frozenset(("open", "openat", "opendir"))


def event_fits(e, f):
    """Can event E be the one of failed call F (same thread, in time,
    checked apart)? Only with the call's errno (the event's errno=, or
    its result's). A lookup=open event only in an open-type call and on
    the path's last component; a walk event on any of its components; an
    end event (the end of the walk, any call that walks a path) with any
    component: it names the dentry the walk stood on, read at the walk's
    end, and a rename may have renamed it meanwhile (mode mutate renames
    mNN to mNN.t and back); the thread, the call's interval and the
    errno say which call it is."""
    if errno_number(e["errno"]) != errno_number(f.get("errno", "ENOENT")):
        return False
    comps = [c for c in f["path"].split("/") if c]
    if e["lookup"] == "open":
        return f["op"] in OPEN_OPS and bool(comps) and component_matches(e["component"], comps[-1])
    if e["lookup"] == "end":
        return True
    return any(component_matches(e["component"], c) for c in comps)


def match_events(events, failures):
    """Match module false_* EVENTS to the workload's user-visible
    FAILURES ("paths" entries, from user_failures()) one to one: an event
    is the failed call's when the thread is the same (pid == tid), the
    module judged it while the call ran (start_ns <= ns <= end_ns, both
    CLOCK_MONOTONIC) and it fits the call (event_fits(): the same errno,
    the lookup agrees with the op, the component is in the path). A thread's calls do not
    overlap, so an event lies in one call at most; a call holds one event
    at most (its walk ends at the first -ENOENT): a second one is
    module-only. Returns (matched, user_only, module_only), lists of
    (event, failure), failures and events."""
    by_tid = {}
    for f in sorted(failures, key=lambda f: f["start_ns"]):
        by_tid.setdefault(f["tid"], []).append(f)
    starts = {tid: [f["start_ns"] for f in fs] for tid, fs in by_tid.items()}
    taken = set()
    matched, module_only = [], []
    for e in sorted(events, key=lambda e: e["ns"]):
        fs = by_tid.get(e["pid"], [])
        i = bisect.bisect_right(starts.get(e["pid"], []), e["ns"]) - 1
        f = fs[i] if i >= 0 else None
        if f is not None and e["ns"] <= f["end_ns"] and id(f) not in taken and event_fits(e, f):
            taken.add(id(f))
            matched.append((e, f))
        else:
            module_only.append(e)
    user_only = [f for f in sorted(failures, key=lambda f: f["start_ns"]) if id(f) not in taken]
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


# Mode mutate's paths, as the result's "allowed" names them ("m/y", "m",
# "locked/y": its truth table), by component: "m" stands for every mNN
# (and mNN.t, its rename), "locked" for locked and locked.r (its
# --rename-locked name); any other component is itself.
KIND_NAMES = {"m": r"m\d+(?:\.t)?", "locked": r"locked(?:\.r)?"}


def _kind_res(kind):
    return [re.compile(r"(?:%s)\Z" % KIND_NAMES.get(c, re.escape(c))) for c in kind.split("/")]


def path_kind(path, kinds):
    """The entry of KINDS (the truth table's paths) a walked PATH is: the
    longest whose components are PATH's last ones; None if none is."""
    comps = [c for c in path.split("/") if c]
    best = None
    for k in kinds:
        rs = _kind_res(k)
        if (len(rs) <= len(comps) and all(r.match(c) for r, c in zip(rs, comps[-len(rs):]))
                and (best is None or len(rs) > best.count("/") + 1)):
            best = k
    return best


def component_kinds(comp, kinds):
    """The entries of KINDS whose path holds a component named COMP (an
    event's component: the dentry its walk stood on, or looked up)."""
    return [k for k in kinds if any(r.match(comp) for r in _kind_res(k))]


def _call_at(calls, pid, ns):
    """The listed call of thread PID that ran at NS, or None (CALLS: per
    tid, its calls in time order, and their starts)."""
    fs, starts = calls.get(pid, ([], []))
    i = bisect.bisect_right(starts, ns) - 1
    return fs[i] if i >= 0 and ns <= fs[i]["end_ns"] else None


def split_hidden(module_only, res, listed):
    """(module-only, hidden): mode mutate's unmatched events whose errno
    the truth table allows where the event happened are hidden, not
    module-only: the call's result was one a consistent state gives, so
    user space cannot tell (e.g. a false_enoent on mNN). Where: the
    listed call (LISTED: the result's paths) the event falls in (same
    thread, start_ns <= ns <= end_ns), its path's entry; else (the call
    gave an allowed result and is not listed) the entries whose path
    holds the event's component (m03: mNN/y and mNN; locked: locked/y; y:
    both paths with y). An errno allowed on some other path only (with
    --uid, locked/y's EACCES) is no excuse: such an event is module-only,
    a detector failure. Other modes: nothing is hidden."""
    allowed = res.get("allowed") if res.get("mode") == "mutate" else None
    if not isinstance(allowed, dict):
        return module_only, []
    calls = {}
    for f in sorted(listed, key=lambda f: f["start_ns"]):
        fs, starts = calls.setdefault(f["tid"], ([], []))
        fs.append(f)
        starts.append(f["start_ns"])
    hidden, ids = [], set()
    for e in module_only:
        call = _call_at(calls, e["pid"], e["ns"])
        kinds = [path_kind(call["path"], allowed)] if call else component_kinds(e["component"], allowed)
        ok = set(errno_number(x) for k in kinds if k is not None and isinstance(allowed[k], list)
                 for x in allowed[k] if isinstance(x, str)) - {0, None}
        if errno_number(e["errno"]) in ok:
            hidden.append(e)
            ids.add(id(e))
    return [e for e in module_only if id(e) not in ids], hidden


def stats_differ(events, stats):
    """Does the trace hold another number of events of some false_*
    verdict than the module's stats count for it (a counter the stats
    have)?"""
    counts = false_verdicts(stats)
    verdicts = set(e["verdict"] for e in events) | set(counts)
    return any(v in counts and sum(1 for e in events if e["verdict"] == v) != counts[v]
               for v in verdicts)


def caught_by_errno(caught, tids):
    """The walkers' end_caught events (CAUGHT, of the threads TIDS or
    named dcr-walk: split_outside()), counted per errno: the kernel
    revalidated stale state that implied that errno in a walk of the
    workload's own; and the other threads' count."""
    mine, others = split_outside(caught, tids)
    out = {}
    for e in mine:
        k = errno_key(e["errno"])
        out[k] = out.get(k, 0) + 1
    return out, len(others)


def match_run(run):
    """Add run["trace"], the per-event match, to a parsed run that has
    trace events (logs.parse_log()); a run without them is left as is."""
    if "trace_events" not in run:
        return run
    events, res, listed = run["trace_events"], run["result"], run["failures"]
    tids = workload_tids(res)
    # a false success (errno "0") is no module event's: dcrace.ko judges
    # the ends of walks that failed
    failures = [f for f in listed if errno_number(f["errno"]) != 0]
    mine, outside = split_outside(events, tids)
    m, u, mo = match_events(mine, failures)
    mo, hidden = split_hidden(mo, res, listed)
    caught, caught_others = caught_by_errno(run.get("trace_end_caught", []), tids)
    run["trace"] = {"events": len(events), "lost": run["trace_lost"],
                    "paths_listed": len(listed),
                    "paths_dropped": false_total(res) - len(listed),
                    "false_success_listed": len(listed) - len(failures),
                    "matched": len(m), "user_only": u, "module_only": mo,
                    "outside": outside, "hidden": hidden,
                    "end_caught_walkers": caught, "end_caught_others": caught_others,
                    "stats_differ": stats_differ(events, run["stats"])}
    return run


def read_run(path, want_module=True):
    """One run's serial log, parsed and matched; raise InfraError."""
    return match_run(parse_log(path, want_module))

