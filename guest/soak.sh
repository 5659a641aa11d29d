#!/bin/sh
# dcrace soak, run in the guest by host-scripts/soak (busybox sh).
# Usage: soak.sh KO WORKLOAD_SYSCALLS CYCLES
# Prints SOAK-* lines the host checks; the host also scans dmesg. Every
# phase is bounded by count (path lookups, cycles, writes), none by time.
KO=$1
SYSCALLS=${2:-200000}
CYCLES=${3:-100}
D=/sys/kernel/debug/dcrace
WL="dcrace-workload --quiet --seed 1 --threads 2"

say() { echo "SOAK-$*"; }
# Where the time goes: guest uptime at the start of each phase.
phase() { say "PHASE $1 t=$(cut -d' ' -f1 /proc/uptime)"; }

# 1. the default workload with injection, module loaded, for SYSCALLS path
# lookups (its --duration, the workload's longest, only a safety net)
phase workload
insmod "$KO" delay_us=20 comm=dcr-walk verbose=1 || { say "FAIL insmod"; exit 1; }
$WL --max-syscalls "$SYSCALLS" --duration 86400 >/tmp/wl-soak.out
cat /tmp/wl-soak.out
say "WORKLOAD-LOAD $(grep -o '"syscalls":[0-9]*' /tmp/wl-soak.out | cut -d: -f2)"
say "STATS-BEGIN"; cat $D/stats; say "STATS-END"
rmmod dcrace || { say "FAIL rmmod"; exit 1; }

# 2. load/unload cycles while the workload runs, knobs toggled in between.
# The workload runs at nice 19 from here on: its walks go on whenever the
# other vCPU or a waiting insmod leaves room, without starving the shell.
phase cycles
$WL --nice 19 --duration 3600 >/tmp/wl-cycles.out &
wl=$!
n=0
i=0
while [ $i -lt "$CYCLES" ]; do
	i=$((i + 1))
	insmod "$KO" || break
	echo $((i % 2)) >$D/enabled
	echo 1 >$D/reset
	echo $((i % 30)) >$D/inject/delay_us
	echo $((i % 101)) >$D/inject/probability
	echo $((i % 5 + 1)) >$D/inject/interval
	echo $((i % 3 - 1)) >$D/inject/times
	echo $((i % 2)) >$D/inject/verbose
	echo dcr-walk >$D/inject/comm
	cat $D/stats $D/probes $D/events >/dev/null
	echo 1 >$D/enabled
	rmmod dcrace || break
	n=$i
done
kill $wl
wait $wl
say "CYCLES $n"
# the workload's own count: the cycles really ran under load
say "CYCLES-LOAD $(grep -o '"syscalls":[0-9]*' /tmp/wl-cycles.out | cut -d: -f2)"

# 3. hostile input: every writable file, with the workload running
phase hostile
insmod "$KO" || { say "FAIL insmod"; exit 1; }
$WL --nice 19 --duration 3600 >/tmp/wl-hostile.out &
wl=$!
big=$(head -c 4096 /dev/zero | tr '\0' 7)
tried=0
accepted=0
changed=0
# hostile FILE VALUE: must be refused and leave FILE as it was
hostile() {
	before=$(cat "$1" 2>/dev/null)
	tried=$((tried + 1))
	# An empty printf makes no write(2) at all: only check the state.
	if printf '%s' "$2" >"$1" 2>/dev/null && [ -n "$2" ]; then
		accepted=$((accepted + 1))
		say "ACCEPTED $1 <$(printf '%s' "$2" | head -c 40)>"
	fi
	after=$(cat "$1" 2>/dev/null)
	if [ "$before" != "$after" ]; then
		changed=$((changed + 1))
		say "CHANGED $1 <$before> -> <$after>"
	fi
}
numeric="$D/enabled $D/inject/delay_us $D/inject/probability $D/inject/interval $D/inject/times $D/inject/verbose"
for f in $numeric; do
	for v in "" " " "
" "  1" "1 " "abc" "1abc" "0x10" "1.5" "--1" "+-1" "-2" "-100" \
		"99999999999" "9223372036854775807" "9223372036854775808" \
		"18446744073709551616" "-9223372036854775809" "$big" "1
2"; do
		hostile "$f" "$v"
	done
	# out of this knob's range
	case $f in
	*/enabled | */verbose) hostile "$f" 2 ;;
	*/delay_us) hostile "$f" 10001 ;;
	*/probability) hostile "$f" 101 ;;
	*/interval) hostile "$f" 0 ;;
	*/times) hostile "$f" -2 ;;
	esac
	# a partial write: not at offset 0
	before=$(cat "$f")
	tried=$((tried + 1))
	if printf 1 | dd of="$f" bs=1 seek=1 conv=notrunc 2>/dev/null; then
		accepted=$((accepted + 1))
		say "ACCEPTED partial write to $f"
	fi
	[ "$before" = "$(cat "$f")" ] || { changed=$((changed + 1)); say "CHANGED by partial write $f"; }
done
for v in "0" "2" "-1" "abc" "$big" "11" " 1"; do
	tried=$((tried + 1))
	if printf '%s' "$v" >$D/reset 2>/dev/null; then
		accepted=$((accepted + 1))
		say "ACCEPTED reset <$v>"
	fi
done
for v in "a b" "$big" "0123456789abcdef" "tab	x" "x
y"; do
	hostile $D/inject/comm "$v"
done
# concurrent writers: valid and invalid values at once
# Their PIDs are kept here: $(jobs -p) runs in a subshell that has no jobs.
writers=""
for f in $D/inject/delay_us $D/inject/probability $D/enabled; do
	(for j in $(seq 1 200); do echo $((j % 2)) >"$f"; done) &
	writers="$writers $!"
	(for j in $(seq 1 200); do echo x >"$f" 2>/dev/null; done) &
	writers="$writers $!"
done
for p in $writers; do wait "$p"; done
tried=$((tried + 1200))
say "HOSTILE tried=$tried accepted=$accepted changed=$changed"

phase reads
# 4. tiny reads give the same content as one big read (state frozen:
# with enabled=0 not even the reads' own path walks are counted)
echo 0 >$D/enabled
kill $wl
wait $wl
say "HOSTILE-LOAD $(grep -o '"syscalls":[0-9]*' /tmp/wl-hostile.out | cut -d: -f2)"
sleep 1
bad=0
# probes is left out: its hit counts move with every path walk, even idle.
for f in $D/stats $D/events $D/inject/delay_us $D/inject/probability $D/inject/comm; do
	cat "$f" >/tmp/big
	dd if="$f" bs=1 2>/dev/null >/tmp/small
	cmp -s /tmp/big /tmp/small || { bad=$((bad + 1)); say "READ-DIFFERS $f"; diff /tmp/big /tmp/small | head -n 6; }
	dd if="$f" bs=7 skip=1 2>/dev/null >/tmp/skip
	tail -c +8 /tmp/big | cmp -s - /tmp/skip || { bad=$((bad + 1)); say "SEEK-DIFFERS $f"; }
done
say "READS files=5 bad=$bad"
rmmod dcrace || say "FAIL rmmod"

# 5. kmemleak
phase kmemleak
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	sleep 5
	echo scan >/sys/kernel/debug/kmemleak
	leaks=$(grep -c 'unreferenced object' /sys/kernel/debug/kmemleak)
	grep -A12 'unreferenced object' /sys/kernel/debug/kmemleak | head -n 40
	say "KMEMLEAK leaks=$leaks"
else
	say "KMEMLEAK unavailable"
fi
phase end
say "DONE"
