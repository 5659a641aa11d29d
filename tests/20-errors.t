#!/bin/bash
# A bad kernel path, a missing package and a hung guest each give a
# one-line clear error and a non-zero exit, not a stack of shell noise.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 14

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect_error DESC WANT_RC REGEX CMD...: exit status WANT_RC and exactly
# one line on stderr matching REGEX.
expect_error() {
	local desc=$1 want=$2 re=$3 rc=0 lines
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	lines=$(grep -c . "$tmp/err" || true)
	diag "$(cat "$tmp/err")"
	ok "$([[ $rc -eq $want ]]; echo $?)" "$desc: exit $want (got $rc)"
	ok "$([[ $lines -eq 1 ]] && grep -qE "$re" "$tmp/err"; echo $?)" "$desc: one clear line on stderr (got $lines)"
}

expect_error "run-guest, bad kernel path" 2 'no such kernel: /no/such/bzImage' \
	"$HS/run-guest" -q --kernel /no/such/bzImage
echo "not a kernel" >"$tmp/notakernel"
expect_error "run-guest, a file that is no kernel" 2 'not a Linux kernel image' \
	"$HS/run-guest" -q --kernel "$tmp/notakernel"

# A PATH with every tool but one: the script names the missing one.
mkpath() {
	local skip=$1 d=$tmp/path-$1 c
	mkdir -p "$d"
	for c in bash sh tar xz make gcc flex bison bc git sha256sum perl stat cut \
		cat dirname basename date mktemp rm mkdir cp find sort cpio gzip timeout \
		qemu-system-x86_64 sed grep tr head tail file nproc sleep kill truncate; do
		[[ $c == "$skip" ]] && continue
		if command -v "$c" >/dev/null; then ln -sf "$(command -v "$c")" "$d/$c"; fi
	done
	echo "$d"
}
expect_error "build-kernels, flex missing" 1 'missing tools: flex .*host-scripts/deps' \
	env PATH="$(mkpath flex)" DCRACE_CACHE="$tmp/cache" "$HS/build-kernels"
expect_error "build-kernels, linux-source missing" 1 'missing files: /no/such/linux-source.tar.xz' \
	env DCRACE_SRC_TARBALL=/no/such/linux-source.tar.xz DCRACE_CACHE="$tmp/cache" "$HS/build-kernels"
expect_error "run-guest, qemu missing" 1 'missing tools: qemu-system-x86_64' \
	env PATH="$(mkpath qemu-system-x86_64)" "$HS/run-guest" -q --kernel unfixed

# A guest that hangs is killed at --timeout with its own exit code.
start=$SECONDS
expect_error "run-guest, hung guest" 124 'did not finish within 15 s and was killed.*log: ' \
	"$HS/run-guest" -q --timeout 15 --log "$T_RESULTS/hung.log" --exec 'sleep 1000' unfixed
took=$((SECONDS - start))
ok "$([[ $took -lt 40 ]]; echo $?)" "the hung guest was killed promptly ($took s)"
ok "$(grep -q '^DCRACE-BOOTED' "$T_RESULTS/hung.log"; echo $?)" "the hung guest's serial log was kept"
done_testing
