#!/bin/bash
# Style: checkpatch --strict on the module, shellcheck on every script,
# the module builds with W=1 and no warning.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=host-scripts/lib.sh
source "$HS/lib.sh"
plan 5

tree=$(module_tree unfixed)
src=()
for f in "$ROOT"/module/*.c "$ROOT"/module/*.h "$ROOT"/include/dcrace/*.h; do
	src+=("${f#"$ROOT"/}")
done
cp_out=$(cd "$ROOT" && { perl "$tree/scripts/checkpatch.pl" --strict --no-tree --quiet -f \
	"${src[@]}" 2>&1 || true; })
diag "$cp_out"
ok "$([[ -z $cp_out ]]; echo $?)" "checkpatch.pl --strict --no-tree is clean on module/ and include/"

scripts=()
for f in "$ROOT"/host-scripts/* "$ROOT"/tests/run "$ROOT"/tests/*.t "$ROOT"/tests/*.sh "$ROOT"/.ci/run; do
	[[ -f $f ]] || continue
	if [[ $f == *.sh ]] || head -n 1 "$f" | grep -q '^#!.*bash'; then
		scripts+=("$f")
	fi
done
sc_out=$(cd "$ROOT" && { shellcheck -x -s bash "${scripts[@]}" 2>&1 || true; })
diag "$sc_out"
ok "$([[ -z $sc_out ]]; echo $?)" "shellcheck is clean on ${#scripts[@]} scripts"
sc_out=$(shellcheck -s sh "$ROOT/guest/init" 2>&1 || true)
diag "$sc_out"
ok "$([[ -z $sc_out ]]; echo $?)" "shellcheck is clean on guest/init"

py=("$ROOT"/host-scripts/dcrace_harness/*.py "$ROOT"/host-scripts/compare "$ROOT"/host-scripts/check-kernel "$ROOT"/host-scripts/bench "$ROOT"/host-scripts/profile)
py_out=$(for f in "${py[@]}"; do python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$f" 2>&1; done)
diag "$py_out"
ok "$([[ -z $py_out ]]; echo $?)" "the Python host scripts parse (${#py[@]} files)"

ok "$("$HS/build-module" >/dev/null 2>&1; echo $?)" "dcrace.ko builds with W=1 and no warning"
done_testing
