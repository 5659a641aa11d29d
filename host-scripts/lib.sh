# shellcheck shell=bash
# Common helpers for dcrace host scripts. Sourced, never run.

DCRACE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DCRACE_CACHE=${DCRACE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/dcrace}
DCRACE_SRC_TARBALL=${DCRACE_SRC_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
PROG=$(basename "$0")

# Bump when build-kernels changes how a kernel is made.
DCRACE_BUILD_RECIPE=1

# Exit codes shared by the host scripts.
# shellcheck disable=SC2034
EX_USAGE=2
# shellcheck disable=SC2034
EX_TIMEOUT=124	# guest hung, killed at --timeout
# shellcheck disable=SC2034
EX_INFRA=125	# infrastructure error: no result, bad log, QEMU failed

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
need_cmds() {
	local missing=() c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	if [[ ${#missing[@]} -gt 0 ]]; then
		die "missing tools: ${missing[*]} (run host-scripts/deps to install them)"
	fi
}

# need_files FILE...: same for files that packages provide.
need_files() {
	local missing=() f
	for f in "$@"; do
		[[ -e $f ]] || missing+=("$f")
	done
	if [[ ${#missing[@]} -gt 0 ]]; then
		die "missing files: ${missing[*]} (run host-scripts/deps to install them)"
	fi
}

# The key of a kernel build: source identity + patches + config fragment +
# the build recipe version, so any change to what goes into a kernel
# rebuilds it and nothing else does.
# $1: variant (unfixed+fixed share one key: "std"; "debug").
build_key() {
	local variant=$1 tarid
	tarid=$(stat -Lc '%s %Y' "$DCRACE_SRC_TARBALL")
	{
		echo "variant $variant"
		echo "tarball $tarid"
		cat "$DCRACE_ROOT"/patches/*.patch
		cat "$DCRACE_ROOT/guest/kernel.config"
		if [[ $variant == debug ]]; then
			cat "$DCRACE_ROOT/guest/debug.config"
		fi
		echo "recipe $DCRACE_BUILD_RECIPE"
	} | sha256sum | cut -c1-16
}

# kernel_dir VARIANT: the cache directory of the current key.
kernel_dir() {
	echo "$DCRACE_CACHE/kernels/$1-$(build_key "$1")"
}

# resolve_kernel NAME|PATH: print the bzImage path for unfixed, fixed,
# debug, debian, or a path to a bzImage; fail with one line if there is none.
resolve_kernel() {
	local k=$1 dir
	case $k in
	unfixed | fixed)
		dir=$(kernel_dir std)
		[[ -f $dir/done && -f $dir/$k/bzImage ]] ||
			die "$EX_USAGE" "kernel '$k' is not built (run: make kernels)"
		echo "$dir/$k/bzImage"
		;;
	debug)
		dir=$(kernel_dir debug)
		[[ -f $dir/done && -f $dir/debug/bzImage ]] ||
			die "$EX_USAGE" "kernel 'debug' is not built (run: make kernels VARIANT=debug)"
		echo "$dir/debug/bzImage"
		;;
	debian)
		dir=$DCRACE_CACHE/debian/current
		[[ -f $dir/done && -f $dir/vmlinuz ]] ||
			die "$EX_USAGE" "kernel 'debian' is not fetched (run: make kernels VARIANT=debian)"
		readlink -f "$dir/vmlinuz"
		;;
	*)
		[[ -f $k ]] || die "$EX_USAGE" "no such kernel: $k (want unfixed, fixed, debug, debian or a bzImage path)"
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
	case $1 in
	unfixed | fixed) echo "$(kernel_dir std)/src" ;;
	debug) echo "$(kernel_dir debug)/src" ;;
	# Resolved: the headers of another Debian version get another build.
	debian) echo "$(readlink -f "$DCRACE_CACHE/debian/current")/headers" ;;
	*) return 1 ;;
	esac
}

# debian_overlay: the initramfs overlay with the Debian kernel's modules.
debian_overlay() {
	echo "$(readlink -f "$DCRACE_CACHE/debian/current")/overlay.cpio.gz"
}

# early_test_param NAME: dcrace.ko's early_test= for our kernels (patch
# 0001's test in walk_component()) and Debian's (none); empty otherwise.
early_test_param() {
	case $1 in
	unfixed | fixed | debug) echo "early_test=1" ;;
	debian) echo "early_test=0" ;;
	esac
}

# newc_archive DIR: DIR's tree as a newc cpio archive on stdout (root owned,
# sorted, so the same tree gives the same bytes).
newc_archive() {
	(cd "$1" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --owner=0:0 --quiet)
}
