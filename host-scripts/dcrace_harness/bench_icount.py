"""bench --icount: what dcrace.ko costs in guest instructions.

Under QEMU's -icount shift=S (sleep=off) the guest's clock advances 2^S ns
per instruction, so dcrace-loop (guest/loop.c), timing a loop of stat() or
open() + close() of one path with CLOCK_MONOTONIC inside the guest,
counts instructions whatever the host does. One vCPU, single-threaded TCG
(run-guest --icount).

A boot measures, for stat() and open() of /mnt/d00/f000 (ext2, three
components), rows in this order, each module row followed by a baseline
row (no module):

  base            no module
  loaded          dcrace.ko, default parameters
  null            dcrace_null.ko: empty kprobes at every site dcrace.ko
                  armed in "loaded" (the same addresses): the kprobe
                  mechanism alone
  loaded-s10/100  sample=10, sample=100
  loaded-ab       the --ab module (another dcrace.ko)
  only-P, null-P  each probe P of dcrace's table armed alone, then empty
                  kprobes at exactly the sites that load armed
  loaded-int3,    the kprobe optimizer off (debug.kprobes-optimization=0):
  null-int3       every site a trap

A row's cost is its instructions per call minus the mean of the baseline
rows before and after it; dcrace's handlers cost a row's cost minus its
null row's. Two boots (or more) per kernel, every row compared across
them.
"""

import re
import statistics

NULL_OF = {"loaded": "null", "loaded-int3": "null-int3"}
PATH = "/mnt/d00/f000"
OPS = ["stat", "open"]
DEBUGFS = "/sys/kernel/debug/dcrace"
KPROBES_LIST = "/sys/kernel/debug/kprobes/list"
OPTIMIZER = "/proc/sys/debug/kprobes-optimization"


def probe_table(debugfs):
    """Shell lines, dcrace.ko loaded: its probe table from its "probes"
    file as $probes ("name:state ..."), $n, $all (every skip_probes bit:
    the table's, then the walk ends' sites: 64 open_return, 128
    end_return, 256 unlazy_call, 512 slot_reclaim) and $term
    (terminate_walk's bit)."""
    return [
        "probes=$(grep -v '^#' %s/probes | grep -Ev '^(walk_return|walk_exit|lookup_caller|open_return|"
        "end_return|unlazy_call|slot_reclaim|walk_end|form|site_hits) ' | awk '{print $1 \":\" $4}' "
        "| tr '\\n' ' ')" % debugfs,
        "n=$(echo $probes | wc -w); all=$(( (1 << (n + 4)) - 1 ))",
        "term=0; i=0; for p in $probes; do [ \"${p%%:*}\" = terminate_walk ] && term=$((1 << i)); "
        "i=$((i + 1)); done",
    ]


def probe_rows(after):
    """Shell lines: `mod only-P "skip_probes=..." AFTER` for each probe P
    of $probes not missing (extra_probes=1 for one off by default), then
    the walk ends' sites, which need terminate_walk. AFTER is a format
    with {name}: $name in the loop, the site's name after it."""
    return [
        "i=0",
        "for p in $probes; do",
        "  name=${p%%:*}; extra=",
        "  [ \"${p#*:}\" = off ] && extra=' extra_probes=1'",
        "  if [ \"${p#*:}\" != missing ]; then",
        "    mod only-$name \"skip_probes=$((all & ~(1 << i)))$extra\" %s" % after.format(name="$name"),
        "  fi",
        "  i=$((i + 1))",
        "done",
        "if [ $term -ne 0 ]; then",
        "  mod only-end_return \"skip_probes=$((all & ~(term | (1 << (n + 1)))))\" %s"
        % after.format(name="end_return"),
        "  mod only-unlazy_call \"skip_probes=$((all & ~(term | (1 << (n + 2)))))\" %s"
        % after.format(name="unlazy_call"),
        "fi",
    ]


def script(calls, rounds, settle, ab=None, probe_rows_on=True):
    """The guest side of one boot (busybox sh). AB: the file name of a
    second dcrace.ko in /dcrace/copy/."""
    loop = "dcrace-loop $op %s %d %d" % (PATH, calls, rounds)
    L = [
        "dcrace-workload --quiet --seed 1 --threads 2 --mode stat --setup-only >/dev/null || exit 1",
        "D=%s; KL=%s; OPT=%s" % (DEBUGFS, KPROBES_LIST, OPTIMIZER),
        "ko=/dcrace/copy/dcrace.ko; nko=/dcrace/copy/dcrace_null.ko",
        # row NAME: both loops, their lines named
        "row() { for op in %s; do %s | sed \"s/^DCRACE-LOOP /DCRACE-IROW $1 /\" || exit 1; done; }"
        % (" ".join(OPS), loop),
        # the armed sites of the dcrace.ko loaded now (not the disabled
        # walk_component entry of stack mode), as dcrace_null takes them
        "sites() { grep '^form ' $D/probes | grep -v ' disabled' | awk '{print $2}' | sed 's,/.*,,' "
        "| tr '\\n' ',' | sed 's/,$//'; }",
        "forms() { grep -v '^ *$' $KL | sed \"s/^/DCRACE-IFORM $1 /\"; }",
        # mod ROW PARAMS NULLROW: dcrace.ko with PARAMS, then (NULLROW not
        # -) dcrace_null.ko at the same sites; a baseline after each
        "mod() { insmod $ko $2 || exit 1; sleep %d; s=$(sites); forms $1; "
        "echo \"DCRACE-ISITES $1 $s\"; row $1; rmmod dcrace || exit 1; row base; "
        "[ \"$3\" = - ] && return; [ -n \"$s\" ] || { echo \"DCRACE-ISITES $3 none\"; return; }; "
        "insmod $nko sites=$s || exit 1; sleep %d; forms $3; row $3; rmmod dcrace_null || exit 1; "
        "row base; }" % (settle, settle),
        "insmod $ko || exit 1",
    ] + probe_table("$D") + [
        "rmmod dcrace || exit 1",
        "echo \"DCRACE-PROBES $probes\"",
        # the first loops after the setup are not measured
        "row warm-up; row base",
        "mod loaded '' null",
        "mod loaded-s10 sample=10 -",
        "mod loaded-s100 sample=100 -",
    ]
    if ab:
        L.append("ko=/dcrace/copy/%s; mod loaded-ab '' -; ko=/dcrace/copy/dcrace.ko" % ab)
    if probe_rows_on:
        L += probe_rows("null-{name}")
    L += [
        "if [ -w $OPT ]; then echo 0 > $OPT; mod loaded-int3 '' null-int3; echo 1 > $OPT; "
        "else echo 'DCRACE-ISITES loaded-int3 unavailable'; fi",
    ]
    return "\n".join(L)


def parse(text, shift):
    """One boot's log: {"rows": [(row, op, instructions per call)] in log
    order (median of the loop's rounds), "sites": {row: [site]},
    "forms": {row: {site: form}}, "probes": [(name, state)]}."""
    unit = float(1 << shift)
    rows = []
    for m in re.finditer(r"^DCRACE-IROW (\S+) (stat|open) (\d+) (\d+) ([0-9.]+)$", text, re.M):
        # round 1 starts a loop of its own
        if m.group(3) == "1" or not rows:
            rows.append((m.group(1), m.group(2), []))
        rows[-1][2].append(float(m.group(5)) / unit)
    out = [(n, op, statistics.median(v)) for n, op, v in rows if n != "warm-up"]
    sites, forms = {}, {}
    for m in re.finditer(r"^DCRACE-ISITES (\S+) ?(.*)$", text, re.M):
        v = m.group(2).strip()
        sites[m.group(1)] = [] if v in ("", "none", "unavailable") else v.split(",")
    for m in re.finditer(r"^DCRACE-IFORM (\S+) \S+[ \t]+[kr][ \t]+(\S+)[ \t]*([^\n]*)$", text, re.M):
        flags = m.group(3)
        form = ("ftrace" if "FTRACE" in flags else "optimized" if "OPTIMIZED" in flags
                else "disabled" if "DISABLED" in flags else "int3")
        site = m.group(2)
        forms.setdefault(m.group(1), {})[site] = form
    m = re.search(r"^DCRACE-PROBES (.*)$", text, re.M)
    probes = [tuple(p.split(":", 1)) for p in m.group(1).split()] if m else []
    return {"rows": out, "sites": sites, "forms": forms, "probes": probes}


def costs(rows):
    """Each module row's instructions per call and its cost: minus the
    mean of the baseline rows right before and after it (of its op)."""
    res = {}
    for op in OPS:
        seq = [(n, v) for n, o, v in rows if o == op]
        base = [i for i, (n, _) in enumerate(seq) if n == "base"]
        for i, (n, v) in enumerate(seq):
            if n == "base":
                continue
            near = [seq[j][1] for j in ([b for b in base if b < i][-1:] + [b for b in base if b > i][:1])]
            if not near:
                raise ValueError("row %s (%s) has no baseline row" % (n, op))
            b = statistics.mean(near)
            res.setdefault(n, {})[op] = {"instr": round(v, 1), "base": round(b, 1),
                                         "cost": round(v - b, 1), "ratio": round(v / b, 4)}
        bases = [seq[j][1] for j in base]
        res.setdefault("base", {})[op] = {"instr": round(statistics.median(bases), 1),
                                          "min": round(min(bases), 1), "max": round(max(bases), 1),
                                          "rows": len(bases)}
    return res


def apart(xs):
    """How far apart the boots are: (max - min) / min, in percent."""
    return round(100.0 * (max(xs) - min(xs)) / min(xs), 3) if xs and min(xs) > 0 else None


def combine(boots):
    """BOOTS: parse() of each boot of one kernel. Per row and op: each
    boot's instructions per call, how far apart, the cost (median over
    the boots), and per probe the handler's share."""
    per = [costs(b["rows"]) for b in boots]
    names = list(dict.fromkeys(["base"] + [n for c in per for n in c]))
    rows = {}
    for n in names:
        for op in OPS:
            vals = [c.get(n, {}).get(op) for c in per]
            if any(v is None for v in vals):
                continue
            r = {"instr": [v["instr"] for v in vals], "apart_pct": apart([v["instr"] for v in vals])}
            if n != "base":
                r["cost"] = round(statistics.median(v["cost"] for v in vals), 1)
                r["ratio"] = round(statistics.median(v["ratio"] for v in vals), 3)
                r["cost_apart_pct"] = apart([v["cost"] for v in vals]) if min(v["cost"] for v in vals) > 0 else None
            rows.setdefault(n, {})[op] = r
    probes = []
    for n in names:
        nul = NULL_OF.get(n) or ("null-" + n[len("only-"):] if n.startswith("only-") else None)
        if not nul:
            continue
        entry = {"row": n, "null": nul, "sites": boots[0]["sites"].get(n, []),
                 "forms": boots[0]["forms"].get(nul) or {}}
        for op in OPS:
            a, b = rows.get(n, {}).get(op), rows.get(nul, {}).get(op)
            if a and b:
                entry[op] = {"total": a["cost"], "mechanism": b["cost"],
                             "handlers": round(a["cost"] - b["cost"], 1)}
        probes.append(entry)
    worst = max((r["apart_pct"] for d in rows.values() for r in d.values() if r["apart_pct"] is not None),
                default=None)
    return {"boots": len(boots), "rows": rows, "probes": probes, "worst_apart_pct": worst,
            "probe_table": boots[0]["probes"]}


ROW_TEXT = {
    "base": "no module (baseline)",
    "loaded": "dcrace.ko loaded (default)",
    "null": "empty kprobes at loaded's sites",
    "loaded-s10": "loaded, `sample=10`",
    "loaded-s100": "loaded, `sample=100`",
    "loaded-ab": "the `--ab` module loaded",
    "loaded-int3": "loaded, optimizer off (all int3)",
    "null-int3": "empty kprobes, optimizer off",
}


def row_text(n):
    if n in ROW_TEXT:
        return ROW_TEXT[n]
    if n.startswith("only-"):
        return "only `%s` armed" % n[len("only-"):]
    if n.startswith("null-"):
        return "empty kprobes at `%s`'s sites" % n[len("null-"):]
    return n


def fmt_forms(forms):
    """{site: form} as "N optimized, N int3"."""
    c = {}
    for f in forms.values():
        c[f] = c.get(f, 0) + 1
    return ", ".join("%d %s" % (v, k) for k, v in sorted(c.items())) or "-"


def markdown(ic):
    """The "Cost in guest instructions" section: IC is bench's "icount"."""
    L = ["## Cost in guest instructions (`-icount`)", "",
         "QEMU `-icount shift=%d,sleep=off`, one vCPU, single-threaded TCG: the guest's clock advances "
         "%d ns per instruction, and `dcrace-loop` (guest/loop.c) times %d calls of `stat()` and of "
         "`open()` + `close()` of `%s` (ext2, three components) per round inside the guest, %d rounds "
         "after a warm-up round; a row is the median round, in instructions per call. Each module row "
         "is followed by a baseline row; its cost is its instructions minus the mean of the baselines "
         "before and after it. *empty kprobes* rows load `dcrace_null.ko` at exactly the sites "
         "dcrace.ko armed in the row before (its `probes` file's `form` lines): the kprobe mechanism "
         "alone; dcrace's handlers cost the difference. %d boots per kernel; *apart* is (max - min) / "
         "min over the boots." % (ic["shift"], 1 << ic["shift"], ic["calls"], PATH, ic["rounds"],
                                  ic["boots"]), ""]
    for k, kc in ic["kernels"].items():
        L += ["### %s (%s)" % (k, kc.get("release", "?")), "",
              "| row | stat() instr/call per boot | apart | cost | ratio | open() instr/call per boot | apart | cost | ratio |",
              "|---|---|---|---|---|---|---|---|---|"]
        for n, d in kc["rows"].items():
            cells = []
            for op in OPS:
                r = d.get(op)
                if not r:
                    cells += ["-"] * 4
                    continue
                cells += [" / ".join("%.0f" % x for x in r["instr"]), "%.2f %%" % r["apart_pct"],
                          "-" if n == "base" else "+%.0f" % r["cost"],
                          "-" if n == "base" else "**%.3fx**" % r["ratio"] if n == "loaded" else
                          "%.3fx" % r["ratio"]]
            L.append("| %s | %s |" % (row_text(n), " | ".join(cells)))
        L += ["", "Boots apart, worst row: %.2f %%." % kc["worst_apart_pct"], ""]
        if kc["probes"]:
            L += ["Per probe: instructions per call added by the row, by the empty kprobes at the "
                  "same sites (the mechanism), and the difference (dcrace's handlers):", "",
                  "| row | sites (forms) | stat(): total | mechanism | handlers | open(): total | mechanism | handlers |",
                  "|---|---|---|---|---|---|---|---|"]
            for p in kc["probes"]:
                cells = []
                for op in OPS:
                    c = p.get(op)
                    cells += (["%+.0f" % c["total"], "%+.0f" % c["mechanism"], "%+.0f" % c["handlers"]]
                              if c else ["-"] * 3)
                L.append("| %s | %d (%s) | %s |" % (row_text(p["row"]), len(p["sites"]),
                                                    fmt_forms(p["forms"]), " | ".join(cells)))
            L.append("")
    return L
