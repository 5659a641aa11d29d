# dcrace: top-level targets. The module's kbuild file is ./Kbuild
# (out of tree: make -C <kernel build tree> M=$PWD).
#
#   make compare     the main job: unfixed vs fixed kernel, side by side
#   make bench       probe cost, time to first false ENOENT, pipeline times
#                    (writes docs/benchmarks.md and .json; ARGS=--cold too)
#   make check       every test (host and in-guest), ends "N passed, N failed"
#   make kernels     build the unfixed and fixed kernels (VARIANT=debug too)
#   make initramfs   the busybox guest image
#   make module      dcrace.ko against the guest kernel tree (W=1)
#   make deps        install the Debian packages needed

HS := host-scripts
VARIANT ?= std
ARGS ?=

.PHONY: all deps kernels initramfs module compare bench check lint help clean

all: module

help:
	@sed -n 's/^#   //p' Makefile

deps:
	@$(HS)/deps

kernels: deps
	@$(HS)/build-kernels --variant $(VARIANT)

initramfs: deps
	@$(HS)/build-initramfs

module: kernels
	@$(HS)/build-module $(if $(filter debug,$(VARIANT)),--kernel debug)

compare: kernels initramfs module
	@$(HS)/compare $(ARGS)

bench: kernels initramfs module
	@$(HS)/bench $(ARGS)

check: deps kernels initramfs module
	@$(HS)/build-kernels --variant debug
	@$(HS)/build-kernels --variant debian
	@tests/run $(ARGS)

lint:
	@tests/run lint

clean:
	rm -rf results
