#!/bin/bash
# run-guest's decisions, with a fake QEMU (no boot): --tcg auto runs a
# guest that loads or unloads a module more than once single-threaded
# (issue 40: 70-soak #8 hung multi-threaded at its second rmmod), the
# console log level that shows stall backtraces, and a hung or dead guest
# that prints its first kernel report.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=host-scripts/lib.sh
source "$HS/lib.sh"
plan 20

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# module_ops: loads and unloads in guest shell text
t() { module_ops "$1" "$2"; }
res="$(t load 'insmod /x/dcrace.ko a=1') $(t load 'echo insmod; rmmod dcrace') $(t unload 'rmmod dcrace; modprobe -r dcrace')"
res+=" $(t load "for i in 1 2; do insmod \$KO; done") $(t load 'cat /dcrace/copy/insmod.log') $(t load 'modprobe brd rd_nr=2')"
ok "$([[ $res == '1 0 2 2 0 1' ]]; echo $?)" "module_ops counts insmod/modprobe, rmmod/modprobe -r, a loop twice, not a word in a path ($res)"
ok "$([[ $(module_ops load "$(cat "$ROOT/guest/soak.sh")") -gt 1 && $(module_ops unload "$(cat "$ROOT/guest/soak.sh")") -gt 1 ]]; echo $?)" \
	"the soak's script loads and unloads more than once"

# A fake kernel image and a fake QEMU: it records its -accel and -append,
# and writes to the serial file what FAKE_SERIAL holds, then sleeps
# FAKE_SLEEP seconds.
python3 -c "
b = bytearray(1024); b[510] = 0x55; b[511] = 0xAA; b[514:518] = b'HdrS'
open('$tmp/bzImage', 'wb').write(b)"
mkdir -p "$tmp/bin"
cat >"$tmp/bin/qemu-system-x86_64" <<'EOF'
#!/bin/bash
ser=
prev=
for a in "$@"; do
	case $prev in
	-accel) echo "accel $a" >>"$FAKE_ARGS" ;;
	-icount) echo "icount $a" >>"$FAKE_ARGS" ;;
	-append) echo "append $a" >>"$FAKE_ARGS" ;;
	-chardev) ser=${a#*path=} ;;
	esac
	prev=$a
done
# FAKE_NOBOOT: while this file exists, a boot that stops before /init
# (the file removed by the first one when it holds "once")
if [[ -n ${FAKE_NOBOOT:-} && -f $FAKE_NOBOOT ]]; then
	[[ $(cat "$FAKE_NOBOOT") != once ]] || rm -f "$FAKE_NOBOOT"
	printf '[    0.100000] tsc: Unable to calibrate against PIT\n' >"$ser"
	sleep 30
	exit 0
fi
printf '%b' "$FAKE_SERIAL" >"$ser"
sleep "${FAKE_SLEEP:-0}"
EOF
chmod +x "$tmp/bin/qemu-system-x86_64"
export PATH="$tmp/bin:$PATH" FAKE_ARGS=$tmp/args
ko=$tmp/dcrace.ko
: >"$ko"
OKLOG='DCRACE-BOOTED fake cpus=2\nDCRACE-DMESG-BEGIN\nDCRACE-DMESG-END\nDCRACE-EXIT 0\n'

# tcg_of ARGS...: the TCG threading run-guest gave the fake QEMU
tcg_of() {
	: >"$FAKE_ARGS"
	FAKE_SERIAL=$OKLOG "$HS/run-guest" -q --kernel "$tmp/bzImage" --log "$tmp/g.log" "$@" >/dev/null 2>"$tmp/err" || true
	sed -n 's/^accel tcg,thread=//p' "$FAKE_ARGS"
}
r1=$(tcg_of --exec 'true')
r2=$(tcg_of --ko "$ko" --exec 'dcrace-workload; rmmod dcrace')
r3=$(tcg_of --copy "$ko" --exec 'insmod /dcrace/copy/dcrace.ko; rmmod dcrace; insmod /dcrace/copy/dcrace.ko')
r4=$(tcg_of --ko "$ko" --exec 'insmod /dcrace/copy/dcrace.ko x=1')
# shellcheck disable=SC2016 # the script's own $1
printf 'for i in 1 2 3; do\n\tinsmod "$1"\n\trmmod dcrace\ndone\n' >"$tmp/cycle.sh"
r5=$(tcg_of --copy "$tmp/cycle.sh" --exec 'sh /dcrace/copy/cycle.sh /dcrace/copy/dcrace.ko')
r6=$(tcg_of --tcg multi --copy "$tmp/cycle.sh" --exec 'sh /dcrace/copy/cycle.sh x')
ok "$([[ $r1 == multi ]]; echo $?)" "no module: multi-threaded TCG ($r1)"
ok "$([[ $r2 == multi ]]; echo $?)" "--module loaded once, unloaded once: multi-threaded ($r2)"
ok "$([[ $r3 == single ]]; echo $?)" "two insmods in --exec: single-threaded ($r3)"
ok "$([[ $r4 == single ]]; echo $?)" "--module and an insmod in --exec: single-threaded ($r4)"
ok "$([[ $r5 == single ]]; echo $?)" "a copied script that loads in a loop: single-threaded ($r5)"
ok "$([[ $r6 == multi ]]; echo $?)" "--tcg multi given: kept ($r6)"
: >"$FAKE_ARGS"
FAKE_SERIAL=$OKLOG "$HS/run-guest" --kernel "$tmp/bzImage" --log "$tmp/g.log" --copy "$tmp/cycle.sh" --exec 'sh /dcrace/copy/cycle.sh' >/dev/null 2>"$tmp/err" || true
ok "$(grep -q 'tcg auto: single (2 module loads, 2 unloads)' "$tmp/err"; echo $?)" "without -q it says why: $(grep 'tcg auto' "$tmp/err" | head -n 1)"

# --icount: instructions as the guest's clock, one vCPU, single-threaded
: >"$FAKE_ARGS"
FAKE_SERIAL=$OKLOG "$HS/run-guest" -q --smp 1 --icount 4 --kernel "$tmp/bzImage" --log "$tmp/g.log" >/dev/null 2>&1 || true
ok "$(grep -qx 'icount shift=4,sleep=off' "$FAKE_ARGS" && grep -qx 'accel tcg,thread=single' "$FAKE_ARGS"; echo $?)" \
	"--icount 4: QEMU gets -icount shift=4,sleep=off and single-threaded TCG ($(tr '\n' ' ' <"$FAKE_ARGS"))"
res=""
for bad in "--icount 4" "--smp 1 --icount 11" "--smp 1 --icount 4 --tcg multi" "--smp 1 --icount 4 --accel kvm"; do
	rc=0
	# shellcheck disable=SC2086
	"$HS/run-guest" -q $bad --kernel "$tmp/bzImage" >/dev/null 2>"$tmp/err" || rc=$?
	res+="$rc:$(grep -c 'icount' "$tmp/err") "
done
ok "$([[ $res == "$EX_USAGE:1 $EX_USAGE:1 $EX_USAGE:1 $EX_USAGE:1 " ]]; echo $?)" \
	"--icount without --smp 1, shift 11, with --tcg multi or KVM: usage errors naming --icount ($res)"

# a boot that stops before /init is QEMU's: killed after --boot-timeout,
# booted again once (said on stderr); twice is an infrastructure error
echo once >"$tmp/noboot"
rc=0
FAKE_NOBOOT=$tmp/noboot FAKE_SERIAL=$OKLOG "$HS/run-guest" -q --boot-timeout 2 --kernel "$tmp/bzImage" \
	--log "$tmp/nb.log" >/dev/null 2>"$tmp/err" || rc=$?
diag "$(cat "$tmp/err")"
ok "$([[ $rc -eq 0 ]] && grep -q 'did not reach /init within 2 s (its last console line: \[    0.100000\] tsc: Unable to calibrate against PIT); booting it again, once' "$tmp/err" &&
	grep -q '^DCRACE-EXIT 0' "$tmp/nb.log" && grep -q 'Unable to calibrate' "$tmp/nb.log.noboot"; echo $?)" \
	"a boot stopped before /init: killed at --boot-timeout, booted again once, its exit status kept ($rc), the first log kept"
echo always >"$tmp/noboot"
rc=0
FAKE_NOBOOT=$tmp/noboot FAKE_SERIAL=$OKLOG "$HS/run-guest" -q --boot-timeout 2 --kernel "$tmp/bzImage" \
	--log "$tmp/nb2.log" >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc -eq $EX_INFRA ]] && grep -q 'did not reach /init within 2 s, twice' "$tmp/err"; echo $?)" \
	"a guest that never reaches /init: exit $EX_INFRA after two boots ($rc)"

# the console log level: warnings and KERN_DEFAULT backtraces shown
ok "$(grep -q '^append .*loglevel=5 ' "$FAKE_ARGS"; echo $?)" "the console shows level-4 messages by default (loglevel=5)"
: >"$FAKE_ARGS"
FAKE_SERIAL=$OKLOG "$HS/run-guest" -q --loglevel 8 --kernel "$tmp/bzImage" --log "$tmp/g.log" >/dev/null 2>&1 || true
ok "$(grep -q '^append .*loglevel=8 ' "$FAKE_ARGS"; echo $?)" "--loglevel 8 reaches the kernel command line"
rc=0
"$HS/run-guest" -q --loglevel 9 --kernel "$tmp/bzImage" >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc -eq $EX_USAGE ]] && grep -q 'loglevel wants 0..8' "$tmp/err"; echo $?)" "--loglevel 9: usage error ($rc)"

# a hung guest: killed at --timeout, its stall report and backtrace printed
STALL='DCRACE-BOOTED fake cpus=2\nDCRACE-O plain_open_lookups 205\n[   49.800924] rcu: INFO: rcu_preempt self-detected stall on CPU\n[   49.803002] rcu: \t1-....: (6500 ticks this GP)\n[   49.803100] Call Trace:\n[   49.803200]  <TASK>\n[   49.803300]  text_poke_bp_batch+0x1a/0x2b0\n[   49.803400]  arch_unoptimize_kprobes+0x80/0xc0\n'
rc=0
FAKE_SERIAL=$STALL FAKE_SLEEP=30 "$HS/run-guest" -q --timeout 2 --kernel "$tmp/bzImage" --log "$tmp/hung.log" >/dev/null 2>"$tmp/err" || rc=$?
diag "$(cat "$tmp/err")"
ok "$([[ $rc -eq $EX_TIMEOUT ]]; echo $?)" "a hung guest: exit $EX_TIMEOUT (got $rc)"
ok "$(grep -q "first kernel report" "$tmp/err" && grep -q 'self-detected stall on CPU' "$tmp/err" &&
	grep -q 'arch_unoptimize_kprobes+0x80' "$tmp/err" && ! grep -q 'plain_open_lookups' "$tmp/err"; echo $?)" \
	"a hung guest's first stall report and its backtrace are on stderr"

# a guest that died: no exit status, its oops printed
OOPS='DCRACE-BOOTED fake cpus=2\n[    5.1] general protection fault, probably for non-canonical address 0x6b6b6b6b6b6b6b6b\n[    5.2] RIP: 0010:proc_pid_permission+0x10/0x90\n[    5.3] Kernel panic - not syncing: Fatal exception\n'
rc=0
FAKE_SERIAL=$OOPS "$HS/run-guest" -q --kernel "$tmp/bzImage" --log "$tmp/dead.log" >/dev/null 2>"$tmp/err" || rc=$?
diag "$(cat "$tmp/err")"
ok "$([[ $rc -eq $EX_INFRA ]] && grep -q 'general protection fault' "$tmp/err" && grep -q 'RIP: 0010:proc_pid_permission' "$tmp/err"; echo $?)" \
	"a guest that died: exit $EX_INFRA (got $rc), its oops on stderr"

# a guest that finished: no report printed even if its log has one
rc=0
FAKE_SERIAL='DCRACE-BOOTED fake cpus=2\n[ 1.0] WARNING: CPU: 0 PID: 1 at x\nDCRACE-DMESG-BEGIN\nDCRACE-DMESG-END\nDCRACE-EXIT 0\n' \
	"$HS/run-guest" -q --kernel "$tmp/bzImage" --log "$tmp/fine.log" >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc -eq 0 && ! -s $tmp/err ]]; echo $?)" "a guest that finished: its own exit status ($rc), nothing extra on stderr"
done_testing
