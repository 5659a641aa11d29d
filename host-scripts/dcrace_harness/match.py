"""Matching dcrace.ko's false_* trace events to the workload's
user-visible false errors (false ENOENTs; in mode mutate any errno its
paths do not allow), one to one: the match layer, between parsing
(logs.py) and judging (judge.py). read_run() is parse + match of one log.
"""

import bisect
import os
import re

from .logs import FALSE_PREFIX, errno_number, false_total, parse_log

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


def allowed_errnos(res):
    """Mode mutate: the errnos (numbers) some path of the walkers allows
    (the result's "allowed", by construction), which the workload never
    lists: an event with one of them cannot be checked from user space.
    Other modes: none."""
    allowed = res.get("allowed") if res.get("mode") == "mutate" else None
    if not isinstance(allowed, dict):
        return set()
    return set(errno_number(e) for errs in allowed.values() if isinstance(errs, list)
               for e in errs if isinstance(e, str)) - {0, None}


def split_hidden(module_only, res):
    """(module-only, hidden): of the unmatched events, those whose errno
    some path allows (allowed_errnos()) are hidden, not module-only: the
    call's result was one a consistent state gives, so user space cannot
    tell (e.g. a false_enoent in mode mutate)."""
    allowed = allowed_errnos(res)
    hidden = [e for e in module_only if errno_number(e["errno"]) in allowed]
    ids = set(id(e) for e in hidden)
    return [e for e in module_only if id(e) not in ids], hidden


def stats_differ(events, stats):
    """Does the trace hold another number of events of some false_*
    verdict than the module's stats count for it (a counter the stats
    have)?"""
    verdicts = set(e["verdict"] for e in events) | set(
        k for k in stats if k.startswith(FALSE_PREFIX) and not k.endswith("_seq_unchanged"))
    return any(v in stats and sum(1 for e in events if e["verdict"] == v) != stats[v]
               for v in verdicts)


def match_run(run):
    """Add run["trace"], the per-event match, to a parsed run that has
    trace events (logs.parse_log()); a run without them is left as is."""
    if "trace_events" not in run:
        return run
    events, res, failures = run["trace_events"], run["result"], run["failures"]
    mine, outside = split_outside(events, workload_tids(res))
    m, u, mo = match_events(mine, failures)
    mo, hidden = split_hidden(mo, res)
    run["trace"] = {"events": len(events), "lost": run["trace_lost"],
                    "paths_listed": len(failures),
                    "paths_dropped": false_total(res) - len(failures),
                    "matched": len(m), "user_only": u, "module_only": mo,
                    "outside": outside, "hidden": hidden,
                    "stats_differ": stats_differ(events, run["stats"])}
    return run


def read_run(path, want_module=True):
    """One run's serial log, parsed and matched; raise InfraError."""
    return match_run(parse_log(path, want_module))

