# shellcheck shell=bash
# Common helpers for dcrace host scripts. Sourced, never run.

DCRACE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DCRACE_CACHE=${DCRACE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/dcrace}
# The kernel line: the source (linux-source-$DCRACE_LINE) and the patch
# series under patches/$DCRACE_LINE/. Scripts that handle a kernel by name
# switch to its line (set_line); DCRACE_SRC_TARBALL overrides the source
# of the line given in the environment only.
DCRACE_LINE=${DCRACE_LINE:-6.1}
_DCRACE_LINE0=$DCRACE_LINE
_DCRACE_TARBALL0=${DCRACE_SRC_TARBALL:-}
DCRACE_SRC_TARBALL=${DCRACE_SRC_TARBALL:-/usr/src/linux-source-$DCRACE_LINE.tar.xz}
PROG=$(basename "$0")

# Bump when build-kernels changes how a kernel is made.
DCRACE_BUILD_RECIPE=1

# Exit codes, the splat pattern and the kernel table: one definition,
# shared with the Python harness and the tests.
# shellcheck source=host-scripts/dcrace_harness/defs.sh
source "$DCRACE_ROOT/host-scripts/dcrace_harness/defs.sh"

# set_line LINE: make LINE the current kernel line (source and patches).
set_line() {
	DCRACE_LINE=$1
	if [[ $1 == "$_DCRACE_LINE0" && -n $_DCRACE_TARBALL0 ]]; then
		DCRACE_SRC_TARBALL=$_DCRACE_TARBALL0
	else
		DCRACE_SRC_TARBALL=/usr/src/linux-source-$1.tar.xz
	fi
}

die() {
	local code=1
	if [[ $# -gt 1 ]]; then
		code=$1
		shift
	fi
	echo "$PROG: error: $*" >&2
	exit "$code"
}

warn() { echo "$PROG: warning: $*" >&2; }

# info: progress on stderr; DCRACE_QUIET=1 silences it.
info() {
	if [[ -z ${DCRACE_QUIET:-} ]]; then
		echo "$PROG: $*" >&2
	fi
}

# need_cmds CMD...: fail in one line naming every missing command.
# NEED_CODE: their exit code (1; run-guest: an infrastructure error).
need_cmds() {
	local missing=() c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	if [[ ${#missing[@]} -gt 0 ]]; then
		die "${NEED_CODE:-1}" "missing tools: ${missing[*]} (run host-scripts/deps to install them)"
	fi
}

# need_files FILE...: same for files that packages provide.
need_files() {
	local missing=() f
	for f in "$@"; do
		[[ -e $f ]] || missing+=("$f")
	done
	if [[ ${#missing[@]} -gt 0 ]]; then
		die "${NEED_CODE:-1}" "missing files: ${missing[*]} (run host-scripts/deps to install them)"
	fi
}

# need_value "$@": the option in $1 has a non-empty value in $2, else a
# one-line usage error. need_arg "$@": it has one, maybe empty.
need_value() {
	[[ $# -ge 2 && -n $2 ]] || die "$EX_USAGE" "$1 needs a value (see --help)"
}
need_arg() {
	[[ $# -ge 2 ]] || die "$EX_USAGE" "$1 needs a value (see --help)"
}

# patch_dir_files: every patch of the line, NUL-separated, sorted.
patch_dir_files() {
	find "$DCRACE_ROOT/patches/$DCRACE_LINE" -type f -name '*.patch' -print0 |
		LC_ALL=C sort -z
}

# kernel_patches NAME: the patch files of a kernel of the table, in order,
# one per line; fails naming a prefix that matches no file or several.
kernel_patches() {
	local list p f
	list=$(kernel_field "$1" patches) || return 1
	[[ $list == - ]] && return 0
	local IFS=,
	for p in $list; do
		f=("$DCRACE_ROOT/patches/$DCRACE_LINE/$p"-*.patch)
		[[ ${#f[@]} -eq 1 && -f ${f[0]} ]] ||
			die "kernel '$1': patch '$p' must match one file in patches/$DCRACE_LINE/"
		echo "${f[0]}"
	done
}

# compiler_id: the compiler that builds kernels and modules (kbuild
# refuses a module built by another one than its tree's).
compiler_id() {
	gcc --version 2>/dev/null | head -n 1
}

# The key of a kernel build: source identity + patches + config fragment +
# compiler + the build recipe version, so any change to what goes into a
# kernel rebuilds it and nothing else does.
# $1: variant (unfixed+fixed share one key: "std"; "debug").
build_key() {
	local variant=$1 tarid
	tarid=$(stat -Lc '%s %Y' "$DCRACE_SRC_TARBALL")
	{
		echo "variant $variant"
		echo "tarball $tarid"
		patch_dir_files | xargs -0 cat
		# the kernels of the group and their series: a kernel added to
		# the table is a new key, not a cached group without it
		local name
		for name in $(kernel_names "$variant" "$DCRACE_LINE"); do
			echo "kernel $name $(kernel_field "$name" patches)"
		done
		cat "$DCRACE_ROOT/guest/kernel.config"
		if [[ $variant == debug ]]; then
			cat "$DCRACE_ROOT/guest/debug.config"
		fi
		echo "compiler $(compiler_id)"
		echo "recipe $DCRACE_BUILD_RECIPE"
	} | sha256sum | cut -c1-16
}

# cache_lock NAME [shared]: hold a lock on $DCRACE_CACHE/locks/NAME until
# the script exits (exclusive by default), so that two runs sharing the
# cache do not build or delete the same thing at once.
cache_lock() {
	local fd
	mkdir -p "$DCRACE_CACHE/locks"
	exec {fd}>>"$DCRACE_CACHE/locks/$1.lock"
	if ! flock -n ${2:+-s} "$fd"; then
		info "waiting for the cache lock $1 (another dcrace run holds it)"
		flock ${2:+-s} "$fd"
	fi
}

# kernel_field NAME COLUMN: a column of the kernel table (defs.sh): line,
# build, early_test, expect, patches, package or errors; fails for a name
# not in it.
kernel_field() {
	local name line build early expect patches package errors
	while read -r name line build early expect patches package errors; do
		[[ $name == "$1" ]] || continue
		case $2 in
		line) echo "$line" ;;
		build) echo "$build" ;;
		early_test) echo "$early" ;;
		expect) echo "$expect" ;;
		patches) echo "$patches" ;;
		package) echo "$package" ;;
		errors) echo "$errors" ;;
		esac
		return 0
	done <<<"$DCRACE_KERNELS"
	return 1
}

# kernel_names BUILD|all [LINE]: the names in the kernel table (of one
# build, of one line).
kernel_names() {
	local name line build rest
	while read -r name line build rest; do
		[[ -n $name && ($1 == all || $build == "$1") ]] || continue
		[[ -z ${2:-} || $line == "$2" ]] && echo "$name"
	done <<<"$DCRACE_KERNELS"
	return 0
}

# kernel_subdir NAME: the directory of a built kernel in its build's cache
# directory (the name without its line: "6.12/fixed" -> "fixed").
kernel_subdir() {
	echo "${1##*/}"
}

# kernel_dir VARIANT [LINE]: the cache directory of the current key.
kernel_dir() {
	(
		set_line "${2:-$DCRACE_LINE}"
		echo "$DCRACE_CACHE/kernels/$1-$(build_key "$1")"
	)
}

# kernels_lock VARIANT [LINE]: the cache lock of a line's build.
kernels_lock() {
	echo "kernels-${2:-$DCRACE_LINE}-$1"
}

# debian_current NAME: the link to the fetched kernel of a debian row.
debian_current() {
	if [[ $1 == debian ]]; then
		echo "$DCRACE_CACHE/debian/current"
	else
		echo "$DCRACE_CACHE/debian/current-$1"
	fi
}

# resolve_kernel NAME|PATH: print the bzImage path for a kernel of the
# table or a path to a bzImage; fail with one line if there is none.
resolve_kernel() {
	local k=$1 dir build line
	build=$(kernel_field "$k" build) || build=
	line=$(kernel_field "$k" line) || line=
	case $build in
	std | debug)
		dir=$(kernel_dir "$build" "$line")
		[[ -f $dir/done && -f $dir/$(kernel_subdir "$k")/bzImage ]] ||
			die "$EX_USAGE" "kernel '$k' is not built (run: make kernels LINE=$line$([[ $build == std ]] || echo " VARIANT=$build"))"
		echo "$dir/$(kernel_subdir "$k")/bzImage"
		;;
	debian)
		dir=$(debian_current "$k")
		[[ -f $dir/done && -f $dir/vmlinuz ]] ||
			die "$EX_USAGE" "kernel '$k' is not fetched (run: make kernels LINE=$line VARIANT=debian)"
		readlink -f "$dir/vmlinuz"
		;;
	*)
		dir=$(kernel_names all)
		[[ -f $k ]] || die "$EX_USAGE" "no such kernel: $k (want ${dir//$'\n'/, } or a bzImage path)"
		if ! file -bL "$k" 2>/dev/null | grep -q 'Linux kernel'; then
			if command -v file >/dev/null 2>&1; then
				die "$EX_USAGE" "not a Linux kernel image: $k"
			fi
		fi
		echo "$k"
		;;
	esac
}

# module_tree NAME: the kernel build tree to build dcrace.ko against.
module_tree() {
	local build line
	build=$(kernel_field "$1" build) || return 1
	line=$(kernel_field "$1" line)
	case $build in
	std | debug) echo "$(kernel_dir "$build" "$line")/src" ;;
	# Resolved: the headers of another Debian version get another build.
	debian) echo "$(readlink -f "$(debian_current "$1")")/headers" ;;
	*) return 1 ;;
	esac
}

# debian_overlay NAME: the initramfs overlay with a Debian kernel's modules.
debian_overlay() {
	echo "$(readlink -f "$(debian_current "$1")")/overlay.cpio.gz"
}

# early_test_param NAME: dcrace.ko's early_test= for a kernel of the
# table (patch 0001's test in walk_component(): 1; none, as Debian's: 0);
# empty otherwise.
early_test_param() {
	local e
	e=$(kernel_field "$1" early_test) || return 0
	[[ $e == - ]] || echo "early_test=$e"
}

# newc_archive DIR: DIR's tree as a newc cpio archive on stdout (root owned,
# sorted, so the same tree gives the same bytes).
newc_archive() {
	(cd "$1" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --owner=0:0 --quiet)
}

# module_ops WHAT TEXT...: how many times the guest shell TEXTs load
# (WHAT=load: insmod, modprobe without -r) or unload (WHAT=unload: rmmod,
# modprobe -r) a module, a command inside a text that has a for/while/until
# loop counting twice. run-guest's --tcg auto runs a guest single-threaded
# when either count is above 1 (docs/design.md, "Why int3 kprobes, and TCG
# threading").
module_ops() {
	local what=$1 t n total=0 re
	shift
	if [[ $what == load ]]; then
		re='(^|[^[:alnum:]_/.-])(insmod|modprobe)[[:space:]]+[^-[:space:]]'
	else
		re='(^|[^[:alnum:]_/.-])(rmmod|modprobe[[:space:]]+-r)([^[:alnum:]_-]|$)'
	fi
	for t in "$@"; do
		n=$(grep -oE "$re" <<<"$t" | grep -c '' || true)
		if [[ $n -gt 0 ]] && grep -qE '(^|[;&|[:space:]])(for|while|until)[[:space:]]' <<<"$t"; then
			n=$((n * 2))
		fi
		total=$((total + n))
	done
	echo "$total"
}

# first_report LOG: the first kernel report in a guest's serial log (a
# stall, lockup, oops, BUG, WARNING...; DCRACE_REPORT_RE) with the 40 lines
# after it, its stack; nothing when there is none.
first_report() {
	local n
	n=$(grep -nE "$DCRACE_REPORT_RE" "$1" | grep -vF "$DCRACE_SPLAT_OWN" | head -n 1 | cut -d: -f1)
	[[ -n $n ]] || return 0
	sed -n "${n},$((n + 40))p" "$1"
}
