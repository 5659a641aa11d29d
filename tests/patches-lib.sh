# shellcheck shell=bash
# Helpers of tests/10-patches.t for the series beyond fs/namei.c's
# walk_component(): "backport" (the upstream may_lookup() fix) and
# "seq-forget" (__dentry_kill() without d_seq writes). Sourced; uses the
# caller's $tmp, and check_line's $t, $src, $P and ga (git apply in $src).
# shellcheck disable=SC2154 # $tmp, $t, $src, $P: the caller's

# pristine L TARBALL: fs/namei.c and fs/dcache.c of linux-source-L in
# $tmp/pristine-L (extracted once).
pristine() {
	local d=$tmp/pristine-$1 top
	[[ ! -f $d/dcache.c ]] || return 0
	top=$( (tar -tf "$2" 2>/dev/null || true) | head -n 1 | cut -d/ -f1)
	mkdir -p "$d/x"
	tar -C "$d/x" -xf "$2" "$top/fs/namei.c" "$top/fs/dcache.c"
	mv "$d/x/$top/fs/namei.c" "$d/x/$top/fs/dcache.c" "$d/"
	rm -rf "$d/x"
}

# table_series L NAME: the patches column of line L's kernel NAME in the
# kernel table ("6.12/NAME" on line 6.12); fails if the table has none.
table_series() {
	local n
	while IFS= read -r n; do
		[[ ${n##*/} == "$2" ]] || continue
		kernel_field "$n" patches
		return 0
	done < <(kernel_names all "$1")
	return 1
}

# apply_series L NAME OUT: the pristine namei.c and dcache.c in $src, then
# the series of line L's kernel NAME (kernel table), each patch checked
# with git apply --check first; fails at the first that is missing or
# does not apply. The series' files that "fixed" does not have go to OUT.
apply_series() {
	local s fx p f
	: >"$3"
	s=$(table_series "$1" "$2") || return 1
	fx=$(table_series "$1" fixed) || return 1
	cp "$tmp/pristine-$1/namei.c" "$src/fs/namei.c"
	cp "$tmp/pristine-$1/dcache.c" "$src/fs/dcache.c"
	for p in ${s//,/ }; do
		if ! f=$(compgen -G "$ROOT/patches/$1/$p-*.patch"); then
			diag "$2: no patch $p in patches/$1/"
			return 1
		fi
		if ! ga --check "$f" || ! ga "$f"; then
			diag "$2: $p does not apply"
			return 1
		fi
		[[ ,$fx, == *",$p,"* ]] || echo "$f" >>"$3"
	done
}

# split_fns FILE DIR: every function definition of FILE (kernel style:
# the signature at column 0, the body up to the next "}" line) into
# DIR/NAME; the lines outside them into DIR/=rest.
split_fns() {
	mkdir -p "$2"
	awk -v d="$2" '
		!on && /^[A-Za-z_][^=]*[A-Za-z0-9_]\(/ && !/;[ \t]*$/ && !/^[A-Z_]+\(/ {
			n = $0; sub(/\(.*/, "", n); sub(/.*[ *]/, "", n)
			on = 1; out = d "/" n
		}
		on { print > out }
		!on { print > (d "/=rest") }
		on && /^}/ { on = 0; close(out) }' "$1"
}

# seq_moves DIR NAME: the functions of DIR (split_fns) that NAME reaches,
# itself and what it calls two levels down, that write a d_seq.
seq_moves() {
	local dir=$1 seen=" " n c depth
	local -a todo=("$2") next
	for depth in 0 1 2; do
		next=()
		for n in "${todo[@]}"; do
			[[ $seen != *" $n "* && -f $dir/$n ]] || continue
			seen+="$n "
			! grep -qE 'write_seqcount[a-z_]*\(&[a-z_]+->d_seq' "$dir/$n" || echo "$n"
			mapfile -t c < <(tail -n +2 "$dir/$n" | grep -oE '\b[A-Za-z_][A-Za-z0-9_]*\(' | tr -d '(' | sort -u)
			next+=(${c[@]+"${c[@]}"})
		done
		[[ $depth -eq 2 ]] || todo=(${next[@]+"${next[@]}"})
	done | sort
}

# may_lookup_prog FN OUT: build OUT, a program running the may_lookup()
# definition in file FN against stubs of inode_permission() and
# try_to_unlazy(). Its arguments: rcu lazy_result ref_result unlazy_ok;
# it prints what may_lookup() returned and did.
may_lookup_prog() {
	cat >"$2.c" <<-'EOF'
		#include <errno.h>
		#include <stdbool.h>
		#include <stdio.h>
		#include <stdlib.h>
		#define MAY_EXEC 0x1
		#define MAY_NOT_BLOCK 0x80
		#define LOOKUP_RCU 0x1
		#define likely(x) (x)
		#define unlikely(x) (x)
		struct inode;
		struct user_namespace;
		struct mnt_idmap;
		struct nameidata { unsigned int flags; struct inode *inode; };
		static int res[2], masks[2], calls, unlazies, unlazy_ok;
		static int inode_permission(void *ns, struct inode *inode, int mask)
		{
			masks[calls & 1] = mask;
			return res[calls++ & 1];
		}
		static bool try_to_unlazy(struct nameidata *nd)
		{
			unlazies++;
			if (unlazy_ok)
				nd->flags &= ~LOOKUP_RCU;
			return unlazy_ok;
		}
		#include "fn.c"
		static const char *how(int i)
		{
			return calls <= i ? "-" : masks[i] & MAY_NOT_BLOCK ? "nonblock" : "block";
		}
		int main(int argc, char **argv)
		{
			struct nameidata nd = { 0, 0 };
			int r;

			if (argc != 5)
				return 2;
			nd.flags = atoi(argv[1]) ? LOOKUP_RCU : 0;
			res[0] = atoi(argv[2]);
			res[1] = atoi(argv[3]);
			unlazy_ok = atoi(argv[4]);
			r = may_lookup(0, &nd);
			printf("ret=%d unlazy=%d perm=%s,%s\n", r, unlazies, how(0), how(1));
			return 0;
		}
	EOF
	cp "$1" "$(dirname "$2")/fn.c"
	gcc -std=gnu11 -Wall -Wno-unused-parameter -o "$2" "$2.c"
}

# ml_cases PROG: PROG's output for the six cases, one per line: a lazy
# success; a lazy EACCES (-13) with try_to_unlazy() failing, then
# succeeding; a lazy ECHILD (-10) with try_to_unlazy() succeeding (the
# ref-walk retry gives EACCES), then failing; ref-walk mode, EACCES.
ml_cases() {
	"$1" 1 0 0 1
	"$1" 1 -13 0 0
	"$1" 1 -13 0 1
	"$1" 1 -10 -13 1
	"$1" 1 -10 0 0
	"$1" 0 -13 0 1
}

# check_backport L: the PER_BACKPORT points of line L's "backport".
check_backport() {
	local L=$1 f got old want r612 fixed_dir bp_dir s w
	s=$(table_series "$L" backport || true)
	w=0
	apply_series "$L" backport "$t/own" || w=1
	ok "$w" \
		"$L: backport's series (${s:-not in the kernel table}) applies with git apply --check"
	f=$(cat "$t/own")
	cp "$src/fs/namei.c" "$t/backport.c"
	ok "$([[ -n $f && $(sed -n 's|^+++ b/||p' "$f") == fs/namei.c ]] && cmp -s "$src/fs/dcache.c" "$tmp/pristine-$L/dcache.c"; echo $?)" \
		"$L: backport's own patch (${f#"$P/"}) touches only fs/namei.c"
	fixed_dir=$t/fns-fixed bp_dir=$t/fns-backport
	split_fns "$t/fixed.c" "$fixed_dir"
	split_fns "$t/backport.c" "$bp_dir"
	got=$(diff -rq "$fixed_dir" "$bp_dir" | sed "s|$t/||g" || true)
	diag "$got"
	ok "$([[ $got == "Files fns-fixed/may_lookup and fns-backport/may_lookup differ" ]]; echo $?)" \
		"$L: backport changes may_lookup() and nothing else in namei.c"

	mkdir -p "$t/ml-fixed" "$t/ml-backport"
	may_lookup_prog "$fixed_dir/may_lookup" "$t/ml-fixed/prog" || true
	may_lookup_prog "$bp_dir/may_lookup" "$t/ml-backport/prog" || true
	old=$(ml_cases "$t/ml-fixed/prog" || true)
	got=$(ml_cases "$t/ml-backport/prog" || true)
	diag "fixed:"$'\n'"$old"$'\n'"backport:"$'\n'"$got"
	mapfile -t old <<<"$old"
	mapfile -t got <<<"$got"
	# The bug, on the 6.1 base: the lazy EACCES trusted, no try_to_unlazy().
	ok "$([[ ${old[1]} == 'ret=-13 unlazy=0 perm=nonblock,-' ]]; echo $?)" \
		"$L: fixed's may_lookup() returns a lazy EACCES without try_to_unlazy() (what backport fixes)"
	ok "$([[ ${got[1]} == 'ret=-10 unlazy=1 perm=nonblock,-' ]]; echo $?)" \
		"$L: backport: a lazy EACCES whose try_to_unlazy() fails becomes -ECHILD (redo in ref-walk)"
	ok "$([[ ${got[0]} == 'ret=0 unlazy=0 perm=nonblock,-' && ${got[2]} == 'ret=-13 unlazy=1 perm=nonblock,-' ]]; echo $?)" \
		"$L: backport: success stays lazy; a lazy EACCES is returned only after try_to_unlazy() succeeds"
	ok "$([[ ${got[3]} == 'ret=-13 unlazy=1 perm=nonblock,block' && ${got[4]} == 'ret=-10 unlazy=1 perm=nonblock,-' &&
		${got[5]} == 'ret=-13 unlazy=0 perm=block,-' ]]; echo $?)" \
		"$L: backport: after -ECHILD inode_permission() is retried without MAY_NOT_BLOCK; ref-walk unchanged"

	# The same answers as a line that has the fix upstream (6.12).
	r612=/usr/src/linux-source-6.12.tar.xz
	if [[ $L != 6.12 && -r $r612 ]]; then
		pristine 6.12 "$r612"
		split_fns "$tmp/pristine-6.12/namei.c" "$t/fns-612"
		mkdir -p "$t/ml-612"
		may_lookup_prog "$t/fns-612/may_lookup" "$t/ml-612/prog" || true
		want=$(ml_cases "$t/ml-612/prog" || true)
		diag "6.12:"$'\n'"$want"
		ok "$([[ $want == "$(printf '%s\n' "${got[@]}")" ]]; echo $?)" \
			"$L: backport's may_lookup() answers as 6.12's (upstream fixed) in all six cases"
	else
		skip "$L: backport vs 6.12's may_lookup(): $r612 not installed"
	fi
}

# check_seq_forget L: the PER_SEQ_FORGET points of line L's "seq-forget".
check_seq_forget() {
	local L=$1 f o s got n added caller w ser
	ser=$(table_series "$L" seq-forget || true)
	w=0
	apply_series "$L" seq-forget "$t/own" || w=1
	ok "$w" \
		"$L: seq-forget's series (${ser:-not in the kernel table}) applies with git apply --check"
	f=$(cat "$t/own")
	ok "$([[ -n $f && $(sed -n 's|^+++ b/||p' "$f") == fs/dcache.c ]] && cmp -s "$src/fs/namei.c" "$t/fixed.c"; echo $?)" \
		"$L: seq-forget's own patch (${f#"$P/"}) touches only fs/dcache.c, namei.c is fixed's"
	o=$t/fns-dcache s=$t/fns-seq-forget
	split_fns "$tmp/pristine-$L/dcache.c" "$o"
	split_fns "$src/fs/dcache.c" "$s"
	got=$(seq_moves "$o" __dentry_kill | paste -sd ' ')
	ok "$([[ $got == '__d_drop dentry_unlink_inode' ]]; echo $?)" \
		"$L: pristine __dentry_kill() moves d_seq through __d_drop() and dentry_unlink_inode() (got: $got)"
	got=$(seq_moves "$s" __dentry_kill | paste -sd ' ')
	ok "$([[ -z $got ]]; echo $?)" "$L: seq-forget's __dentry_kill() moves no d_seq (got: ${got:-none})"

	# Only __dentry_kill() changes; what is added is functions only it
	# calls, and comment lines.
	got=$(diff -rq "$o" "$s" | sed "s|$t/||g" || true)
	diag "$got"
	added=$(sed -n 's|^Only in fns-seq-forget: ||p' <<<"$got")
	w=0
	[[ $(grep -v '^Only in fns-seq-forget: ' <<<"$got") == $'Files fns-dcache/=rest and fns-seq-forget/=rest differ\nFiles fns-dcache/__dentry_kill and fns-seq-forget/__dentry_kill differ' ]] || w=1
	[[ -n $added ]] || w=1
	for n in $added; do
		caller=$(cd "$s" && grep -lE "\\b$n\\(" -- * | grep -vx -- "$n" | paste -sd ' ')
		[[ $caller == __dentry_kill ]] || w=1
	done
	n=$(diff "$o/=rest" "$s/=rest" | grep '^[<>]' | grep -vE '^> *(/\*.*|\*.*|)$' || true)
	[[ -z $n ]] || { diag "outside functions: $n"; w=1; }
	ok "$w" "$L: seq-forget changes only __dentry_kill() and adds only functions it alone calls (${added//$'\n'/, })"

	# Every other writer as it was, and still moving d_seq.
	w=0
	for n in d_delete dentry_unlink_inode __d_drop __d_move __d_instantiate; do
		cmp -s "$o/$n" "$s/$n" || w=1
		[[ -n $(seq_moves "$s" "$n") ]] || w=1
	done
	ok "$w" "$L: seq-forget leaves d_delete(), dentry_unlink_inode(), __d_drop(), __d_move(), __d_instantiate() as they were, moving d_seq"
}
