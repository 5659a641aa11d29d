#!/bin/bash
# A bad kernel path, a missing package and a hung guest each give a
# one-line clear error and a non-zero exit, not a stack of shell noise.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 55

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

expect_error "run-guest, bad kernel path" "$EX_USAGE" 'no such kernel: /no/such/bzImage' \
	"$HS/run-guest" -q --kernel /no/such/bzImage
echo "not a kernel" >"$tmp/notakernel"
expect_error "run-guest, a file that is no kernel" "$EX_USAGE" 'not a Linux kernel image' \
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
expect_error "run-guest, qemu missing: infrastructure" "$EX_INFRA" 'missing tools: qemu-system-x86_64' \
	env PATH="$(mkpath qemu-system-x86_64)" "$HS/run-guest" -q --kernel unfixed

# A missing option value: one line and the usage code, not bash's text.
expect_error "run-guest --kernel without a value" "$EX_USAGE" '^run-guest: error: --kernel needs a value' \
	"$HS/run-guest" -q --kernel
expect_error "build-module --tree without a value" "$EX_USAGE" '^build-module: error: --tree needs a value' \
	"$HS/build-module" --tree
expect_error "soak --syscalls without a value" "$EX_USAGE" '^soak: error: --syscalls needs a value' \
	"$HS/soak" --syscalls

# An unknown kernel name is a usage error before any guest boots (a fake
# run-guest that marks a boot); a kernel path that does not exist is for
# check-kernel a commit that could not be tested (30-verdict.t), a typo of
# a name its usage error.
cat >"$tmp/boot-rg" <<'FAKE'
#!/bin/sh
touch "$BOOTED"
exit 125
FAKE
chmod +x "$tmp/boot-rg"
boot_env=(env BOOTED="$tmp/booted" DCRACE_RUN_GUEST="$tmp/boot-rg")
expect_error "compare --kernels typo,fixd" "$EX_USAGE" '^compare: error: --kernels: unknown kernels: typo, fixd \(want unfixed, fixed, ' \
	"${boot_env[@]}" "$HS/compare" --kernels typo,fixd --duration 1 --results "$tmp/res"
expect_error "variants --kernels unfixed,fixd" "$EX_USAGE" '^variants: error: --kernels: unknown kernel: fixd ' \
	"${boot_env[@]}" "$HS/variants" --kernels unfixed,fixd --modes stat --kinds natural --runs 1 --results "$tmp/res"
ok "$([[ ! -e $tmp/booted ]]; echo $?)" "an unknown kernel name: no guest booted"
for k in fixd 6.12/fixd; do
	expect_error "check-kernel --kernel $k" "$EX_BISECT_USAGE" "^check-kernel: error: --kernel: unknown kernel: ${k//./\\.} " \
		"${boot_env[@]}" "$HS/check-kernel" --kernel "$k" --duration 1 --results "$tmp/res"
done
# An unexpected error is never check-kernel's 1 (bad): could not test.
rc=0
"${boot_env[@]}" "$HS/check-kernel" --kernel unfixed --results /proc/nope >"$tmp/out" 2>&1 || rc=$?
diag "$(cat "$tmp/out")"
ok "$([[ $rc -eq $EX_INFRA && $(grep -c . "$tmp/out") -eq 1 ]] &&
	grep -q '^check-kernel: could not test: cannot make the results directory /proc/nope/' "$tmp/out"; echo $?)" \
	"check-kernel --results /proc/nope: could not test, $EX_INFRA, one line (got $rc)"

# The exit-code table: README.md documents exactly defs.sh's codes.
# shellcheck disable=SC2016
doc=$(sed -n '/^## Exit codes/,/^## [^E]/p' "$ROOT/README.md" |
	sed -n 's/^| \([0-9][0-9]*\) | `\(EX_[A-Z_]*\)` |.*/\2=\1/p' | sort)
def=$(grep -oE '^EX_[A-Z_]+=[0-9]+' "$HS/dcrace_harness/defs.sh" | sort)
diag "README: $(echo "$doc" | tr '\n' ' ')"
ok "$([[ -n $def && $doc == "$def" ]]; echo $?)" "README's exit-code table is defs.sh's ($(echo "$def" | tr '\n' ' '))"
ok "$([[ $doc == *EX_DETECTOR=4* ]] && "$HS/compare" --help | grep -q '4 detector failure'; echo $?)" \
	"a detector failure has its own code, 4, in README's table and compare --help"
ok "$(cd "$HS" && python3 -c 'from dcrace_harness import defs; import sys; sys.exit(not (defs.EX_USAGE == int(sys.argv[1]) and defs.EX_BISECT_USAGE >= 128))' "$EX_USAGE"; echo $?)" \
	"bash and Python read the same codes; check-kernel's usage code aborts git bisect (>= 128)"

# A log named by --log is emptied before anything can fail: a failed
# initramfs build must not leave a previous run's result to be parsed.
python3 -c "
b = bytearray(1024); b[510] = 0x55; b[511] = 0xAA; b[514:518] = b'HdrS'
open('$tmp/bzImage', 'wb').write(b)"
printf 'DCRACE-BOOTED old\nDCRACE-RESULT {"false_enoent":0}\nDCRACE-EXIT 0\n' >"$tmp/old.log"
rc=0
DCRACE_BUSYBOX=/no/such/busybox DCRACE_CACHE="$tmp/cache" "$HS/run-guest" -q --kernel "$tmp/bzImage" \
	--log "$tmp/old.log" >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc -eq $EX_INFRA && ! -s $tmp/old.log ]]; echo $?)" \
	"run-guest empties --log before building (exit $rc, $(wc -c <"$tmp/old.log") bytes left)"

# Debian's module overlay missing from a fetched kernel: infrastructure.
mkdir -p "$tmp/dcache/debian/6.1.0-1-amd64_1"
ln -s 6.1.0-1-amd64_1 "$tmp/dcache/debian/current"
cp "$tmp/bzImage" "$tmp/dcache/debian/6.1.0-1-amd64_1/vmlinuz"
touch "$tmp/dcache/debian/6.1.0-1-amd64_1/done"
expect_error "run-guest, Debian's module overlay missing" "$EX_INFRA" "module overlay is missing: .*overlay.cpio.gz \\(run: make kernels LINE=6.1 VARIANT=debian\\)" \
	env DCRACE_CACHE="$tmp/dcache" "$HS/run-guest" -q --kernel debian --log "$tmp/deb.log"

# The kernel cache key holds the compiler's version: another gcc, another key.
mkdir -p "$tmp/gcc"
printf '#!/bin/sh\necho "gcc (Fake) 99.1.0"\n' >"$tmp/gcc/gcc"
chmod +x "$tmp/gcc/gcc"
k1=$(bash -c 'source "$1/lib.sh"; build_key std' _ "$HS")
k2=$(PATH=$tmp/gcc:$PATH bash -c 'source "$1/lib.sh"; build_key std' _ "$HS")
ok "$([[ -n $k1 && -n $k2 && $k1 != "$k2" ]]; echo $?)" "the kernel cache key changes with the compiler ($k1, $k2)"

# Kernel lines: each line's kernels have their own key (source, patches),
# a 6.1 name and a 6.12 name resolve to their own line's build, and a bad
# line or Debian kernel name is a usage error.
k61=$(bash -c 'source "$1/lib.sh"; kernel_dir std 6.1' _ "$HS")
k612=$(bash -c 'source "$1/lib.sh"; kernel_dir std 6.12' _ "$HS")
ok "$([[ $k61 == */kernels/std-* && $k612 == */kernels/std-* && $k61 != "$k612" ]]; echo $?)" \
	"6.1 and 6.12 kernels have their own cache keys ($(basename "$k61"), $(basename "$k612"))"
t612=$(bash -c 'source "$1/lib.sh"; module_tree 6.12/open-last' _ "$HS")
ok "$([[ $t612 == "$k612/src" && $(bash -c 'source "$1/lib.sh"; module_tree open-last' _ "$HS") == "$k61/src" ]]; echo $?)" \
	"6.12/open-last builds against the 6.12 tree, open-last against 6.1's"
expect_error "build-kernels, unknown line" "$EX_USAGE" '^build-kernels: error: unknown line: 7\.0 \(6\.1, 6\.12\)' \
	env DCRACE_CACHE="$tmp/cache" "$HS/build-kernels" --line 7.0
expect_error "build-kernels, unknown variant" "$EX_USAGE" '^build-kernels: error: unknown variant: kasan \(std, debug or debian\)' \
	env DCRACE_CACHE="$tmp/cache" "$HS/build-kernels" --line 6.12 --variant kasan
expect_error "fetch-debian, not a Debian kernel" "$EX_USAGE" '^fetch-debian: error: not a Debian kernel of the table: 6\.12/fixed \(want debian,debian-6\.12,debian-6\.12-rt\)' \
	env DCRACE_CACHE="$tmp/cache" "$HS/fetch-debian" --kernel 6.12/fixed
expect_error "run-guest, 6.12 kernel not built" "$EX_USAGE" "kernel '6\.12/fixed' is not built \(run: make kernels LINE=6\.12\)" \
	env DCRACE_CACHE="$tmp/cache" "$HS/run-guest" -q --kernel 6.12/fixed
expect_error "run-guest, debian-6.12-rt not fetched" "$EX_USAGE" "kernel 'debian-6\.12-rt' is not fetched \(run: make kernels LINE=6\.12 VARIANT=debian\)" \
	env DCRACE_CACHE="$tmp/cache" "$HS/run-guest" -q --kernel debian-6.12-rt

# The cache is locked: while another run holds the initramfs lock, a build
# waits for it, then writes beside its final name and renames.
lc=$tmp/lockcache
mkdir -p "$lc/locks"
flock "$lc/locks/initramfs.lock" sleep 4 &
holder=$!
sleep 0.5
start=$SECONDS
rc=0
img=$(DCRACE_CACHE=$lc "$HS/build-initramfs" 2>"$tmp/err") || rc=$?
took=$((SECONDS - start))
wait "$holder" || true
ok "$([[ $rc -eq 0 && $took -ge 3 && -f $img ]] && grep -q 'waiting for the cache lock initramfs' "$tmp/err" &&
	[[ -z $(find "$lc/initramfs" -name '*.tmp-*') ]]; echo $?)" \
	"build-initramfs waits for another run's cache lock (${took} s, exit $rc) and leaves no temporary file"

# Children in their own process group, stderr read while they run: a fake
# run-guest (DCRACE_RUN_GUEST) that floods stderr, one that ignores SIGTERM.
cat >"$tmp/fake-rg" <<'FAKE'
#!/bin/bash
case $FAKE in
flood)
	head -c 300000 /dev/zero | tr '\0' 'x' >&2
	echo >&2
	echo "fake run-guest: gave up" >&2
	exit 125 ;;
stubborn)
	trap '' TERM INT
	sleep 300 &
	echo "$$ $!" >"$FAKE_PIDS"
	while :; do sleep 1; done ;;
esac
FAKE
chmod +x "$tmp/fake-rg"
start=$SECONDS
rc=0
FAKE=flood DCRACE_RUN_GUEST=$tmp/fake-rg timeout 60 "$HS/compare" --duration 1 --results "$tmp/res" \
	>/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc -eq $EX_HARNESS_INFRA ]] && grep -q 'fake run-guest: gave up' "$tmp/err"; echo $?)" \
	"compare with 300 KB on a child's stderr: no deadlock, exit $EX_HARNESS_INFRA (got $rc in $((SECONDS - start)) s)"
for prog in compare check-kernel; do
	rm -f "$tmp/pids"
	args=(--duration 5 --results "$tmp/res")
	[[ $prog == compare ]] || args+=(--kernel unfixed)
	FAKE=stubborn FAKE_PIDS=$tmp/pids DCRACE_RUN_GUEST=$tmp/fake-rg "$HS/$prog" "${args[@]}" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 1 100); do
		[[ -s $tmp/pids ]] && break
		sleep 0.1
	done
	rg='' child=''
	read -r rg child <"$tmp/pids" || true
	start=$SECONDS
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	# killed: gone, or a zombie not yet reaped (kill -0 still finds it);
	# a loaded host may take a moment to deliver the SIGKILLs
	for _ in $(seq 1 50); do
		left=$(for p in $rg $child; do
			kill -0 "$p" 2>/dev/null && [[ $(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null) != Z ]] && echo "$p"
		done || true)
		[[ -z $left ]] && break
		sleep 0.1
	done
	ok "$([[ -n $rg && $rc -eq $EX_INTERRUPTED && -z $left ]]; echo $?)" \
		"SIGTERM to $prog: exit $EX_INTERRUPTED (got $rc in $((SECONDS - start)) s), its run-guest group killed (left: ${left:-none})"
	for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
done

# tests/run: a pattern matching nothing fails; a file that stops after k of
# N planned tests counts N - k failures.
mkdir -p "$tmp/t"
cp "$ROOT/tests/run" "$tmp/t/run"
printf '#!/bin/bash\necho 1..5\necho "ok 1 - one"\necho "ok 2 - two"\nexit 3\n' >"$tmp/t/01-crash.t"
rc=0
out=$("$tmp/t/run" nothing-matches 2>&1) || rc=$?
ok "$([[ $rc -ne 0 ]] && grep -q 'no test file matches' <<<"$out"; echo $?)" "tests/run PATTERN matching no file fails (exit $rc)"
rc=0
out=$("$tmp/t/run" crash 2>&1) || rc=$?
diag "$out"
ok "$([[ $rc -ne 0 ]] && grep -qx '2 passed, 3 failed' <<<"$out"; echo $?)" "a file that stops after 2 of 5 tests counts 3 failures"

# A guest that hangs is killed at --timeout with its own exit code.
start=$SECONDS
expect_error "run-guest, hung guest" 124 'did not finish within 15 s and was killed.*log: ' \
	"$HS/run-guest" -q --timeout 15 --log "$T_RESULTS/hung.log" --exec 'sleep 1000' unfixed
took=$((SECONDS - start))
ok "$([[ $took -lt 40 ]]; echo $?)" "the hung guest was killed promptly ($took s)"
ok "$(grep -q '^DCRACE-BOOTED' "$T_RESULTS/hung.log"; echo $?)" "the hung guest's serial log was kept"
done_testing
