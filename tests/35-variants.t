#!/bin/bash
# host-scripts/variants without a guest (--from canned cells): the checks
# of issue 13's acceptance per cell, the exit codes, the markdown table.
# The real runs are in 60-compare.t (short) and docs/variants.md (the
# matrix).
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 26

tmp_dir
V=$HS/variants

# mkcells DIR SPEC...: canned compare JSONs, one per cell; SPEC is
# kernel:mode:kind:runs:user:module:user_only:module_only:first:walk_caught:open_caught[:JSON]
# (each run of the cell gets these numbers; first "-" for none; JSON: an
# object whose "exit" and "verdict" replace compare's, whose "splats" and
# "trace" go into each run, and whose other keys into each run's result).
mkcells() {
	local d=$1
	shift
	mkdir -p "$d"
	python3 - "$d" "$@" <<'EOF'
import json, sys
d = sys.argv[1]
for spec in sys.argv[2:]:
    k, m, kind, n, u, mf, uo, mo, first, wc, oc, *extra = spec.split(":", 11)
    extra = json.loads(extra[0]) if extra else {}
    doc = {"exit": 2, "verdict": "INCONCLUSIVE: no verdict without an unfixed and a fixed kernel (%s)" % k,
           "settings": {"mix": "stat=50,open=50", "duration": 3}}
    for key in ("exit", "verdict"):
        if key in extra:
            doc[key] = extra.pop(key)
    runs = []
    for _ in range(int(n)):
        r = {"log": "x", "result": {"mode": m, "mix": "stat=50,open=50", "syscalls": 1000,
                                    "false_enoent": int(u), "elapsed_s": 1.0,
                                    "first_false_enoent_s": None if first == "-" else float(first)},
             "stats": {"false_enoent": int(mf), "caught": int(wc) + int(oc), "walk_caught": int(wc),
                       "open_caught": int(oc), "caught_late": 0, "walk_false_enoent": int(mf),
                       "open_false_enoent": 0},
             "trace": {"events": int(mf), "lost": 0, "paths_dropped": 0, "matched": int(mf) - int(mo),
                       "user_only": int(uo), "module_only": int(mo), "outside": 0},
             "splats": []}
        for key, v in extra.items():
            if key in ("splats", "trace"):
                r[key] = v
            else:
                r["result"][key] = v
        runs.append(r)
    doc["runs"] = {k: runs}
    json.dump(doc, open("%s/%s-%s-%s.json" % (d, k.replace("/", "-"), m, kind), "w"))
EOF
}

good=(unfixed:stat:injected:2:5:5:0:0:0.04:1:0 unfixed:stat:natural:2:0:0:0:0:-:0:0
	fixed:stat:injected:2:0:0:0:0:-:9:3 fixed:stat:natural:2:0:0:0:0:-:1:2)
sel=(--kernels "unfixed,fixed" --modes stat)

# 1. all good: exit 0, a table row per cell, "every check holds"
mkcells "$tmp/good" "${good[@]}"
run good "$V" --from "$tmp/good" "${sel[@]}" --out "$tmp/good.md" --json "$tmp/good.json"
ok "$([[ $(rcof good) -eq 0 ]]; echo $?)" "every check holds: exit 0 (got $(rcof good); $(tail -n 1 "$tmp/good.err"))"
ok "$([[ $(grep -c '^| unfixed \| fixed ' "$tmp/good.md") -eq 4 ]] && grep -q '^Result: every check holds$' "$tmp/good.md"; echo $?)" "the table: 4 rows, the result line"
ok "$(grep -q '^| unfixed | stat | injected | 2/2 | 10 | 10 | 10 | 0 | 0 | 0 | 2/2 | 0.040 / 0.040 / 0.040 | 2 / 0 | ok |$' "$tmp/good.md"; echo $?)" \
	"a row: runs reproduced, totals, runs one to one, min/median/max time to first, caught per path"
ok "$(diff "$tmp/good.md" <(head -n "$(wc -l <"$tmp/good.md")" "$tmp/good.out") >/dev/null; echo $?)" "--out writes what is printed"
ok "$([[ $(jq -r '[.cells[] | .runs] | add' "$tmp/good.json") == 8 ]]; echo $?)" "--json: the cells"

# bad CASE WANT DESC SPEC...: the good cells with SPEC replacing theirs.
bad() {
	local name=$1 want=$2 desc=$3 re=$4
	shift 4
	mkcells "$tmp/$name" "${good[@]}"
	mkcells "$tmp/$name" "$@"
	run "$name" "$V" --from "$tmp/$name" "${sel[@]}"
	ok "$([[ $(rcof "$name") -eq $want ]] && grep -qE "$re" "$tmp/$name.out"; echo $?)" \
		"$desc: exit $want (got $(rcof "$name"); $(grep '^Result' "$tmp/$name.out" || true))"
}
bad modonly "$EX_DETECTOR" "a module-only event" '^Result: .*unfixed-stat-natural: 0 user-only \(module missed\), 2 module-only' \
	unfixed:stat:natural:2:0:1:0:1:-:0:0
bad useronly "$EX_DETECTOR" "a user-only failure" '2 user-only \(module missed\), 0 module-only' \
	unfixed:stat:injected:2:5:4:1:0:0.04:1:0
bad norepro "$EX_INCONCLUSIVE" "an injected run that did not reproduce" 'reproduced in 0 of 2 injected runs' \
	unfixed:stat:injected:2:0:0:0:0:-:1:0
bad slow "$EX_INCONCLUSIVE" "time to the first above 1 s" 'time to the first above 1 s in 2 run\(s\) \(max 1.500 s\)' \
	unfixed:stat:injected:2:5:5:0:0:1.5:1:0
bad fixedfalse "$EX_FAIL" "a false ENOENT on fixed" 'fixed-stat-natural: 2 false ENOENT on the fixed kernel' \
	fixed:stat:natural:2:1:1:0:0:0.5:1:0
bad noopen "$EX_INCONCLUSIVE" "fixed without caught on the open path" 'fixed-stat-injected: no evidence the race window was reached: caught on the stat path 18, on the open path 0' \
	fixed:stat:injected:2:0:0:0:0:-:9:0
# the detector failure wins over the others
bad both "$EX_DETECTOR" "a detector failure and a clean kernel's false ENOENT" 'module-only' \
	unfixed:stat:natural:2:0:1:0:1:-:0:0 fixed:stat:natural:2:1:1:0:0:0.5:1:0

# One judge: a cell that compare would not call healthy fails the matrix
# with compare's code, whatever else its counts say (before: "every check
# holds", exit 0). One run per cell, so that the numbers are the cell's.
W='WARNING: CPU: 1 PID: 60 at fs/dcache.c:600 dentry_free+0x1/0x2'
bad exit3 "$EX_HARNESS_INFRA" "a cell whose compare exited 3" 'fixed-stat-injected: compare exited 3: INFRASTRUCTURE ERROR: fixed: x' \
	'fixed:stat:injected:1:0:0:0:0:-:9:3:{"exit":3,"verdict":"INFRASTRUCTURE ERROR: fixed: x"}'
bad exit4 "$EX_DETECTOR" "a cell whose compare exited 4" 'unfixed-stat-natural: compare exited 4' \
	'unfixed:stat:natural:1:0:0:0:0:-:0:0:{"exit":4,"verdict":"DETECTOR FAILURE: unfixed: x"}'
bad splats "$EX_HARNESS_INFRA" "2 kernel splats" 'fixed-stat-injected: 2 kernel splat line\(s\)' \
	"fixed:stat:injected:1:0:0:0:0:-:9:3:{\"splats\":[\"$W\",\"$W\"]}"
bad gone "$EX_HARNESS_INFRA" "3 paths really gone" 'fixed-stat-injected: 3 ENOENT on paths really gone' \
	'fixed:stat:injected:1:0:0:0:0:-:9:3:{"gone":3}'
bad few "$EX_INCONCLUSIVE" "12 syscalls" 'unfixed-stat-injected: 1 run\(s\) with too few syscalls' \
	'unfixed:stat:injected:1:5:5:0:0:0.04:1:0:{"syscalls":12}'
bad other "$EX_INCONCLUSIVE" "9 other errors" 'fixed-stat-natural: 9 other error\(s\) in the workload' \
	'fixed:stat:natural:1:0:0:0:0:-:1:2:{"other_errors":9}'
bad issue "$EX_HARNESS_INFRA" "issue 22's cell: exit 3, 2 splats, gone 3, 12 syscalls, 9 other errors" \
	'fixed-stat-injected: 2 kernel splat.*3 ENOENT on paths really gone.*9 other error.*1 run\(s\) with too few syscalls' \
	"fixed:stat:injected:1:0:0:0:0:-:9:3:{\"exit\":3,\"splats\":[\"$W\",\"$W\"],\"gone\":3,\"syscalls\":12,\"other_errors\":9}"
# Affected only by the workload's user-visible false ENOENTs: a module
# event in another process (the guest's sh) with none is unconfirmed.
bad outside "$EX_INCONCLUSIVE" "an event outside the workload, no user-visible false ENOENT" \
	'unfixed-stat-natural: 1 module false_enoent event\(s\) outside the workload and no user-visible false ENOENT' \
	'unfixed:stat:natural:1:0:1:0:0:-:0:0:{"trace":{"events":1,"lost":0,"paths_dropped":0,"matched":0,"user_only":0,"module_only":0,"outside":1}}'
# An unexpected error is never 1: a malformed cell, an unwritable --json.
mkcells "$tmp/malformed" "${good[@]}"
echo '{"exit": 2, "verdict": "x", "runs": {"fixed": "garbage"}, "settings": {"duration": 3}}' >"$tmp/malformed/fixed-stat-natural.json"
run malformed "$V" --from "$tmp/malformed" "${sel[@]}"
ok "$([[ $(rcof malformed) -eq $EX_HARNESS_INFRA ]] && grep -q 'fixed-stat-natural: a malformed compare JSON' "$tmp/malformed.out" &&
	! grep -q Traceback "$tmp/malformed.err"; echo $?)" \
	"a malformed cell JSON: infrastructure, exit $EX_HARNESS_INFRA, no traceback (got $(rcof malformed); $(tail -n 1 "$tmp/malformed.err"))"
run nojson "$V" --from "$tmp/good" "${sel[@]}" --json /nonexistent/dir/v.json
ok "$([[ $(rcof nojson) -eq $EX_HARNESS_INFRA && $(grep -c . "$tmp/nojson.err") -eq 1 ]] &&
	grep -q 'cannot write --json /nonexistent/dir/v.json' "$tmp/nojson.err"; echo $?)" \
	"variants --json into a missing directory: exit $EX_HARNESS_INFRA, one line (got $(rcof nojson); $(head -c 300 "$tmp/nojson.err"))"

# a cell without its JSON: infrastructure
mkcells "$tmp/missing" "${good[@]}"
rm "$tmp/missing/fixed-stat-natural.json"
run missing "$V" --from "$tmp/missing" "${sel[@]}"
ok "$([[ $(rcof missing) -eq $EX_HARNESS_INFRA ]] && grep -q 'fixed-stat-natural: no compare JSON' "$tmp/missing.out"; echo $?)" \
	"a cell without its compare JSON: exit $EX_HARNESS_INFRA (got $(rcof missing))"

# several runs merged: --from twice, a cell from the directory that has it
# (the last one when both do), the invocations' commands in the header;
# cp-pressure is a mode of its own (the pressure pruner's cells)
mkcells "$tmp/m1" unfixed:stat:injected:2:5:5:0:0:0.04:1:0 unfixed:stat:natural:2:0:0:0:0:-:0:0 \
	fixed:stat:injected:2:0:0:0:0:-:9:3
mkcells "$tmp/m2" fixed:stat:natural:2:0:0:0:0:-:1:0 unfixed:stat:injected:2:7:7:0:0:0.05:1:0 \
	unfixed:cp-pressure:natural:2:1:1:0:0:2.5:0:0
echo '{"command": "host-scripts/variants --runs 2", "date": "d1", "duration": 3, "cp_duration": 5, "load_before": "1", "load_after": "2"}' >"$tmp/m1/meta.json"
echo '{"command": "host-scripts/variants --modes cp-pressure", "date": "d2", "duration": 3, "cp_duration": 5, "load_before": "3", "load_after": "4"}' >"$tmp/m2/meta.json"
run merged "$V" --from "$tmp/m1" --from "$tmp/m2" --kernels unfixed,fixed --modes stat,cp-pressure --kinds natural,injected
ok "$([[ $(rcof merged) -eq $EX_HARNESS_INFRA ]] &&
	grep -q '^| unfixed | stat | injected | 2/2 | 14 | 14 | 14 ' "$tmp/merged.out" &&
	grep -q '^| unfixed | cp-pressure | natural | 2/2 | 2 ' "$tmp/merged.out" &&
	grep -q '^| fixed | stat | natural | 0/2 ' "$tmp/merged.out" &&
	grep -q 'fixed-cp-pressure-natural: no compare JSON' "$tmp/merged.out" &&
	grep -qF "\`host-scripts/variants --runs 2\`; \`host-scripts/variants --modes cp-pressure\`" "$tmp/merged.out" &&
	grep -q 'Run d1 to d2;' "$tmp/merged.out"; echo $?)" \
	"--from twice: each cell from the last directory that has it, cp-pressure rows, both commands and dates in the header, a cell in neither: exit $EX_HARNESS_INFRA (got $(rcof merged))"

# cp-pressure's injected cells: a slow or missed reproduction is shown as
# not checked (exit 0), an unmatched event still fails (exit 4)
mkcells "$tmp/cpp" unfixed:cp-pressure:injected:2:1:1:0:0:2.5:0:0 unfixed:cp-pressure:natural:2:0:0:0:0:-:0:0
run cpp "$V" --from "$tmp/cpp" --kernels unfixed --modes cp-pressure
mkcells "$tmp/cpp2" unfixed:cp-pressure:injected:2:1:2:0:1:2.5:0:0 unfixed:cp-pressure:natural:2:0:0:0:0:-:0:0
run cpp2 "$V" --from "$tmp/cpp2" --kernels unfixed --modes cp-pressure
ok "$([[ $(rcof cpp) -eq 0 && $(rcof cpp2) -eq $EX_DETECTOR ]] &&
	grep -q '^| unfixed | cp-pressure | injected | 2/2 .*| not checked: time to the first above 1 s in 2 run(s) (max 2.500 s) |$' "$tmp/cpp.out" &&
	grep -q '^Result: every check holds$' "$tmp/cpp.out" && grep -q '^Not checked (cp-pressure' "$tmp/cpp.out"; echo $?)" \
	"cp-pressure: a first above 1 s is not checked (exit 0, got $(rcof cpp)); a module-only event fails it (exit $EX_DETECTOR, got $(rcof cpp2))"

# usage errors
run u1 "$V" --modes stat,foo
run u2 "$V" --kinds sometimes
ok "$([[ $(rcof u1) -eq $EX_USAGE && $(rcof u2) -eq $EX_USAGE ]] && [[ $(wc -l <"$tmp/u1.err") -eq 1 ]]; echo $?)" \
	"a bad --modes or --kinds: exit $EX_USAGE, one line (got $(rcof u1), $(rcof u2))"
done_testing
