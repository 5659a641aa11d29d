"""Command-line argument types and the parser every entry point uses: a
bad command line is one line on stderr and the script's usage exit code."""

import argparse
import math
import os
import sys
import traceback

from . import defs


def positive_int(s):
    try:
        v = int(s, 10)
    except ValueError:
        raise argparse.ArgumentTypeError("not a whole number: %r" % s)
    if v < 1:
        raise argparse.ArgumentTypeError("must be at least 1: %r" % s)
    return v


def int_range(lo, hi, what="a whole number"):
    """A type: a whole number in [lo, hi]."""
    def parse(s):
        try:
            v = int(s, 10)
        except ValueError:
            raise argparse.ArgumentTypeError("not %s: %r" % (what, s))
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError("must be in %d..%d: %r" % (lo, hi, s))
        return v
    return parse


def seconds(s):
    """Workload seconds: a finite number in (0, 3600]."""
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number of seconds: %r" % s)
    if not math.isfinite(v) or not 0 < v <= 3600:
        raise argparse.ArgumentTypeError("must be in (0, 3600] s: %r" % s)
    return v


# Window widening in microseconds (dcrace.ko's inject/delay_us range).
inject_us = int_range(0, 10000, "a number of microseconds")
# dcrace.ko's inject/window: a bit mask of the windows widened.
window = int_range(1, 7, "a window")
WINDOW_HELP = ("a bit mask: 1 after the d_seq sample, 2 after a step ends, 4 at "
               "terminate_walk() before the end snapshot (between an error decision and the "
               "snapshot; a test's delay)")
percent = int_range(0, 100, "a percentage")


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors and a chosen usage exit code."""

    def __init__(self, *a, usage_code=defs.EX_USAGE, **kw):
        kw.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*a, **kw)
        self.usage_code = usage_code

    def error(self, message):
        sys.stderr.write("%s: error: %s (see --help)\n" % (self.prog, message))
        sys.exit(self.usage_code)


MIX_OPS = ("stat", "lstat", "open", "openat")


def mix(s):
    """dcrace-workload's --mix: OP=W[,OP=W...], OP one of MIX_OPS, W in
    0..1000, not all 0."""
    total = 0
    for item in s.split(","):
        op, eq, w = item.partition("=")
        if not eq or op not in MIX_OPS:
            raise argparse.ArgumentTypeError("not OP=W[,OP=W...] with OP %s: %r" % ("|".join(MIX_OPS), s))
        total += int_range(0, 1000, "a weight")(w)
    if not total:
        raise argparse.ArgumentTypeError("every weight is 0: %r" % s)
    return s


def unknown_kernels(names):
    """The NAMES that are neither a kernel of the table nor a file (a
    bzImage path): a usage error, said before any guest boots."""
    return [n for n in names if n not in defs.KERNELS and not os.path.isfile(n)]


def unknown_kernels_error(names):
    """The usage error for unknown kernel NAMES (a non-empty list)."""
    return "unknown kernel%s: %s (want %s, or a bzImage path)" % (
        "s" if len(names) > 1 else "", ", ".join(names), ", ".join(defs.kernel_names()))


def table_like(name):
    """Is NAME meant as a name of the kernel table (no directory, or
    LINE/NAME as in 6.12/fixed), rather than a path?"""
    head, sep, _ = name.partition("/")
    return not sep or head in defs.LINES


def internal_error(prog, e):
    """One line on stderr for an unexpected exception (never a stack of
    them; DCRACE_TRACEBACK=1 prints the traceback too)."""
    if os.environ.get("DCRACE_TRACEBACK"):
        traceback.print_exc()
    sys.stderr.write("%s: internal error: %s: %s (DCRACE_TRACEBACK=1 shows where)\n" % (
        prog, type(e).__name__, str(e).replace("\n", " ")))
