"""The values shared with the bash scripts and the tests, read from
defs.sh (their one definition): exit codes, the splat pattern, the kernel
table."""

import os
import re
import shlex

_HERE = os.path.dirname(os.path.abspath(__file__))
DEFS_SH = os.path.join(_HERE, "defs.sh")


def _read(path):
    out = {}
    with open(path) as f:
        for tok in shlex.split(f.read(), comments=True):
            name, eq, value = tok.partition("=")
            if eq and re.match(r"^[A-Z_]+$", name):
                out[name] = value
    return out


_DEFS = _read(DEFS_SH)

# Exit codes (README.md, "Exit codes").
EXIT_CODES = {k: int(v) for k, v in _DEFS.items() if k.startswith("EX_")}
EX_OK = EXIT_CODES["EX_OK"]
EX_FAIL = EXIT_CODES["EX_FAIL"]
EX_INCONCLUSIVE = EXIT_CODES["EX_INCONCLUSIVE"]
EX_HARNESS_INFRA = EXIT_CODES["EX_HARNESS_INFRA"]
EX_DETECTOR = EXIT_CODES["EX_DETECTOR"]
EX_USAGE = EXIT_CODES["EX_USAGE"]
EX_TIMEOUT = EXIT_CODES["EX_TIMEOUT"]
EX_INFRA = EXIT_CODES["EX_INFRA"]
EX_BISECT_USAGE = EXIT_CODES["EX_BISECT_USAGE"]
EX_INTERRUPTED = EXIT_CODES["EX_INTERRUPTED"]

SPLAT_RE = re.compile(_DEFS["DCRACE_SPLAT_RE"])
SPLAT_OWN = _DEFS["DCRACE_SPLAT_OWN"]
REPORT_RE = re.compile(_DEFS["DCRACE_REPORT_RE"])


def is_splat(line):
    return bool(SPLAT_RE.search(line)) and SPLAT_OWN not in line


class Kernel:
    """One row of the kernel table."""

    def __init__(self, name, line, build, early_test, expect, patches, package,
                 errors):
        self.name = name
        self.line = line
        self.package = None if package == "-" else package
        self.build = build
        self.early_test = early_test
        self.expect = expect
        self.patches = [] if patches == "-" else patches.split(",")
        # the hard-error rule (mode mutate): "race" or "clean"
        self.errors = errors

    @property
    def expect_race(self):
        return self.expect == "race"

    @property
    def expect_clean(self):
        return self.expect == "clean"


KERNELS = {}
for _row in _DEFS["DCRACE_KERNELS"].strip().splitlines():
    _k = Kernel(*_row.split())
    KERNELS[_k.name] = _k


LINES = _DEFS["DCRACE_LINES"].split()


def kernel_names(line=None):
    return [n for n, k in KERNELS.items() if line is None or k.line == line]


def line_name(line, name):
    """The table's name of kernel NAME (unfixed, fixed, ...) on LINE."""
    return name if line == LINES[0] else "%s/%s" % (line, name)


def file_name(name):
    """A kernel name as a file name part ("6.12/unfixed" -> "6.12-unfixed")."""
    return name.replace("/", "-")
