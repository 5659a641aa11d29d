#!/bin/bash
# bench's probe-overhead measurement, host side (no boot): the guest
# script it generates, run with stand-ins for dcrace-workload, insmod and
# rmmod, interleaves every module row between two baseline rows of the
# same workload and arms each probe of the module's table on its own; the
# ratios are computed against those neighbours; the report shows min /
# median / max for both workloads.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 19

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
# stand-ins: the workload prints a result line, insmod logs its arguments
cat >"$tmp/bin/dcrace-workload" <<'EOS'
#!/bin/sh
case "$*" in *--setup-only*) echo 'DCRACE-RESULT {}'; exit 0 ;; esac
echo 'DCRACE-RESULT {"syscalls": 3000, "elapsed_s": 3.0}'
EOS
printf '#!/bin/sh\necho "INSMOD $*"\n' >"$tmp/bin/insmod"
printf '#!/bin/sh\necho RMMOD\n' >"$tmp/bin/rmmod"
printf '#!/bin/sh\n' >"$tmp/bin/sleep"
chmod +x "$tmp/bin"/*
# a module table: one probe off by default (extra), one missing
cat >"$tmp/probes" <<'EOS'
# name symbol kind state(armed|missing|off) hits
walk_component walk_component from-rcu_lookup armed 0
do_lookup lookup_fast kprobe off 0
rcu_lookup __d_lookup_rcu kprobe armed 0
gone gone kprobe missing 0
dentry_kill __dentry_kill kprobe armed 0
walk_return walk_component+0x5 kprobe armed -
walk_exit step_into+0x2e2 kprobe armed -
lookup_caller walk_component+0x3c walk armed 12
lookup_caller path_openat open armed 3
open_return do_filp_open+0x6a kprobe armed -
EOS

py() { (cd "$HS" && python3 -c "$@"); }
py "from dcrace_harness import bench
print(bench.overhead_script(3, 3, 2, 2).replace(bench.DEBUGFS, '$tmp'))" >"$tmp/script.sh"
rc=0
PATH=$tmp/bin:$PATH sh "$tmp/script.sh" >"$tmp/out" 2>&1 || rc=$?
ok "$rc" "the overhead script runs to its end with stand-ins (exit $rc)"
ok "$(grep -qx 'DCRACE-PROBES walk_component:armed do_lookup:off rcu_lookup:armed gone:missing dentry_kill:armed ' "$tmp/out"; echo $?)" \
	"it reports the module's probe table (walk_return, walk_exit, lookup_caller, open_return lines left out)"

# every module row is right between two baseline rows of its workload
bad=$(awk '$1 == "DCRACE-ROW" { n[$3]++; row[$3, n[$3]] = $2 }
	END { for (w in n) for (i = 1; i <= n[w]; i++) {
		r = row[w, i]
		if (r == "base" || r == "warm-up") continue
		if (row[w, i - 1] != "base" || row[w, i + 1] != "base") print w, i, r } }' "$tmp/out")
diag "$bad"
ok "$([[ -z $bad ]] && grep -q '^DCRACE-ROW loaded open ' "$tmp/out"; echo $?)" \
	"every module row (stat and open) has a baseline row of its workload before and after it"
rows=$(grep -c '^DCRACE-ROW loaded ' "$tmp/out" || true)
ok "$([[ $rows -eq 6 ]]; echo $?)" "loaded rows: 3 rounds x 2 workloads (got $rows)"

# per-probe rows, 2 rounds: one bit clear each, extra_probes=1 for the
# probe off by default, none for the missing one
got=$(grep '^INSMOD ' "$tmp/out" | sed 's|^INSMOD /dcrace/copy/dcrace.ko *||' | sort | uniq -c | awk '{$1 = $1; print}' | tr '\n' '|')
# (the skip mask has the table's bits and four more: the walk ends' sites)
want='4|3 sample=10|3 sample=100|2 skip_probes=495|2 skip_probes=507|2 skip_probes=509 extra_probes=1|2 skip_probes=510|'
ok "$([[ $got == "$want" ]]; echo $?)" "insmod parameters: all probes x4 (table, 3 rounds), sample=10 and 100 x3, each probe not missing alone x2 (got $got)"

# ratios: a module row against the mean of its two neighbours; warm-up ignored
r=$(py "from dcrace_harness import bench
o = bench.overhead_rows([('warm-up', 0, 999.0), ('base', 0, 100.0), ('loaded', 0, 50.0), ('base', 0, 300.0),
                         ('only-x', 0, 100.0), ('base', 1, 200.0), ('loaded', 1, 100.0), ('base', 1, 200.0)])
print(o['rows']['loaded']['slowdown_each_round'], o['rows']['loaded']['slowdown'], o['rows']['only-x']['slowdown_each_round'], o['base']['rows'])")
ok "$([[ $r == "[4.0, 2.0] {'min': 2.0, 'median': 3.0, 'max': 4.0} [2.5] 4" ]]; echo $?)" \
	"slowdown = mean of the neighbouring baselines / the row's rate; min/median/max (got $r)"

# the report: the whole parse and render path on the stand-in log
r=$(py "import json
from dcrace_harness import bench
text = open('$tmp/out').read()
seq = {w: [] for w in bench.WORKLOADS}
import re
for m in re.finditer(r'^DCRACE-ROW (\S+) (\S+) (\d+) (\{.*\})$', text, re.M):
    res = json.loads(m.group(4)); seq[m.group(2)].append((m.group(1), int(m.group(3)), res['syscalls'] / res['elapsed_s']))
o = {'row_seconds': 3, 'rounds': 3, 'probe_rounds': 2, 'settle': 2, 'release': 'x',
     'workloads': {w: bench.overhead_rows(seq[w]) for w in bench.WORKLOADS}}
print('\n'.join(bench.overhead_md(o)))")
diag "$r"
ok "$(grep -q '^| dcrace.ko loaded (all default probes) | 1000 / 1000 / 1000 | 1.00x | \*\*1.00x\*\* | 1.00x |$' <<<"$r" &&
	grep -q "^### \`open\` workload" <<<"$r" && grep -q '^| only do_lookup armed | 1000 / 1000 |' <<<"$r"; echo $?)" \
	"the report has min/median/max per row for the stat and the open workload"
ok "$(grep -qF "costs 1.00x on \`stat\`, 1.00x on \`open\`" <<<"$r"; echo $?)" "the summary gives loaded's median for both workloads"
ok "$(grep -q "^- \`rcu_lookup\`: after \`lookup_fast()\`" <<<"$r" && grep -q "^- \`dentry_kill\`: " <<<"$r" &&
	! grep -q "^- \`gone\`" <<<"$r"; echo $?)" \
	"the report says what each measured probe is (and nothing for a probe it does not know)"
# --ab: a second module's rows (loaded-ab) in the same boot, each between
# two baselines, its own insmod
py "from dcrace_harness import bench
print(bench.overhead_script(3, 3, 0, 2, 'dcrace_ab.ko').replace(bench.DEBUGFS, '$tmp'))" >"$tmp/script-ab.sh"
PATH=$tmp/bin:$PATH sh "$tmp/script-ab.sh" >"$tmp/out-ab" 2>&1 || true
nab=$(grep -c '^DCRACE-ROW loaded-ab ' "$tmp/out-ab" || true)
bad=$(awk '$1 == "DCRACE-ROW" { n[$3]++; row[$3, n[$3]] = $2 }
	END { for (w in n) for (i = 1; i <= n[w]; i++) if (row[w, i] == "loaded-ab" &&
		(row[w, i - 1] != "base" || row[w, i + 1] != "base")) print w, i }' "$tmp/out-ab")
ok "$([[ $nab -eq 6 && -z $bad ]] && grep -q '^INSMOD /dcrace/copy/dcrace_ab.ko' "$tmp/out-ab"; echo $?)" \
	"--ab: 3 rounds x 2 workloads of loaded-ab rows (got $nab), each between baselines, from dcrace_ab.ko"

# the JSON names the overhead log relative to the checkout (committed
# docs/benchmarks.json must not carry the machine's absolute path)
mkdir -p "$tmp/outdir"
r=$(py "import os, shutil, types
from dcrace_harness import bench
def boot(kernel, script, log, timeout, copies=()):
    shutil.copy('$tmp/out', log)
bench.boot = boot
bench.build_ko = lambda k: '/x/dcrace.ko'
args = types.SimpleNamespace(kernel='unfixed', rounds=3, row_seconds=3, probe_rounds=2, settle=2, ab=None)
d = os.path.join(bench.ROOT, 'results', 'bench-test-$$')
os.makedirs(d, exist_ok=True)
o = bench.bench_overhead(args, d)
print(o['log'])" 2>"$tmp/err" || true)
diag "$(tail -n 3 "$tmp/err")"
rm -rf "$ROOT/results/bench-test-$$"
ok "$([[ $r == results/bench-test-$$/overhead.log ]]; echo $?)" "bench's JSON names its log relative to the checkout (got $r)"

# bench --icount (bench_icount.py): the guest script with stand-ins for
# dcrace-loop (instructions per call x 16 ns by what is loaded), insmod,
# rmmod; the probes file's form lines are the sites dcrace_null gets
mkdir "$tmp/ibin" "$tmp/ist"
echo none >"$tmp/ist/state"
cat >"$tmp/ibin/dcrace-loop" <<EOS
#!/bin/sh
st=\$(cat $tmp/ist/state)
case "\$st" in none) c=0 ;; dcrace) c=1000 ;; null) c=400 ;; esac
[ "\$1" = open ] && b=5000 || b=2800
b=\$((b + \${BOOT_EXTRA:-0}))
r=1; while [ \$r -le \$4 ]; do echo "DCRACE-LOOP \$1 \$r \$3 \$(( (b + c) * 16 )).000"; r=\$((r + 1)); done
EOS
cat >"$tmp/ibin/insmod" <<EOS
#!/bin/sh
echo "INSMOD \$*"
case "\$1" in *null*) echo null >$tmp/ist/state ;; *) echo dcrace >$tmp/ist/state ;; esac
EOS
printf '#!/bin/sh\necho none >%s/ist/state\n' "$tmp" >"$tmp/ibin/rmmod"
cp "$tmp/bin/sleep" "$tmp/bin/dcrace-workload" "$tmp/ibin/"
chmod +x "$tmp/ibin"/*
mkdir "$tmp/idbg"
{ grep -v '^walk_exit' "$tmp/probes" | grep -v '^gone'
  echo 'terminate_walk terminate_walk kprobe armed 0'
  echo 'form walk_component+0x0/0x160 disabled'
  echo 'form lookup_fast+0x21/0xd0 optimized'
  echo 'form link_path_walk.part.0.constprop.0+0x1dc/0x340 int3 (a call: an optimized probe relocates no branch)'
} >"$tmp/idbg/probes"
# (an int3 line ends in blanks: the next line is a site of its own)
printf 'ffffffff8112e3f2  k  link_path_walk.part.0.constprop.0+0x1dc    \nffffffff8112cd71  k  lookup_fast+0x21    [OPTIMIZED]\n' >"$tmp/ilist"
echo 1 >"$tmp/iopt"
py "from dcrace_harness import bench_icount as b
print(b.script(100, 2, 2).replace(b.DEBUGFS, '$tmp/idbg').replace(b.KPROBES_LIST, '$tmp/ilist').replace(b.OPTIMIZER, '$tmp/iopt'))" >"$tmp/iscript.sh"
rc=0
PATH=$tmp/ibin:$PATH sh "$tmp/iscript.sh" >"$tmp/iout1" 2>&1 || rc=$?
BOOT_EXTRA=14 PATH=$tmp/ibin:$PATH sh "$tmp/iscript.sh" >"$tmp/iout2" 2>&1 || rc=$?
ok "$rc" "the icount script runs to its end with stand-ins, two boots (exit $rc)"
sites='lookup_fast+0x21,link_path_walk.part.0.constprop.0+0x1dc'
nn=$(grep -c "^INSMOD /dcrace/copy/dcrace_null.ko sites=$sites\$" "$tmp/iout1" || true)
nd=$(grep -c '^INSMOD /dcrace/copy/dcrace.ko' "$tmp/iout1" || true)
# loaded, sample=10, sample=100, 4 probes alone (walk_component,
# do_lookup, rcu_lookup, dentry_kill, terminate_walk: 5; then end_return,
# unlazy_call), the optimizer off; null after all but the two samples
ok "$([[ $nd -eq 12 && $nn -eq 9 && $(cat "$tmp/iopt") == 1 ]] && grep -q '^DCRACE-IROW loaded-int3 stat ' "$tmp/iout1"; echo $?)" \
	"dcrace.ko 12 loads, dcrace_null 9 at the armed sites (not the disabled entry), the optimizer off for the int3 rows and back on (got $nd, $nn)"
bad=$(awk '$1 == "DCRACE-IROW" && $4 == 1 { n[$3]++; row[$3, n[$3]] = $2 }
	END { for (o in n) for (i = 1; i <= n[o]; i++) { r = row[o, i]
		if (r == "base" || r == "warm-up") continue
		if (row[o, i + 1] != "base") print o, i, r } }' "$tmp/iout1")
ok "$([[ -z $bad ]]; echo $?)" "every module row of both calls is followed by a baseline row ($bad)"
r=$(py "from dcrace_harness import bench_icount as b
bs = [b.parse(open('$tmp/iout%d' % i).read(), 4) for i in (1, 2)]
c = b.combine(bs)
l = c['rows']['loaded']['stat']; n = c['rows']['null']['stat']
p = [x for x in c['probes'] if x['row'] == 'loaded'][0]
print(l['instr'], l['cost'], l['ratio'], n['cost'], p['stat'], sorted(p['forms'].items()), c['rows']['base']['stat']['apart_pct'], c['worst_apart_pct'])")
ok "$([[ $r == "[3800.0, 3814.0] 1000.0 1.356 400.0 {'total': 1000.0, 'mechanism': 400.0, 'handlers': 600.0} [('link_path_walk.part.0.constprop.0+0x1dc', 'int3'), ('lookup_fast+0x21', 'optimized')] 0.5 0.5" ]]; echo $?)" \
	"instructions = ns / 16; cost against the baselines; handlers = loaded's cost - the empty kprobes'; forms from kprobes/list; boots apart 0.5 % (got $r)"
r=$(py "from dcrace_harness import bench_icount as b
bs = [b.parse(open('$tmp/iout%d' % i).read(), 4) for i in (1, 2)]
c = b.combine(bs); c['release'] = '6.1.192'
print('\n'.join(b.markdown({'shift': 4, 'calls': 100, 'rounds': 2, 'boots': 2, 'kernels': {'unfixed': c}})))")
diag "$(grep -E '^\| (no module|dcrace.ko loaded)' <<<"$r")"
ok "$(grep -q '^| no module (baseline) | 2800 / 2814 | 0.50 % | - | - | 5000 / 5014 |' <<<"$r" &&
	grep -q '^| dcrace.ko loaded (default) | 3800 / 3814 | 0.37 % | +1000 | \*\*1.356x\*\* | 6000 / 6014 | 0.23 % | +1000 | \*\*1.200x\*\* |$' <<<"$r" &&
	grep -qF "| only \`rcu_lookup\` armed | 2 (1 int3, 1 optimized) | +1000 | +400 | +600 |" <<<"$r" &&
	[[ $(grep -n '^| no module' <<<"$r" | head -n 1 | cut -d: -f1) -lt $(grep -n '^| dcrace.ko loaded' <<<"$r" | head -n 1 | cut -d: -f1) ]]; echo $?)" \
	"the instruction table: baseline first, each boot's figures, apart, cost, ratio; the per-probe table splits mechanism and handlers"
r=$(py "import types
from dcrace_harness import bench
args = types.SimpleNamespace(icount_kernels='unfixed,nope', shift=4, calls=100, loop_rounds=2, icount_boots=2, settle=2, ab=None, probe_rounds=1)
try:
    bench.bench_icount_part(args, '/nonexistent')
except bench.InfraError as e:
    print('refused:', e)" 2>&1)
ok "$([[ $r == 'refused: --icount-kernels: no kernel named nope'* ]]; echo $?)" "an unknown --icount-kernels name is refused before any boot ($r)"

# --update: the parts run replace theirs in OUT.json, the others carried
# over; the page says which run measured what; without --only, refused
cp "$ROOT/docs/benchmarks.json" "$tmp/bm.json"
r=$(py "import json
from dcrace_harness import bench, bench_icount
bs = [bench_icount.parse(open('$tmp/iout%d' % i).read(), 4) for i in (1, 2)]
c = bench_icount.combine(bs); c['release'] = '6.1.192'
bench.bench_icount_part = lambda args, outdir: {'shift': 4, 'calls': 100, 'rounds': 2, 'boots': 2, 'settle': 2, 'kernels': {'unfixed': c}}
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    rc = bench.main(['--icount', '--update', '--out', '$tmp/bm'])
d = json.load(open('$tmp/bm.json')); old = json.load(open('$ROOT/docs/benchmarks.json'))
print(rc, d['overhead'] == old['overhead'] and d['first'] == old['first'], sorted(d['measured']), d['measured']['icount']['command'])" 2>"$tmp/uerr")
diag "$(tail -n 2 "$tmp/uerr")"
ok "$([[ $r == "0 True ['first', 'icount', 'overhead', 'pipeline'] host-scripts/bench --icount --update --out $tmp/bm" ]] &&
	grep -q '^## Cost in guest instructions' "$tmp/bm.md" && grep -q '^Measured in 2 runs: the instruction bench by `host-scripts/bench --icount --update' "$tmp/bm.md" &&
	[[ $(grep -n '^## Cost in guest' "$tmp/bm.md" | cut -d: -f1) -lt $(grep -n '^## Probe overhead' "$tmp/bm.md" | cut -d: -f1) ]]; echo $?)" \
	"--icount --update: the instruction section first, the other parts carried over, each part's run named ($r)"
rc=0
(cd "$HS" && python3 -c "from dcrace_harness import bench; import sys; sys.exit(bench.main(['--update', '--out', '$tmp/bm']))") 2>"$tmp/uerr2" || rc=$?
ok "$([[ $rc -eq 64 ]] && grep -q 'needs --only or --icount' "$tmp/uerr2"; echo $?)" "--update without --only: usage error 64 (got $rc)"
done_testing
