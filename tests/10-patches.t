#!/bin/bash
# For every kernel line L under patches/ (patches/L/, the series against
# linux-source-L): the series apply with git apply (no fuzz) to a freshly
# unpacked linux-source-L, unfixed/fixed fs/namei.c differ only as
# intended, and each bug variant is one hunk in the function its shape
# names. Where the line has them: "backport" (the upstream may_lookup()
# fix, tested by running its may_lookup() against stubs) changes only
# may_lookup(), and "seq-forget" only __dentry_kill() (which then moves
# no d_seq) in fs/dcache.c. A line whose source tarball is not
# installed is skipped.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=host-scripts/lib.sh
source "$HS/lib.sh"

# shellcheck source=tests/patches-lib.sh
source "$(dirname "$0")/patches-lib.sh"
PER_LINE=17
PER_BACKPORT=8
PER_SEQ_FORGET=6
mapfile -t lines < <(cd "$ROOT/patches" && find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort -V)
# points L: how many test points line L has.
points() {
	local n=$PER_LINE
	! table_series "$1" backport >/dev/null || n=$((n + PER_BACKPORT))
	! table_series "$1" seq-forget >/dev/null || n=$((n + PER_SEQ_FORGET))
	echo "$n"
}
total=0
for L in "${lines[@]}"; do
	total=$((total + $(points "$L")))
done
plan "$total"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# code_added DIFF: the added lines that are code, not comment.
code_added() { grep '^+[^+]' <<<"$1" | grep -vE '^\+\s*(/\*|\*)' | tr -d ' \t+' || true; }

# check_line L TARBALL: the PER_LINE test points of line L.
check_line() {
	local L=$1 tarball=$2 src P p1 p2 d1 d2 d hunks added code want
	pristine "$L" "$tarball"
	local t=$tmp/$L
	src=$t/tree
	mkdir -p "$src/fs"
	cp "$tmp/pristine-$L/namei.c" "$src/fs/namei.c"
	cp "$tmp/pristine-$L/namei.c" "$t/orig.c"
	ga() { (cd "$src" && GIT_CEILING_DIRECTORIES=$tmp git apply "$@"); }

	P=$ROOT/patches/$L
	p1=$(ls "$P"/0001-*.patch)
	p2=$(ls "$P"/0002-vfs-fix-race-in-rcu-lookup-of-pruned-dentry.patch)
	check "$L: 0001 applies with git apply --check" ga --check "$p1"
	ga "$p1"
	cp "$src/fs/namei.c" "$t/unfixed.c"
	check "$L: 0002 applies on top with git apply --check" ga --check "$p2"
	ga "$p2"
	cp "$src/fs/namei.c" "$t/fixed.c"

	# 0001: exactly one hunk, in walk_component, an unchecked -ENOENT in RCU mode.
	d1=$(diff -U3 "$t/orig.c" "$t/unfixed.c" || true)
	diag "$d1"
	hunks=$(grep -c '^@@' <<<"$d1" || true)
	ok "$([[ $hunks -eq 1 ]]; echo $?)" "$L: 0001 changes one hunk of fs/namei.c (got $hunks)"
	added=$(grep '^+[^+]' <<<"$d1" | grep -v '^+\s*/\?\*' || true)
	ok "$([[ $(grep -c . <<<"$added") -eq 2 ]] && grep -q 'LOOKUP_RCU.*!dentry->d_inode' <<<"$added" &&
		grep -q 'return ERR_PTR(-ENOENT);' <<<"$added" && ! grep -q 'read_seqcount_retry' <<<"$added"; echo $?)" \
		"$L: 0001 adds only the unchecked NULL-inode -ENOENT test (no seqcount check)"
	# The new test sits in walk_component(), right after lookup_fast().
	ok "$(awk '/^static const char \*walk_component/,/^}/' "$t/unfixed.c" |
		grep -A8 'dentry = lookup_fast(nd);' | grep -q 'LOOKUP_RCU) && !dentry->d_inode'; echo $?)" \
		"$L: the 0001 test is in walk_component() after lookup_fast()"

	# unfixed -> fixed: one hunk, adding the d_seq confirmation and -ECHILD.
	d2=$(diff -U3 "$t/unfixed.c" "$t/fixed.c" || true)
	diag "$d2"
	hunks=$(grep -c '^@@' <<<"$d2" || true)
	ok "$([[ $hunks -eq 1 ]]; echo $?)" "$L: unfixed and fixed namei.c differ in one hunk (got $hunks)"
	code=$(code_added "$d2")
	want=$'if(dentry&&(nd->flags&LOOKUP_RCU)&&!dentry->d_inode){\nif(read_seqcount_retry(&dentry->d_seq,nd->next_seq))\nreturnERR_PTR(-ECHILD);\n}'
	ok "$([[ $code == "$want" ]]; echo $?)" "$L: the fix adds exactly the d_seq check returning -ECHILD"
	# Nothing else in the tree: the rest of namei.c is the original.
	ok "$(grep -c '^-[^-]' <<<"$d2" | grep -qx 1; echo $?)" "$L: the fix removes only the old if line"

	# variant NAME: apply NAME's series to the pristine namei.c into
	# $t/NAME.c, its diff into $d; a test point for applying.
	variant() {
		local f
		cp "$t/orig.c" "$src/fs/namei.c"
		f=$(ls "$P/$1"/0001-*.patch)
		check "$L: $1 applies to the pristine tree with git apply --check" ga --check "$f"
		ga "$f" || true
		cp "$src/fs/namei.c" "$t/$1.c"
		d=$(diff -U3 "$t/orig.c" "$t/$1.c" || true)
	}

	# mount-refetch: __follow_mount_rcu() re-samples next_seq for every
	# dentry, before its mount-point test; nothing else changes.
	variant mount-refetch
	diag "$d"
	ok "$([[ $(grep -c '^@@' <<<"$d") -eq 1 && $(grep -c '^-[^-]' <<<"$d") -eq 0 ]]; echo $?)" "$L: mount-refetch adds one hunk, removes nothing"
	ok "$([[ $(code_added "$d") == 'nd->next_seq=read_seqcount_begin(&dentry->d_seq);' ]]; echo $?)" "$L: mount-refetch adds only the d_seq re-sample"
	ok "$(awk '/^static bool __follow_mount_rcu/,/^}/' "$t/mount-refetch.c" |
		grep -E 'next_seq = read_seqcount_begin\(&dentry->d_seq\);|DCACHE_MANAGED_DENTRY' | head -n 2 |
		tr -d '\t' | tr '\n' '|' | grep -qx 'nd->next_seq = read_seqcount_begin(&dentry->d_seq);|if (likely(!(flags & DCACHE_MANAGED_DENTRY)))|'; echo $?)" \
		"$L: the re-sample is in __follow_mount_rcu(), before the mount-point test"

	# open-last: 0001's unchecked test, in open_last_lookups() after its
	# lookup_fast() call (6.12: lookup_fast_for_open(), which wraps it).
	variant open-last
	diag "$d"
	ok "$([[ $(grep -c '^@@' <<<"$d") -eq 1 && $(grep -c '^-[^-]' <<<"$d") -eq 0 ]]; echo $?)" "$L: open-last adds one hunk, removes nothing"
	ok "$([[ $(code_added "$d") == $'if(dentry&&(nd->flags&LOOKUP_RCU)&&!dentry->d_inode)\nreturnERR_PTR(-ENOENT);' ]]; echo $?)" \
		"$L: open-last adds only the unchecked NULL-inode -ENOENT test"
	ok "$(awk '/^static const char \*open_last_lookups/,/^}/' "$t/open-last.c" |
		grep -E -A10 'dentry = lookup_fast(_for_open)?\(nd[,)]' | grep -q 'LOOKUP_RCU) && !dentry->d_inode'; echo $?)" \
		"$L: the open-last test is in open_last_lookups() after lookup_fast()"
	ok "$(cmp -s <(awk '/^static const char \*walk_component/,/^}/' "$t/open-last.c") \
		<(awk '/^static const char \*walk_component/,/^}/' "$t/orig.c"); echo $?)" "$L: open-last leaves walk_component() as it was"

	# The kernels of the table beyond the NULL-inode series.
	! table_series "$L" backport >/dev/null || check_backport "$L"
	! table_series "$L" seq-forget >/dev/null || check_seq_forget "$L"
}

for L in "${lines[@]}"; do
	# DCRACE_SRC_TARBALL (host-scripts/lib.sh) is the source of DCRACE_LINE
	tarball=/usr/src/linux-source-$L.tar.xz
	[[ $L == "$DCRACE_LINE" ]] && tarball=$DCRACE_SRC_TARBALL
	if [[ -r $tarball ]]; then
		check_line "$L" "$tarball"
	else
		for _ in $(seq "$(points "$L")"); do
			skip "$L: $tarball not installed (host-scripts/deps installs linux-source-$L)"
		done
	fi
done
done_testing
