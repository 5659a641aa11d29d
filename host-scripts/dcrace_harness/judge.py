"""The one judge: compare, check-kernel and variants judge runs here and
nowhere else (docs/design.md, "The judge").

logs.py parses a run's serial log and matches its events; this module
sums a kernel's runs (summarize), says what makes them untrustworthy
(health), whether a kernel expected clean showed that the race window was
reached (evidence), and gives the verdicts: Judgement per kernel,
verdict() for compare, Judgement.bisect() for check-kernel,
Judgement.failures() for a variants cell.

A run is what match.read_run() returns (parsed and matched), or the same run as compare --json
writes it (per-event lists cut to counts): both are judged alike.

A kernel is affected (bad, reproduced) only by user-visible false ENOENTs
of the workload: a dcrace.ko event never makes it so on its own (a
module-only event is a detector failure, an event outside the workload is
unconfirmed).

Two rules, by the runs' workload mode: the NULL-inode rule (a false
ENOENT; the kernel table's expect column) in modes stat, open and cp; the
hard-error rule (a false error of any errno: one no state of the path
allows; the table's errors column) in mode mutate, whose clean kernels
show the window reached: the walkers' own end_caught events per errno the
mode tests (EVIDENCE_ERRNOS), mutations, every state of the truth table
met. A false success (a call that succeeded where no state allows it)
makes a kernel expected clean fail too.
"""

import math

from . import defs
from .logs import OPTIONAL_COUNTS, SUCCESS, InfraError, errno_key, false_total, false_verdicts

NULL_RULE, ERRORS_RULE = "null-inode", "hard-error"

INFRA, DETECTOR, INCONCLUSIVE, FAIL = (defs.EX_HARNESS_INFRA, defs.EX_DETECTOR,
                                       defs.EX_INCONCLUSIVE, defs.EX_FAIL)

# A run that made fewer path lookups than this did not exercise the race.
MIN_SYSCALLS = 100
MIN_SYSCALLS_PER_S = 10

# The errnos mode mutate tests, whose catches a clean kernel must show
# from the walkers' own threads: EACCES, a walker that held a stale
# non-directory nd->inode under a dentry that is a directory now, and
# the kernel revalidated it (may_lookup()'s EACCES, caught).
EVIDENCE_ERRNOS = ("EACCES",)
# The module's walk-end counters summed per kernel (absent in the stats
# of older modules: 0).
END_COUNTERS = ("end_caught", "end_judged", "end_genuine", "end_unvouched", "end_not_judged",
                "slots_reclaimed")


def _count(v):
    """A per-event list (a parsed run) or its length (compare's JSON)."""
    return len(v) if isinstance(v, list) else int(v or 0)


def elapsed_s(res, where):
    """The run's workload seconds; anything but a finite number >= 0 is an
    infrastructure error (the result is garbled)."""
    v = res.get("elapsed_s")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise InfraError("workload result field elapsed_s is not a number of seconds "
                         "(%.40r) in %s" % (v, where))
    return float(v)


def too_few_syscalls(res, where="a run"):
    return res["syscalls"] < max(MIN_SYSCALLS, MIN_SYSCALLS_PER_S * elapsed_s(res, where))


def opens_made(res):
    """Did the run's walkers open files, so that open()'s last component
    was looked up? cp opens what it copies; stat and open modes open when
    their --mix gives open or openat a weight; a result without its mix
    (an older workload) is taken to."""
    if res.get("mode") == "cp" or not isinstance(res.get("mix"), str):
        return True
    for item in res["mix"].split(","):
        op, _, w = item.partition("=")
        if op in ("open", "openat") and w.isdigit() and int(w) > 0:
            return True
    return False


def rule_of(runs):
    """The rule a kernel's RUNS are judged by: the hard-error rule when
    their workload ran mode mutate, else the NULL-inode rule. Runs of both
    judged together are an error of the caller's."""
    modes = set(r["result"].get("mode") == "mutate" for r in runs)
    if len(modes) > 1:
        raise InfraError("runs of mode mutate and of other modes judged together")
    return ERRORS_RULE if modes == {True} else NULL_RULE


def expectation(kernel, rule):
    """A kernel of the table's expectation on RULE: "race" or "clean"."""
    return kernel.errors if rule == ERRORS_RULE else kernel.expect


def by_errno(counts):
    """"EACCES 3, ENOTDIR 1": a count per errno, largest first."""
    return ", ".join("%s %d" % kv for kv in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if kv[1])


def user_false(res):
    """(false errors, false successes) of a run's workload: every errno's
    count but success's, and success's (false_errors["0"])."""
    fe = res.get("false_errors")
    if not isinstance(fe, dict):
        return res["false_enoent"], 0
    ok = sum(v for k, v in fe.items() if errno_key(k) == SUCCESS)
    return false_total(res) - ok, ok


def _add_false(s, res):
    """A run's user-visible false errors, per errno, and false successes."""
    fe = res.get("false_errors")
    if not isinstance(fe, dict):
        fe = {"ENOENT": res["false_enoent"]}
    for k, v in fe.items():
        k = errno_key(k)
        if k != SUCCESS:
            s["user_false_by_errno"][k] = s["user_false_by_errno"].get(k, 0) + v
    errors, ok = user_false(res)
    s["user_false_errors"] += errors
    s["user_false_success"] += ok


def _add_states(s, res):
    """Mode mutate: the truth table (allowed errnos per path) and each
    path's outcomes per errno, summed."""
    allowed = res.get("allowed")
    for kind, errs in (allowed.items() if isinstance(allowed, dict) else ()):
        have = s["allowed"].setdefault(kind, [])
        have.extend(errno_key(e) for e in errs if isinstance(e, str) and errno_key(e) not in have)
    outs = res.get("outcomes_by_path")
    for kind, counts in (outs.items() if isinstance(outs, dict) else ()):
        mine = s["outcomes_by_path"].setdefault(kind, {})
        for e, n in (counts.items() if isinstance(counts, dict) else ()):
            if isinstance(n, int):
                mine[errno_key(e)] = mine.get(errno_key(e), 0) + n
    s["rename_locked"] = s["rename_locked"] or res.get("rename_locked") is True


def _add_trace(s, tr):
    s["runs_traced"] += 1
    s["matched"] += tr["matched"]
    s["user_only"] += _count(tr["user_only"])
    s["module_only"] += _count(tr["module_only"])
    s["outside"] += _count(tr.get("outside", 0))
    s["hidden"] += _count(tr.get("hidden", 0))
    s["trace_lost"] += tr["lost"]
    s["paths_dropped"] += tr["paths_dropped"]
    s["trace_vs_stats"] += int(tr.get("stats_differ", False))
    for k, v in (tr.get("end_caught_walkers") or {}).items():
        s["end_caught_walkers"][k] = s["end_caught_walkers"].get(k, 0) + v
    s["end_caught_others"] += tr.get("end_caught_others", 0)
    if _count(tr["user_only"]) or _count(tr["module_only"]):
        s["agree"] = False


def _add_stats(s, st, res, tr):
    s["module_false_enoent"] += st["false_enoent"]
    s["module_caught"] += st["caught"]
    s["module_caught_late"] += st.get("caught_late", 0)
    s["walk_caught"] += st.get("walk_caught", 0)
    s["open_caught"] += st.get("open_caught", 0)
    s["module_races"] += (st["false_enoent"] + st["caught"] + st.get("caught_late", 0)
                          + st.get("unexpected", 0))
    for k in END_COUNTERS:
        s[k] += st.get(k, 0)
    for k, v in false_verdicts(st).items():
        s["module_false"][k] = s["module_false"].get(k, 0) + v
    if tr is not None:
        _add_trace(s, tr)
    elif s["rule"] == ERRORS_RULE:
        # allowed errnos are never listed: only events can be matched
        s["agree"] = False
        s["runs_untraced_errors"] += 1
    elif st["false_enoent"] != res["false_enoent"]:
        s["agree"] = False
        s["agree_counts"] = False


def summarize(runs):
    """Aggregate the runs of one kernel."""
    s = {"runs": len(runs), "rule": rule_of(runs), "syscalls": 0, "user_false_enoent": 0,
         "user_false_errors": 0, "user_false_by_errno": {}, "module_false": {},
         "user_false_success": 0, "end_caught_walkers": {}, "end_caught_others": 0,
         "allowed": {}, "outcomes_by_path": {}, "rename_locked": False, "hidden": 0,
         "runs_untraced_errors": 0,
         "module_false_enoent": 0, "module_caught": 0, "module_caught_late": 0,
         "walk_caught": 0, "open_caught": 0, "opens": False,
         "module_races": 0, "other_errors": 0, "prunes": 0, "gone": 0,
         "mutations": 0, "locked_renames": 0, "runs_few_syscalls": 0,
         "identity_checks": 0, "wrong_objects": 0, "first_wrong_object": None,
         "agree": True, "first_s": None, "runs_reproduced": 0,
         "splats": 0, "has_module": bool(runs) and all(r.get("stats") for r in runs),
         # per-event matching: runs with trace events; the others fall
         # back to comparing the counts
         "runs_traced": 0, "matched": 0, "user_only": 0, "module_only": 0, "outside": 0,
         "trace_lost": 0, "paths_dropped": 0, "agree_counts": True,
         "trace_vs_stats": 0}
    s.update((k, 0) for k in END_COUNTERS)
    errors = s["rule"] == ERRORS_RULE
    for r in runs:
        res = r["result"]
        s["syscalls"] += res["syscalls"]
        s["user_false_enoent"] += res["false_enoent"]
        _add_false(s, res)
        if errors:
            _add_states(s, res)
        for k in OPTIONAL_COUNTS:
            s[k] += res.get(k, 0)
        if res.get("first_wrong_object") and not s["first_wrong_object"]:
            s["first_wrong_object"] = res["first_wrong_object"]
        if too_few_syscalls(res, r.get("log", "a run")):
            s["runs_few_syscalls"] += 1
        if (user_false(res)[0] if errors else res["false_enoent"]) > 0:
            s["runs_reproduced"] += 1
        s["opens"] = s["opens"] or opens_made(res)
        f = res.get("first_false_error_s" if errors else "first_false_enoent_s")
        if f is not None and (s["first_s"] is None or f < s["first_s"]):
            s["first_s"] = f
        s["splats"] += _count(r.get("splats", []))
        if r.get("stats"):
            _add_stats(s, r["stats"], res, r.get("trace"))
    return s


def affected(s):
    """Bad (expected clean): a user-visible false ENOENT of the workload
    (the hard-error rule: a false error of any errno, or a false
    success), or a call that succeeded on another object than its path
    names (the identity oracle), nothing less."""
    if s["wrong_objects"]:
        return True
    if s["rule"] == ERRORS_RULE:
        return s["user_false_errors"] + s["user_false_success"] > 0
    return s["user_false_enoent"] > 0


def reproduced(s):
    """Reproduced (expected to race): a user-visible false ENOENT (the
    hard-error rule: a false error of any errno; a false success is no
    module event's, and no reproduction of the race)."""
    if s["rule"] == ERRORS_RULE:
        return s["user_false_errors"] > 0
    return s["user_false_enoent"] > 0


def states_unreached(s):
    """Mode mutate: the truth table's states no call met: "PATH ERRNO"
    for each errno a path allows ("0": "PATH succeeded") that none of its
    calls returned, over the runs."""
    out = []
    for kind in sorted(s["allowed"]):
        for e in s["allowed"][kind]:
            if not s["outcomes_by_path"].get(kind, {}).get(e):
                out.append("%s %s" % (kind, "succeeded" if e == SUCCESS else e))
    return out


def states_shown(s):
    """"5/5": the truth table's states met, of all."""
    n = sum(len(v) for v in s["allowed"].values())
    return "%d/%d" % (n - len(states_unreached(s)), n)


def _what(s):
    """What the kernel's rule calls a failure."""
    return "false error" if s["rule"] == ERRORS_RULE else "false ENOENT"


def health(s, need_trace=False):
    """What makes a kernel's runs untrustworthy: [(exit code, reason)].
    Infrastructure (the data is wrong): a kernel splat, an ENOENT on a path
    that was really gone (the workload's tree changed), trace events lost,
    an incomplete paths list, a trace and stats that differ, and with
    NEED_TRACE a run without trace events. Detector (4): an event and a
    failure not matched one to one. Inconclusive (the data is right but
    proves nothing): other errors, too few syscalls, module and user space
    counts differing, module events outside the workload with no
    user-visible false ENOENT to confirm them."""
    out = []
    if s["splats"]:
        out.append((INFRA, "%d kernel splat line(s)" % s["splats"]))
    if s["gone"]:
        out.append((INFRA, "%d ENOENT on paths really gone: the run is invalid" % s["gone"]))
    if need_trace and s["runs_traced"] < s["runs"]:
        out.append((INFRA, "%d run(s) without trace events" % (s["runs"] - s["runs_traced"])))
    if s["trace_lost"]:
        out.append((INFRA, "%d trace event(s) lost: the per-event match is incomplete" % s["trace_lost"]))
    if s["paths_dropped"]:
        out.append((INFRA, "%d false ENOENT missing from the workload's paths list: the "
                    "per-event match is incomplete" % s["paths_dropped"]))
    if s["trace_vs_stats"]:
        out.append((INFRA, "%d run(s) whose trace holds another number of events of a false_* "
                    "verdict than the module's stats count" % s["trace_vs_stats"]))
    if s["user_only"] or s["module_only"]:
        out.append((DETECTOR, "%d user-only (module missed), %d module-only (no user failure) "
                    "%s" % (s["user_only"], s["module_only"], _what(s))))
    if s["other_errors"]:
        out.append((INCONCLUSIVE, "%d other error(s) in the workload" % s["other_errors"]))
    if s["runs_few_syscalls"]:
        out.append((INCONCLUSIVE, "%d run(s) with too few syscalls" % s["runs_few_syscalls"]))
    if s["has_module"] and not s["agree_counts"]:
        out.append((INCONCLUSIVE, "module and user-space counts differ"))
    if s["runs_untraced_errors"]:
        out.append((INCONCLUSIVE, "%d run(s) of mode mutate without trace events: its false "
                    "errors are matched per event only" % s["runs_untraced_errors"]))
    if s["outside"] and not reproduced(s):
        out.append((INCONCLUSIVE, "%d module %s event(s) outside the workload and no "
                    "user-visible %s: unconfirmed" % (
                        s["outside"], "false_*" if s["rule"] == ERRORS_RULE else "false_enoent",
                        _what(s))))
    return out


def evidence(kernel, s):
    """A kernel expected clean and not affected is clean only with evidence
    that the race window was reached: dcrace.ko caught the race on the stat
    path (walk_caught) and, when the walkers opened files, on the open path
    (open_caught), summed over its runs. Without dcrace.ko (check-kernel
    --natural) there is no such evidence to ask for."""
    if (kernel is None or expectation(kernel, s["rule"]) != "clean" or affected(s)
            or not s["has_module"]):
        return []
    if s["rule"] == ERRORS_RULE:
        missing = []
        if not s["mutations"]:
            missing.append("mutations 0 (the mutators changed nothing)")
        for e in EVIDENCE_ERRNOS:
            if not s["end_caught_walkers"].get(e):
                missing.append("end_caught %s of the walkers 0 (dcrace.ko's end_caught events of "
                               "the workload's walker threads, a window the injection's "
                               "window=2 widens)" % e)
        unreached = states_unreached(s)
        if unreached:
            missing.append("states of the truth table not met: %s" % ", ".join(unreached))
        if not missing:
            return []
        return [(INCONCLUSIVE, "no evidence the window was reached: " + "; ".join(missing))]
    if s["walk_caught"] and (s["open_caught"] or not s["opens"]):
        return []
    return [(INCONCLUSIVE, "no evidence the race window was reached: caught on the stat path "
             "%d, on the open path %d%s (dcrace.ko's walk_caught, open_caught)" % (
                 s["walk_caught"], s["open_caught"], "" if s["opens"] else " (no opens made)"))]


class Judgement:
    """One kernel's runs judged: summary, health and evidence problems
    [(exit code, reason)], affected."""

    def __init__(self, name, runs, need_trace=False):
        self.name = name
        self.kernel = defs.KERNELS.get(name)
        self.summary = summarize(runs)
        self.rule = self.summary["rule"]
        # the table's expectation on the runs' rule: race, clean, None
        self.expect = expectation(self.kernel, self.rule) if self.kernel else None
        self.affected = affected(self.summary)
        self.reproduced = reproduced(self.summary)
        self.health = health(self.summary, need_trace)
        self.evidence = evidence(self.kernel, self.summary)

    @property
    def expect_race(self):
        return self.expect == "race"

    @property
    def expect_clean(self):
        return self.expect == "clean"

    @property
    def problems(self):
        return self.health + self.evidence

    def false_shown(self):
        """The user-visible failures: "3 false ENOENT", or on the
        hard-error rule "4 false errors (EACCES 3, ENOTDIR 1)"."""
        s = self.summary
        if self.rule == ERRORS_RULE:
            ok = s["user_false_success"]
            return "%d false error%s (%s)%s" % (
                s["user_false_errors"], "" if s["user_false_errors"] == 1 else "s",
                by_errno(s["user_false_by_errno"]) or "none",
                ", %d false success%s (a call that succeeded where no state allows it)" % (
                    ok, "" if ok == 1 else "es") if ok else "")
        return "%d false ENOENT" % s["user_false_enoent"]

    def failed_clean(self):
        """A kernel expected clean that is affected: (EX_FAIL, reason), or None."""
        if not self.expect_clean or not self.affected:
            return None
        return FAIL, "%s on the %s kernel%s" % (self.false_shown(), self.name,
                                                 " (hard-error rule)" if self.rule == ERRORS_RULE else "")

    def failures(self):
        """Everything one kernel's runs fail, on their own: problems and a
        kernel expected clean that is affected (variants' cells)."""
        f = self.failed_clean()
        return self.problems + ([f] if f else [])

    def expected(self):
        """Does a known kernel's outcome match its table entry? (a row)"""
        if self.kernel is None:
            return "-"
        if self.expect_race:
            return "race: " + ("yes" if self.reproduced else "NOT REPRODUCED")
        if not self.affected and self.evidence:
            return "clean: no evidence"
        return "clean: " + ("NO" if self.affected else "yes")

    def bisect(self):
        """(git bisect run's code, reason): untrustworthy data (a splat, a
        path gone, an incomplete match) cannot test (125); else a
        user-visible false ENOENT is bad (1), even with a detector
        failure or other errors beside it; else any problem cannot test;
        else good (0)."""
        infra = [w for c, w in self.problems if c == INFRA]
        if infra:
            return defs.EX_INFRA, "could not test: " + "; ".join(infra)
        if self.affected:
            if self.rule == ERRORS_RULE:
                s = self.summary
                what = ("false errors" if not s["user_false_success"] else
                        "false errors and successes" if s["user_false_errors"] else "false successes")
                return defs.EX_FAIL, "BAD: the kernel returns %s (%s, user-visible)" % (
                    what, self.false_shown())
            return defs.EX_FAIL, "BAD: the kernel reports false ENOENT (%d user-visible)" % (
                self.summary["user_false_enoent"])
        if self.problems:
            return defs.EX_INFRA, "could not test: " + "; ".join(w for _, w in self.problems)
        return defs.EX_OK, "good: no %s" % _what(self.summary)

    def to_json(self):
        return dict(self.summary, affected=self.affected, reproduced=self.reproduced,
                    expect=self.expected(),
                    problems=[{"exit": c, "why": w} for c, w in self.problems])


def _by_code(judgements, attr, code):
    return ["%s: %s" % (j.name, w) for j in judgements for c, w in getattr(j, attr) if c == code]


def verdict(judgements):
    """(exit code, one-line verdict) for compare's kernels, in this order:
    unhealthy runs (3, then a detector failure 4, then 2); a kernel
    expected clean that is affected (1); one expected clean without
    evidence (2); then a verdict needs an unfixed (race expected) and a
    fixed (clean expected) kernel, and every one expected to race must
    reproduce."""
    for code, head in ((INFRA, "INFRASTRUCTURE ERROR"), (DETECTOR, "DETECTOR FAILURE"),
                       (INCONCLUSIVE, "INCONCLUSIVE")):
        why = _by_code(judgements, "health", code)
        if why:
            return code, "%s: %s" % (head, "; ".join(why))
    for j in judgements:
        f = j.failed_clean()
        if f:
            return FAIL, "FIX DOES NOT HOLD: " + f[1]
    why = _by_code(judgements, "evidence", INCONCLUSIVE)
    if why:
        return INCONCLUSIVE, "INCONCLUSIVE: " + "; ".join(why)
    race = [j for j in judgements if j.expect_race]
    clean = [j for j in judgements if j.expect_clean]
    errors = any(j.rule == ERRORS_RULE for j in judgements)
    if not race or not clean:
        return INCONCLUSIVE, ("INCONCLUSIVE: no verdict without %s (%s)" % (
            "a kernel expected to race and one expected clean on the hard-error rule (the table's "
            "errors column)" if errors else "an unfixed and a fixed kernel",
            ", ".join(j.name for j in judgements)))
    for j in race:
        if not j.reproduced:
            return INCONCLUSIVE, "INCONCLUSIVE: the %s kernel did not reproduce the race%s" % (
                j.name, " (hard-error rule: no user-visible false error)" if errors else "")
    if errors:
        return defs.EX_OK, "hard-error rule holds: %s %s (%s), %s %s clean (the walkers' %s caught at the walk's end: %s)" % (
            ", ".join(j.name for j in race), "reproduces" if len(race) == 1 else "reproduce",
            "; ".join("%s: %s" % (j.name, j.false_shown()) for j in race),
            ", ".join(j.name for j in clean), "is" if len(clean) == 1 else "are",
            "/".join(EVIDENCE_ERRNOS),
            ", ".join("%s %s" % (j.name, "/".join(str(j.summary["end_caught_walkers"].get(e, 0))
                                                   for e in EVIDENCE_ERRNOS)) for j in clean))
    return defs.EX_OK, "fix holds: %s %s (%d false ENOENT), %s %s clean" % (
        ", ".join(j.name for j in race), "reproduces" if len(race) == 1 else "reproduce",
        sum(j.summary["user_false_enoent"] for j in race), ", ".join(j.name for j in clean),
        "is" if len(clean) == 1 else "are")
