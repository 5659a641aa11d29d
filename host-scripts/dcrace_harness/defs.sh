# shellcheck shell=bash
# The values the bash scripts, the Python harness and the tests share, each
# defined once here. Sourced by host-scripts/lib.sh and tests/lib.sh; read
# by dcrace_harness/defs.py (NAME=VALUE lines, shell quoting, nothing else).
# shellcheck disable=SC2034

# Exit codes of every host script (README.md, "Exit codes", documents them).
EX_OK=0            # success: the fix holds (compare), good (check-kernel), done
EX_FAIL=1          # the answer is no: the fix does not hold (compare), a bad kernel (check-kernel), a failed soak; a build or setup step failed (bash scripts)
EX_INCONCLUSIVE=2  # compare, variants: no verdict (no unfixed/fixed pair, unfixed did not reproduce, an unhealthy run, a clean kernel without caught on a path)
EX_HARNESS_INFRA=3 # compare, variants, bench: infrastructure error (no trustworthy data, an unexpected error)
EX_DETECTOR=4      # compare: the detector failed: a dcrace.ko trace event or a user-visible false ENOENT without its match (check-kernel maps it to 125 or 1)
EX_USAGE=64        # a bad command line, an unknown kernel name (every script but check-kernel)
EX_TIMEOUT=124     # run-guest, soak: the guest hung and was killed at --timeout
EX_INFRA=125       # run-guest, soak: infrastructure error; check-kernel: could not test, an unexpected error (git bisect run skips the commit)
EX_BISECT_USAGE=128 # check-kernel: a bad command line, an unknown kernel name (git bisect run aborts)
EX_INTERRUPTED=130 # compare, check-kernel, bench, run-guest: SIGINT or SIGTERM

# Kernel splats: lines of a guest's dmesg or serial log that make a run
# untrustworthy (extended regex), except dcrace.ko's own report.
DCRACE_SPLAT_RE='BUG:|WARNING:|Oops|Call Trace|general protection|KASAN|possible circular locking|suspicious RCU usage|sleeping function called from invalid context|unreferenced object'
DCRACE_SPLAT_OWN='BUG: dcrace: false '

# The first line of a kernel report of any kind (extended regex): what
# run-guest prints of a guest it killed or that died, and where the hunt's
# kernel oracle starts a finding. A crash, a lockup, a stall and a hung
# task are reports as much as a BUG: or a WARNING:.
DCRACE_REPORT_RE='BUG:|BUG [^ ]+ \((Not tainted|Tainted:[^)]*)\): |WARNING:|Oops|general protection fault|kernel BUG at|Kernel panic|rcu: INFO: .*stall|rcu_(preempt|sched) detected stalls|self-detected stall|soft lockup|hard LOCKUP|blocked for more than [0-9]+ seconds|UBSAN:|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|sleeping function called from invalid context|unable to handle (page fault|kernel)'

# The kernels known by name, one per line:
#   name  line  build  early_test  expect  patches  package
# line: the kernel line (6.1, 6.12): std and debug kernels are built from
# /usr/src/linux-source-LINE.tar.xz with the series under patches/LINE/;
# names of another line than 6.1 say it ("6.12/unfixed", "debian-6.12").
# build: how it is made (std: build-kernels' group of one tree, debug:
# build-kernels --variant debug, debian: fetch-debian); early_test:
# dcrace.ko's early_test= (where the kernel tests for a NULL inode, "-"
# for none); expect: race (the bug is in it) or clean (fixed); patches:
# the series applied to the pristine source, comma-separated prefixes
# under patches/LINE/ ("0001" is 0001-*.patch, "open-last/0001" is
# open-last/0001-*.patch; "-": none, not built here); package: for debian
# kernels the Debian meta package whose image is fetched ("-" otherwise);
# errors: the rule beyond the NULL inode (workload mode mutate): race when
# the kernel returns RCU-mode hard errors from state its seqcounts no
# longer vouch for (6.1's may_lookup() trusts a lazy permission failure),
# clean when it revalidates them (6.12, and 6.1 with "backport").
# "expect" is the NULL-inode (false ENOENT) rule; "seq-forget" breaks it
# from the writer's side (its pruner clears d_inode without moving d_seq).
# compare needs one race and one clean kernel for a verdict (unfixed and
# fixed); any other clean one with a false ENOENT fails the fix too.
DCRACE_KERNELS='
unfixed            6.1  std    1 race  0001                  -                         race
fixed              6.1  std    1 clean 0001,0002             -                         race
mount-refetch      6.1  std    0 race  mount-refetch/0001    -                         race
open-last          6.1  std    0 race  open-last/0001        -                         race
backport           6.1  std    1 clean 0001,0002,backport/0001 -                       clean
seq-forget         6.1  std    1 race  0001,0002,seq-forget/0001 -                     race
debug              6.1  debug  1 race  0001                  -                         race
pristine-debug     6.1  debug  0 clean -                     -                         race
procfs-debug       6.1  debug  0 clean procfs/0001           -                         race
backport-debug     6.1  debug  0 clean backport/0001         -                         clean
pidfree-debug      6.1  debug  0 clean pidfree/0001          -                         race
symlink-debug      6.1  debug  0 clean symlink/0001          -                         race
debian             6.1  debian 0 clean -                     linux-image-amd64         race
6.12/unfixed       6.12 std    1 race  0001                  -                         clean
6.12/fixed         6.12 std    1 clean 0001,0002             -                         clean
6.12/mount-refetch 6.12 std    0 race  mount-refetch/0001    -                         clean
6.12/open-last     6.12 std    0 race  open-last/0001        -                         clean
6.12/symlink       6.12 std    0 clean symlink/0001          -                         clean
6.12/pristine-debug 6.12 debug 0 clean -                    -                         clean
6.12/symlink-debug 6.12 debug  0 clean symlink/0001         -                         clean
debian-6.12        6.12 debian 0 clean -                     linux-image-6.12-amd64    clean
debian-6.12-rt     6.12 debian 0 clean -                     linux-image-6.12-rt-amd64 clean
'
# The kernel lines, and the pair compare and make compare use on each.
DCRACE_LINES='6.1 6.12'
