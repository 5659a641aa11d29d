#!/bin/bash
# Layers: the files of dcrace.ko and of the harness call only downward.
# The graph of references between the module's object files is built
# from the code itself (A -> B when A.o uses a symbol that B.o defines:
# calls and data alike, read with nm); the graph of imports between the
# harness's Python modules likewise (ast). Any cycle of two or more files
# fails (docs/design.md, "Where things are").
set -euo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
plan 4

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rc=0
ko=$("$HS/build-module" 2>"$tmp/err") || rc=$?
diag "$(tail -n 5 "$tmp/err")"
ok "$rc" "dcrace.ko builds (exit $rc)"
objdir=$(dirname "$(dirname "$(dirname "${ko:-/x/x/x}")")")/module
mapfile -t objs < <(find "$objdir" -maxdepth 1 -name '*.o' ! -name '*.mod.o' ! -name 'dcrace_test*.o' | sort)

# the module's files: "A B" per reference, A.o using what B.o defines
for o in "${objs[@]}"; do
	nm "$o" | awk -v f="$(basename "$o" .o)" '$1 == "U" { print "U", f, $2; next }
		NF == 3 && $2 ~ /^[A-Z]$/ { print "D", f, $3 }'
done >"$tmp/syms"
python3 - "$tmp/syms" >"$tmp/mod" <<'PY'
import sys
defs, uses = {}, []
for line in open(sys.argv[1]):
    k, f, s = line.split()
    if k == "D":
        defs[s] = f
    else:
        uses.append((f, s))
edges = sorted({(f, defs[s]) for f, s in uses if s in defs and defs[s] != f})
for a, b in edges:
    print(a, b)
PY
n_files=${#objs[@]}
n_edges=$(wc -l <"$tmp/mod")
ok "$([[ $n_files -ge 5 && $n_edges -ge 4 ]]; echo $?)" \
	"the module's reference graph is read from its objects ($n_files files, $n_edges references)"

# strongly connected components of two or more files (Tarjan)
scc() {
	python3 - "$1" <<'PY'
import sys
g = {}
for line in open(sys.argv[1]):
    a, b = line.split()
    g.setdefault(a, set()).add(b)
    g.setdefault(b, set())
index, low, stack, on, out = {}, {}, [], set(), []
def visit(v, n=[0]):
    index[v] = low[v] = n[0]; n[0] += 1
    stack.append(v); on.add(v)
    for w in sorted(g[v]):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v:
                break
        if len(c) > 1:
            out.append(sorted(c))
sys.setrecursionlimit(10000)
for v in sorted(g):
    if v not in index:
        visit(v)
for c in out:
    inner = ["%s->%s" % (a, b) for a in c for b in sorted(g[a]) if b in c]
    print("cycle of %d: %s (%s)" % (len(c), " ".join(c), ", ".join(inner)))
PY
}
cyc=$(scc "$tmp/mod")
diag "$cyc"
ok "$([[ -z $cyc ]]; echo $?)" "no cycle between the module's files${cyc:+: $(grep -c . <<<"$cyc") found}"

# the harness: "A B" when dcrace_harness/A.py imports dcrace_harness/B.py
python3 - "$HS/dcrace_harness" >"$tmp/py" <<'PY'
import ast, os, sys
d = sys.argv[1]
mods = {f[:-3] for f in os.listdir(d) if f.endswith(".py")}
for m in sorted(mods):
    tree = ast.parse(open(os.path.join(d, m + ".py")).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [a.name for a in node.names]
            for n in names:
                n = n.split(".")[0]
                if n in mods and n != m:
                    print(m, n)
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "dcrace_harness" and len(parts) > 1 and parts[1] in mods:
                    print(m, parts[1])
PY
cyc=$(scc "$tmp/py")
diag "$cyc"
ok "$([[ -z $cyc ]]; echo $?)" "no import cycle between the harness's modules ($(wc -l <"$tmp/py") imports)"
done_testing
