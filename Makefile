# dcrace: top-level targets. The module's kbuild file is ./Kbuild
# (out of tree: make -C <kernel build tree> M=$PWD).
#
#   make compare     the main job: unfixed vs fixed kernel, side by side
#                    (LINE=6.12: on the 6.12 line; default LINE=6.1)
#   make bench       probe cost in guest instructions (-icount) and in TCG
#                    wall time, time to first false ENOENT, pipeline times
#                    (writes docs/benchmarks.md and .json; ARGS=--cold too)
#   make hunt        the hunt: callbacks of RCU walks under KASAN, kernel x
#                    filesystem x scenario (writes docs/hunt.md; ARGS=--short)
#   make check       every test (host and in-guest), ends "N passed, N failed"
#   make kernels     build the line's kernels (VARIANT=debug: the KASAN one,
#                    VARIANT=debian: fetch Debian's stock ones)
#   make initramfs   the busybox guest image
#   make module      dcrace.ko against the guest kernel tree (W=1)
#   make deps        install the Debian packages needed

HS := host-scripts
VARIANT ?= std
ARGS ?=
# The kernel line (host-scripts/dcrace_harness/defs.sh: DCRACE_LINES).
LINE ?= $(or $(DCRACE_LINE),6.1)
export DCRACE_LINE := $(LINE)
LINES := 6.1 6.12
# The lines whose debug kernels make check boots (70-soak, 95-hunt,
# 96-symlink boot 6.1's; 6.12's are the hunt's, built by make hunt):
# a cold make check stays within an hour on 2 cores.
CHECK_DEBUG_LINES := 6.1
# The line's unfixed kernel (6.1's names carry no line).
UNFIXED := $(if $(filter 6.1,$(LINE)),unfixed,$(LINE)/unfixed)

.PHONY: all deps kernels initramfs module compare bench hunt check lint help clean

all: module

help:
	@sed -n 's/^#   //p' Makefile

deps:
	@$(HS)/deps

kernels: deps
	@$(HS)/build-kernels --line $(LINE) --variant $(VARIANT)

initramfs: deps
	@$(HS)/build-initramfs

module: kernels
	@$(HS)/build-module --kernel $(if $(filter debug,$(VARIANT)),debug,$(UNFIXED))

compare: kernels initramfs module
	@$(HS)/compare $(ARGS)

# the instruction rows boot both lines' kernels and Debian's stock ones
bench: kernels initramfs module
	@for l in $(LINES); do $(HS)/build-kernels --line $$l || exit 1; \
		$(HS)/build-kernels --line $$l --variant debian || exit 1; done
	@$(HS)/bench $(ARGS)

hunt: deps initramfs
	@for l in $(LINES); do $(HS)/build-kernels --line $$l --variant debug || exit 1; done
	@$(HS)/hunt $(ARGS)

check: deps kernels initramfs module
	@for l in $(LINES); do \
		case " $(CHECK_DEBUG_LINES) " in *" $$l "*) \
			$(HS)/build-kernels --line $$l --variant debug || exit 1;; esac; \
		$(HS)/build-kernels --line $$l --variant std && \
		$(HS)/build-kernels --line $$l --variant debian || exit 1; \
	done
	@tests/run $(ARGS)

lint:
	@tests/run lint

clean:
	rm -rf results
