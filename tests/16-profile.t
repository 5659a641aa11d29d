#!/bin/bash
# host-scripts/profile: the TCG plugin builds warning-free; its counts
# are mapped to functions (module text by name, the rest a trampoline),
# two boots differ per function into instructions per call; a real
# profile of a stat() loop on the unfixed kernel splits dcrace.ko's
# handlers from the kprobe mechanism.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 5

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok "$(gcc -Wall -Wextra -Werror -shared -fPIC -O2 -o "$tmp/p.so" "$HS/qemu-tbprof.c" -lpthread 2>&1 >/dev/null | grep -c . || true)" \
	"the TCG plugin builds with -Wall -Wextra -Werror"

r=$(cd "$HS" && python3 -c "
from dcrace_harness import profile as p
log = '''x
DCRACE-KALLSYMS-BEGIN
ffffffff81000000 T _stext
ffffffff81001000 T walk_component
ffffffff81001200 t step_into
ffffffffa0000000 t exit_pre	[dcrace]
ffffffffa0000100 t rcu_site_pre	[dcrace]
ffffffff81002000 D some_data
DCRACE-KALLSYMS-END
'''
s = p.kallsyms(log)
a = p.per_function('ffffffff81001010 5 500\nffffffffa0000010 4 40\nffffffffc0000000 9 90\n', s)
b = p.per_function('ffffffff81001010 5 900\nffffffff81001210 3 30\nffffffffa0000110 4 120\nffffffffa0000010 4 80\nffffffffc0000000 9 130\n', s)
d = p.differ(a, b, 10)
print(sorted(d.items()))
print(p.summarize({'exit_pre [dcrace]': 4.0, 'rcu_site_pre [dcrace]': 12.0, 'opt_pre_handler': 20.0,
                   'kprobe_optinsn_page [__builtin__kprobes]': 30.0, 'walk_component': 40.0}, 2))
")
diag "$r"
ok "$([[ $(sed -n 1p <<<"$r") == "[('[trampoline]', 4.0), ('exit_pre [dcrace]', 4.0), ('rcu_site_pre [dcrace]', 12.0), ('step_into', 3.0), ('walk_component', 40.0)]" ]]; echo $?)" \
	"blocks mapped to functions (module text by name, none near: a trampoline), two boots' difference per call"
ok "$([[ $(sed -n 2p <<<"$r") == "{'total': 106.0, 'dcrace': 16.0, 'mechanism': 50.0, 'functions': [('walk_component', 40.0), ('kprobe_optinsn_page [__builtin__kprobes]', 30.0)]}" ]]; echo $?)" \
	"the summary: dcrace.ko's functions, the kprobe mechanism's, the top ones"

rc=0
"$HS/profile" --kernel nope >/dev/null 2>"$tmp/err" || rc=$?
ok "$([[ $rc -eq 64 ]] && grep -q 'no kernel named nope' "$tmp/err"; echo $?)" "an unknown kernel: usage error 64 (got $rc)"

rc=0
out=$("$HS/profile" --kernel unfixed --calls 300 --top 1000 --json 2>"$tmp/err") || rc=$?
diag "$(tail -n 3 "$tmp/err")"
r=$(jq -r '"\(.dcrace) \(.mechanism) \(.functions | map(select(.[0] | endswith("[dcrace]"))) | length)"' <<<"$out" 2>/dev/null || echo none)
ok "$([[ $rc -eq 0 ]] && awk '{ exit !($1 > 100 && $2 > 100 && $3 >= 2) }' <<<"$r"; echo $?)" \
	"a stat() loop on unfixed: dcrace.ko's handlers and the kprobe mechanism each over 100 instructions a call, dcrace's functions named (exit $rc; dcrace, mechanism, functions: $r)"
done_testing
