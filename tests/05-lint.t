#!/bin/bash
# Style: checkpatch --strict on the module, shellcheck on every script,
# the module builds with W=1 and no warning.
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=host-scripts/lib.sh
source "$HS/lib.sh"
plan 4

tree=$(module_tree unfixed)
cp_out=$(cd "$ROOT" && { perl "$tree/scripts/checkpatch.pl" --strict --no-tree --quiet -f \
	module/*.c include/dcrace/*.h 2>&1 || true; })
diag "$cp_out"
ok "$([[ -z $cp_out ]]; echo $?)" "checkpatch.pl --strict --no-tree is clean on module/ and include/"

scripts=("$ROOT"/host-scripts/* "$ROOT"/tests/run "$ROOT"/tests/*.t "$ROOT"/tests/lib.sh "$ROOT"/.ci/run)
sc_out=$(cd "$ROOT" && { shellcheck -x -s bash "${scripts[@]}" 2>&1 || true; })
diag "$sc_out"
ok "$([[ -z $sc_out ]]; echo $?)" "shellcheck is clean on ${#scripts[@]} scripts"
sc_out=$(shellcheck -s sh "$ROOT/guest/init" 2>&1 || true)
diag "$sc_out"
ok "$([[ -z $sc_out ]]; echo $?)" "shellcheck is clean on guest/init"

ok "$("$HS/build-module" >/dev/null 2>&1; echo $?)" "dcrace.ko builds with W=1 and no warning"
done_testing
