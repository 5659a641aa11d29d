#!/bin/bash
# dcrace.ko on the 6.12 line, from the one module source: it builds with
# W=1 against our 6.12 tree and Debian's 6.12 and 6.12-rt headers, loads
# with its self-check and every probe on each, and a short compare on
# 6.12 unfixed and fixed and both Debian kernels matches module events to
# user-visible false ENOENTs one to one, with catches on the stat and the
# open path on Debian's. On PREEMPT_RT: the injection's comm filter read
# while written (a probe handler must not sleep) and insmod/rmmod under
# load. KUnit on 6.12/unfixed.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=host-scripts/lib.sh
source "$HS/lib.sh"
plan 35

tmp_dir
D=/sys/kernel/debug/dcrace
KERNELS="6.12/unfixed 6.12/fixed debian-6.12 debian-6.12-rt"
cycles=${DCRACE_RT_CYCLES:-5}

# logval TAG LOG: the value of the guest's last "TAG value" line in LOG
logval() { sed -n "s/^$1 //p" "$2" | tail -n 1; }
# selfcheck_ok LOG KERNEL: a test point, the load's self-check passed
# (insmod's one line, printed in the guest as "DCRACE-L ...") and open()'s
# last component is judged
selfcheck_ok() {
	local l
	l=$(grep '^DCRACE-L ' "$1" || true)
	diag "$l"
	ok "$(grep -q 'dcrace: loaded: .* open=judged' <<<"$l" && ! grep -q 'self-check failed' <<<"$l"; echo $?)" \
		"$2: the load's self-check passed, open() judged"
}
# no_splat LOG WHAT: a test point, no kernel splat in LOG
no_splat() {
	local s
	s=$(splat "$1")
	diag "$s"
	ok "$([[ -z $s ]]; echo $?)" "$2: no splat"
}

# 1-3. the one source builds against each 6.12 tree, W=1, no warning
declare -A ko
for k in 6.12/unfixed debian-6.12 debian-6.12-rt; do
	rc=0
	ko[$k]=$("$HS/build-module" --kernel "$k" 2>"$tmp/build.err") || rc=$?
	vm=$(modinfo -F vermagic "${ko[$k]:-/nonexistent}" 2>/dev/null || true)
	diag "$(tail -n 3 "$tmp/build.err")"
	ok "$([[ $rc -eq 0 && $vm == 6.12.* ]]; echo $?)" "build-module --kernel $k: W=1, no warning (vermagic ${vm:-none})"
done

# 4-16. one compare over the four kernels, the default mix (stat and
# open), injected: a verdict, one-to-one matching, catches per path
run cmp "$HS/compare" --kernels "${KERNELS// /,}" --duration 5 \
	--json "$tmp/c.json" --results "$T_RESULTS"
diag "$(cat "$tmp/cmp.out")"
ok "$([[ $(rcof cmp) -eq 0 ]]; echo $?)" "compare on 6.12/unfixed, 6.12/fixed, debian-6.12, debian-6.12-rt: the fix holds (exit $(rcof cmp); $(tail -n 1 "$tmp/cmp.err"))"
# kernel -> "user module caught matched user_only module_only walk_caught
# open_caught early_test" and the probe table's verdict
jqk() { jq -r "$1" "$tmp/c.json" 2>/dev/null || echo x; }
for k in $KERNELS; do
	read -r u m c mt uo mo wc oc < <(jqk "(.kernels[\"$k\"] | [.user_false_enoent, .module_false_enoent, .module_caught, .matched, .user_only, .module_only] | map(tostring) | join(\" \")) + \" \" + (.runs[\"$k\"][0].stats | [.walk_caught, .open_caught] | map(tostring) | join(\" \"))" || echo x)
	if [[ $(kernel_field "$k" expect) == race ]]; then
		ok "$(is_count "$u" "$mt" && [[ $u -gt 0 && $mt == "$u" && $uo == 0 && $mo == 0 ]]; echo $?)" \
			"$k reproduces, every event matched one to one (user $u, matched $mt, user-only $uo, module-only $mo)"
		ok "$([[ $m == "$u" ]]; echo $?)" "$k: module false_enoent = user-visible ($m = $u)"
	else
		ok "$([[ $u == 0 && $m == 0 && $uo == 0 && $mo == 0 ]]; echo $?)" \
			"$k: 0 user-visible, 0 module false ENOENT, nothing unmatched (user $u, module $m, user-only $uo, module-only $mo)"
		# the open path's catches are few with this tree (a file's dentry
		# is rarely cached when looked up again): below, on a hot tree
		ok "$(is_count "$wc" && [[ $wc -gt 0 ]]; echo $?)" \
			"$k: caught on the stat path (walk_caught $wc, open_caught $oc; caught $c)"
	fi
	# every probe and lookup_fast() caller found: the required probes and
	# terminate_walk armed, walk_component's and open()'s calls of
	# lookup_fast() tracked, no untracked caller
	pr=$(jqk ".runs[\"$k\"][0].probes | map(\"\\(.name):\\(.kind):\\(.state)\") | join(\" \")")
	ok "$(for p in rcu_lookup step_into dentry_kill terminate_walk; do grep -qE "(^| )$p:[^ ]*:armed( |$)" <<<"$pr" || exit 1; done
		grep -qE '(^| )walk_component:[^ ]*:armed( |$)' <<<"$pr" &&
		grep -qE '(^| )lookup_caller:walk:tracked( |$)' <<<"$pr" &&
		grep -qE '(^| )lookup_caller:open:tracked( |$)' <<<"$pr" &&
		! grep -qE '(^| )lookup_caller:(open:missing|other:)' <<<"$pr" &&
		grep -qE '(^| )open_return:kprobe:armed( |$)' <<<"$pr"; echo $?)" \
		"$k: every probe and every caller of lookup_fast() found ($(tr ' ' '\n' <<<"$pr" | grep -cE ':(armed|tracked)$') armed or tracked)"
done

# 17-26. Debian's 6.12 and 6.12-rt, one guest each: the open path's
# catches on a hot tree (one directory of 8 files, so that the files'
# dentries are cached when looked up again), injected, while the comm
# filter is rewritten in a loop (on PREEMPT_RT its reader in the
# rcu_lookup probe must not sleep: before the fix, "scheduling while
# atomic", then a kernel BUG); then where the NULL-inode test is, learnt
# (early_test=-1) from a real negative dentry looked up twice: Debian's
# 6.12 has none before step_into() (the kernel table's 0)
gcc -O2 -static -o "$tmp/cw" "$ROOT/tests/workload/comm-writer.c"
for k in debian-6.12 debian-6.12-rt; do
	log=$T_RESULTS/line612-open-$k.log
	rc=0
	"$HS/run-guest" -q --kernel "$k" --module --module-params early_test=-1 \
		--timeout 300 --log "$log" --copy "$tmp/cw" --exec "
dmesg | grep -E 'dcrace: (loaded|self-check)' | sed 's/^/DCRACE-L /'
echo 20 > $D/inject/delay_us; echo dcr-walk > $D/inject/comm
/dcrace/copy/cw 6 &
dcrace-workload --quiet --mode open --dirs 1 --files 8 --duration 5 --max-paths 0 >/dev/null
wait
grep -E '^(injected_delays|open_caught|open_false_enoent|false_enoent):' $D/stats | sed 's/^/DCRACE-S /'
stat /mnt/nope; stat /mnt/nope
echo DCRACE-EARLY \$(sed -n 's/^early_test: //p' $D/stats)" >/dev/null 2>&1 || rc=$?
	w=$(logval "comm writes:" "$log")
	inj=$(logval "DCRACE-S injected_delays:" "$log")
	oc=$(logval "DCRACE-S open_caught:" "$log")
	fe=$(logval "DCRACE-S false_enoent:" "$log")
	selfcheck_ok "$log" "$k"
	ok "$([[ $rc -eq 0 ]] && is_count "$w" "$inj" && [[ $w -gt 10000 && $inj -gt 0 ]]; echo $?)" \
		"$k: comm filter written $w times while $inj lookups were delayed (exit $rc)"
	ok "$(is_count "$oc" && [[ $oc -gt 0 && $fe == 0 ]]; echo $?)" \
		"$k: caught on the open path, no false ENOENT (open_caught $oc, false_enoent $fe)"
	no_splat "$log" "$k, the comm filter rewritten under injection"
	early=$(logval DCRACE-EARLY "$log")
	ok "$([[ $early == 0 && $(kernel_field "$k" early_test) == 0 ]]; echo $?)" \
		"early_test learnt on $k: 0, as the kernel table says (got ${early:-nothing})"
done

# 27-28. PREEMPT_RT: insmod/rmmod under load
log=$T_RESULTS/line612-rt-cycles.log
rc=0
# single-threaded TCG (run-guest's --tcg auto): loading and unloading
# under load (see run-guest --help)
"$HS/run-guest" -q --kernel debian-6.12-rt --timeout 400 --log "$log" \
	--copy "${ko[debian-6.12-rt]}" --exec "
dcrace-workload --quiet --nice 19 --duration 3600 --mix stat=50,open=50 >/tmp/wl.out & wl=\$!
n=0
for i in \$(seq 1 $cycles); do
	insmod /dcrace/copy/dcrace.ko delay_us=\$((i * 5)) comm=dcr-walk || break
	sleep 1
	grep -E '^(walk_steps|open_lookups):' $D/stats | tr '\\n' ' '; echo
	echo dcr-walk > $D/inject/comm; echo 1 > $D/reset
	rmmod dcrace || break
	n=\$i
done
kill \$wl; wait \$wl
echo DCRACE-CYCLES \$n
echo DCRACE-LOAD \$(grep -o '\"syscalls\":[0-9]*' /tmp/wl.out | cut -d: -f2)" >/dev/null || rc=$?
cyc=$(logval DCRACE-CYCLES "$log")
load=$(logval DCRACE-LOAD "$log")
ok "$([[ $rc -eq 0 && $cyc == "$cycles" ]] && is_count "$load" && [[ $load -gt 0 ]]; echo $?)" \
	"debian-6.12-rt: $cycles insmod/rmmod cycles under load (got ${cyc:-none}; $load lookups meanwhile)"
no_splat "$log" "debian-6.12-rt, the cycles"

# 29-35. KUnit on 6.12/unfixed; in the same guest, where the NULL-inode
# test is, learnt (early_test=-1) from a real negative dentry looked up
# twice: patch 0001 puts it in walk_component() on 6.12 as on 6.1 (the
# kernel table's 1)
log=$T_RESULTS/kunit-6.12.log
rc=0
kko=$("$HS/build-module" --kunit --kernel 6.12/unfixed) || rc=$?
ok "$rc" "build-module --kunit --kernel 6.12/unfixed"
rc=0
"$HS/run-guest" -q --kernel 6.12/unfixed --timeout 200 --log "$log" --copy "${kko:-/nonexistent}" \
	--copy "${ko[6.12/unfixed]}" --exec "insmod /dcrace/copy/dcrace_kunit.ko && rmmod dcrace_kunit &&
insmod /dcrace/copy/dcrace.ko early_test=-1 && stat /mnt/nope; stat /mnt/nope
dmesg | grep -E 'dcrace: (loaded|self-check)' | sed 's/^/DCRACE-L /'
echo DCRACE-EARLY \$(sed -n 's/^early_test: //p' $D/stats)" >/dev/null || rc=$?
suites=$(grep -cE '^\[[ 0-9.]*\] ok [0-9]+ dcrace_(oracle|ring|knobs|decode)$' "$log" || true)
bad=$(grep -cE '^\[[ 0-9.]*\] +not ok ' "$log" || true)
ok "$([[ $suites -eq 4 && $bad -eq 0 ]]; echo $?)" "KUnit on 6.12/unfixed: 4 suites passed, no case failed"
selfcheck_ok "$log" 6.12/unfixed
early=$(logval DCRACE-EARLY "$log")
ok "$([[ $early == 1 ]]; echo $?)" "early_test learnt on 6.12/unfixed: 1 (got ${early:-nothing})"
ok "$([[ $(kernel_field 6.12/unfixed early_test) == 1 && $(kernel_field 6.12/fixed early_test) == 1 ]]; echo $?)" \
	"the kernel table says early_test 1 for 6.12/unfixed and 6.12/fixed"
ok "$rc" "KUnit guest on 6.12/unfixed: exit 0 (got $rc)"
no_splat "$log" "KUnit guest on 6.12/unfixed"
done_testing
