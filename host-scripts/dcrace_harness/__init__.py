"""dcrace's host harness: boots guests, parses what they print, judges
kernels. host-scripts/compare, check-kernel, variants and bench are its
entry points.

  defs      the values shared with bash and the tests (defs.sh): exit
            codes, the splat pattern, the kernel table
  argtypes  command-line types and the one-line-error parser
  spec      RunSpec: what one guest run does, and its guest script
  logs      the serial-log parser and the per-event match
  judge     the one judge: per-kernel summaries, health, evidence, verdicts
  runner    run-guest and other children in their own process group
  compare, check_kernel, variants, bench   the commands
"""
