#!/bin/bash
# The first bug found that upstream has not fixed (as far as checked:
# docs/findings/ext4-symlink-evict-wrong-object.md): on ext4, a lazy walk
# through a symlink another task replaces by rename() reads the body
# ext4_evict_inode() is erasing, and put_link() dismisses the link
# without rechecking its dentry, so stat() of a link to a regular file
# succeeds on the link's directory. The standalone reproducer, as an
# unprivileged user, on Debian's shipped 6.1 (wrong results every run),
# and on the same source with the fix (symlink-debug: none), plus the
# hunt's identity oracle seeing it in the generic symlink scenario.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 6

tmp_dir
R=$ROOT/docs/findings/repro/ext4-symlink-evict.c

# 1. the reproducer as a maintainer builds it
rc=0
gcc -O2 -static -pthread -Wall -Wextra -Werror -o "$tmp/ext4-symlink-evict" "$R" 2>"$tmp/cc" || rc=$?
ok "$rc" "the reproducer builds with gcc -static -Wall -Wextra -Werror ($(head -c 300 "$tmp/cc"))"
# a helper that drops to uid/gid 65534 before exec (the guest has no su)
cat >"$tmp/asuid.c" <<'EOF'
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	uid_t u = (uid_t)atoi(argv[1]);

	(void)argc;
	if (setgroups(0, NULL) || setresgid(u, u, u) || setresuid(u, u, u)) {
		perror("setresuid");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror("exec");
	return 1;
}
EOF
gcc -O2 -static -Wall -Wextra -Werror -o "$tmp/asuid" "$tmp/asuid.c"
rc=0
"$tmp/ext4-symlink-evict" >/dev/null 2>&1 || rc=$?
ok "$([[ $rc -eq 2 ]]; echo $?)" "no directory given: usage error, exit 2 ($rc)"

# run KERNEL SECONDS: the reproducer as uid 65534 on the guest's ext4;
# prints "EXIT WRONG CALLS"
run() {
	local log
	log=$T_RESULTS/symlink-${1//\//-}.log
	"$HS/run-guest" -q --kernel "$1" --fs ext4 --timeout 600 --log "$log" \
		--copy "$tmp/ext4-symlink-evict" --copy "$tmp/asuid" --exec "
mkdir -p /mnt/r && chown 65534:65534 /mnt/r && cd /mnt/r
/dcrace/copy/asuid 65534 /dcrace/copy/ext4-symlink-evict /mnt/r $2 4; echo DCRACE-R exit \$?
" >/dev/null 2>&1 || true
	echo "$(sed -n 's/^DCRACE-R exit //p' "$log" | tail -n 1) \
$(sed -n 's/.* calls in [0-9]* s: \([0-9]*\) gave a directory, \([0-9]*\) another object.*/\1+\2/p' "$log" | tail -n 1) \
$(sed -n 's/.* replacements, \([0-9]*\) stat() calls.*/\1/p' "$log" | tail -n 1)"
}

# 2. Debian's shipped 6.1, unprivileged: wrong results (10 of 10 runs of
# 10 s in the report)
read -r ex wrong calls <<<"$(run debian 10)"
diag "debian: exit ${ex:-none}, wrong ${wrong:-none}, calls ${calls:-none}"
ok "$([[ $ex == 1 && ${wrong%%+*} -gt 0 && ${calls:-0} -gt 2000 ]]; echo $?)" \
	"Debian's shipped 6.1, uid 65534, 10 s: stat() of a symlink to a file gave its directory ($wrong of $calls calls)"

# 3. the same source with the fix: none, as many calls
read -r ex wrong calls <<<"$(run symlink-debug 10)"
diag "symlink-debug: exit ${ex:-none}, wrong ${wrong:-none}, calls ${calls:-none}"
ok "$([[ $ex == 0 && $wrong == 0+0 && ${calls:-0} -gt 2000 ]]; echo $?)" \
	"6.1.192 + the put_link() fix (symlink-debug), 10 s: no wrong result in $calls calls"
read -r ex wrong calls <<<"$(run 6.12/symlink 10)"
diag "6.12/symlink: exit ${ex:-none}, wrong ${wrong:-none}, calls ${calls:-none}"
ok "$([[ $ex == 0 && $wrong == 0+0 && ${calls:-0} -gt 2000 ]]; echo $?)" \
	"6.12.118 + the fix (6.12/symlink, no debug options), 10 s: no wrong result in $calls calls"

# 4. the hunt's identity oracle names it: a canned result line of the
# symlink scenario with a wrong object is a finding of the cell
n=$( (cd "$HS" && python3 -c '
from dcrace_harness import hunt
w = {"seconds": 10, "iterations": 300, "calls": 5000, "ctl_errors": 0, "ctl_error": "",
     "identity_checks": 4000, "wrong_total": 1,
     "wrong_objects": [{"path": "s2", "got": "directory (not one the scenario made)", "dev": 257, "ino": 2, "count": 1}]}
st = {"window_permission": 9, "window_get_link": 9, "injected_delays": 9}
j = hunt.judge("pristine-debug:ext4:symlink", {"workload": w, "stats": st, "callbacks": [], "kernel_findings": []})
print(j["status"], [f["oracle"] for f in j["findings"]], j["findings"][0]["summary"])
') 2>&1 || true)
ok "$([[ $n == "findings ['identity'] wrong object: s2 gave directory (not one the scenario made)" ]]; echo $?)" \
	"the hunt: a symlink that gave a directory is an identity finding of its cell ($n)"
done_testing
