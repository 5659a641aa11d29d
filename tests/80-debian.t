#!/bin/bash
# dcrace on Debian's own stock kernel (linux-image-6.1.0-*-amd64 as the
# archive serves it): fetched and unpacked into the cache, module built
# against its headers, Debian's modules loaded in the guest by kmod, and
# the default injected workload: no false ENOENT, races caught.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 18

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# What the host has installed: the fetch must change none of it.
host_state() {
	ls -la /boot /lib/modules 2>&1 || true
	dpkg-query -W -f '${Package} ${Version} ${Status}\n' 'linux-image-*' 'linux-headers-*' 2>&1 || true
}
host_state >"$tmp/host.before"

# 1-2. fetch (cached after the first time; make check fetched it already)
rc=0
"$HS/build-kernels" --variant debian >"$tmp/fetch" 2>"$tmp/fetch.err" || rc=$?
ok "$rc" "build-kernels --variant debian fetches Debian's kernel (exit $rc)"
read -r _ vmlinuz headers <"$tmp/fetch" || true
cache=$(dirname "$(dirname "$(dirname "$(dirname "${headers:-/x/x/x/x}")")")")
rel=$(cat "$cache/release" 2>/dev/null || echo "?")
ver=$(cat "$cache/version" 2>/dev/null || echo "?")
host_state >"$tmp/host.after"
diag "Debian kernel $rel, package version $ver"
t0=$(date +%s%N)
"$HS/build-kernels" --variant debian >/dev/null 2>&1
ms=$((($(date +%s%N) - t0) / 1000000))
ok "$([[ $ms -lt 5000 ]]; echo $?)" "a second fetch is a cached no-op (${ms} ms)"

# fetch-debian itself: --print names the same cached kernel
out=$("$HS/fetch-debian" --print 2>/dev/null || true)
ok "$([[ -n $out && $out == "$(cat "$tmp/fetch")" && $out == "debian "*" $vmlinuz "* ]]; echo $?)" "fetch-debian --print names the cached kernel ($out)"

# 3. nothing is installed on the host: the fetch changed nothing in /boot,
# /lib/modules or dpkg's kernel packages (whatever kernel the host runs)
ok "$([[ $rel =~ ^[0-9]+\.[0-9]+\.[0-9]+-[0-9]+-amd64$ ]] && cmp -s "$tmp/host.before" "$tmp/host.after"; echo $?)" \
	"nothing went into the host's /boot, /lib/modules or dpkg's database (release $rel)"
check "the image and headers are unpacked in the cache ($vmlinuz)" \
	test -f "$vmlinuz" -a -f "$headers/Module.symvers"

# 5. the standard out-of-tree build against Debian's headers
mod=$tmp/mod
mkdir -p "$mod"
cp -r "$ROOT/Kbuild" "$ROOT/module" "$ROOT/include" "$mod/"
rc=0
make -C "$headers" M="$mod" W=1 >"$tmp/make.log" 2>&1 || rc=$?
{ grep -E 'warning:|error:' "$tmp/make.log" || true; } | head -n 5 | while IFS= read -r l; do diag "$l"; done
ok "$([[ $rc -eq 0 && -f $mod/dcrace.ko ]] && ! grep -q 'warning:' "$tmp/make.log"; echo $?)" \
	"make -C <Debian headers> M=\$PWD W=1 builds dcrace.ko without warnings"
vermagic=$(modinfo -F vermagic "$mod/dcrace.ko" 2>/dev/null || true)
ok "$([[ $vermagic == "$rel "* ]]; echo $?)" "its vermagic names Debian's release ($vermagic)"

# 7-8. boot: the release string, Debian's modules loaded by kmod's modprobe
log=$T_RESULTS/debian-boot.log
rc=0
out=$("$HS/run-guest" -q --kernel debian --log "$log" --timeout 180 \
	--exec 'uname -r; cat /proc/modules; readlink /sbin/modprobe; mount') || rc=$?
ok "$([[ $rc -eq 0 ]] && grep -qx "$rel" <<<"$out"; echo $?)" \
	"run-guest --kernel debian boots $rel (exit $rc; log $log)"
ok "$(grep -q '^brd ' <<<"$out" && grep -q '^ext4 ' <<<"$out" &&
	grep -qx kmod <<<"$out" && grep -q '^/dev/ram0 on /mnt type ext2' <<<"$out"
	echo $?)" "brd and ext4 came from Debian's modules via kmod; ext2 on /dev/ram0 is mounted"

# 9-13. the default workload with injection, as a third compare column
rc=0
"$HS/compare" --kernels debian --duration 10 --json "$tmp/c.json" \
	>"$tmp/c.out" 2>"$tmp/c.err" || rc=$?
while IFS= read -r l; do diag "$l"; done <"$tmp/c.out"
# Debian alone is a column, not a verdict: that needs unfixed and fixed.
ok "$([[ $rc -eq $EX_INCONCLUSIVE ]] && grep -q '^verdict: INCONCLUSIVE: no verdict without an unfixed and a fixed kernel' "$tmp/c.out"; echo $?)" \
	"compare --kernels debian runs, no verdict without a pair (exit $rc)"
read -r user mod_false caught early armed wc oc < <(python3 - "$tmp/c.json" <<'EOF' || echo "x x x x x x x"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["kernels"]["debian"]
r = d["runs"]["debian"][0]
st, pr = r["stats"], r["probes"] or []
armed = ",".join("%s=%s" % (p["name"], p["symbol"]) for p in pr if p["state"] == "armed")
print(s["user_false_enoent"], s["module_false_enoent"], s["module_caught"],
      st.get("early_test", "?"), armed or "-", st.get("walk_caught", "x"), st.get("open_caught", "x"))
EOF
)
diag "probes armed on Debian: $armed; early_test: $early"
ok "$([[ $user == 0 ]]; echo $?)" "Debian: user-visible false ENOENT = 0 (got $user)"
ok "$([[ $mod_false == 0 ]]; echo $?)" "Debian: module false_enoent = 0 (got $mod_false)"
ok "$([[ $caught =~ ^[0-9]+$ && $caught -gt 0 ]]; echo $?)" "Debian: caught > 0 (got $caught)"
# per path: walk_component's steps (stat and every intermediate component)
# and open()'s last component, each judged and caught on the stock kernel
ok "$(is_count "$wc" "$oc" && [[ $wc -gt 0 && $oc -gt 0 ]]; echo $?)" "Debian: caught on the stat path (walk_caught $wc) and on the open path (open_caught $oc)"
ok "$([[ $armed == *rcu_lookup* && $armed == *walk_component* ]]; echo $?)" \
	"Debian: the oracle's probes are armed ($armed)"

# 14-15. with early_test=-1 the module learns where the NULL-inode test is
# from one real negative dentry looked up twice: Debian has none before
# step_into(), our patched kernels have patch 0001's.
for k in debian:0 unfixed:1; do
	out=$("$HS/run-guest" -q --kernel "${k%:*}" --module-params early_test=-1 \
		--log "$T_RESULTS/early-test-${k%:*}.log" --exec \
		'stat /mnt/nope; stat /mnt/nope; grep early_test /sys/kernel/debug/dcrace/stats' 2>&1) || true
	got=$(sed -n 's/^early_test: //p' <<<"$out" | tail -n 1)
	ok "$([[ $got == "${k#*:}" ]]; echo $?)" "early_test learnt on ${k%:*}: ${k#*:} (got ${got:-nothing})"
done

# 16. check-kernel agrees
rc=0
out=$("$HS/check-kernel" --kernel debian --duration 5 2>/dev/null) || rc=$?
diag "$out"
ok "$([[ $rc -eq 0 ]]; echo $?)" "check-kernel --kernel debian: good (0; got $rc)"

done_testing
