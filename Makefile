# SPDX-License-Identifier: GPL-2.0
#
# kpkeys: build, test and package the project on top of Linux 7.3.
# 'make help' lists the targets.

SHELL := /bin/bash
ARCH_HOST := $(shell bash -c '. overlay-tools/lib.sh && host_arch')
ARCH ?= $(ARCH_HOST)
ARCHES := x86_64 arm64 powerpc
# Kernel tree the project is applied to: Debian's linux-source-7.3 unless
# KSRC= names another 7.3.x tree.
KSRC ?=
TREE := build/tree
LLVM ?=
ICOUNT ?=
export ICOUNT
# BENCH=quick: the reduced benchmark set (CI); anything else is refused.
BENCH ?=
ifneq ($(filter-out quick,$(BENCH)),)
$(error BENCH=$(BENCH): the only value is 'quick' (or leave it unset for the full suite))
endif
BENCH_ARGS = $(if $(BENCH),--quick)

SCRIPTS := overlay-tools
BASE = $(if $(KSRC),$(KSRC),$$($(SCRIPTS)/fetch-kernel.sh))

.PHONY: all build tree export series check check-all test test-llvm test-tooling am-check bisect-check \
	bench bench-all bench-report deps kunit checkpatch sparse clean distclean help

all: build

help:
	@echo 'kpkeys targets (ARCH=x86_64|arm64|powerpc, default: the host)'
	@echo '  make [build]       build the kernel and guest initramfs for ARCH'
	@echo '  make check         build, boot under QEMU and run every test for ARCH'
	@echo '  make check-all     make check for all three architectures'
	@echo '  make bench-all     benchmark suite on all three architectures (main job)'
	@echo '  make bench         benchmark suite for ARCH (BENCH=quick: reduced set)'
	@echo '  make bench-report RUNS="a.json b.json ..." [BEFORE="..."]'
	@echo '                     tables from kpkeys_bench -j runs of any machine'
	@echo '  make test          the test run CI uses: tooling, check-all, sparse, bench-all BENCH=quick'
	@echo '  make test-llvm     make check with LLVM=1 for all three architectures'
	@echo '  make test-tooling  tests of the project tooling itself'
	@echo '  make tree          assemble build/tree: base kernel + series commits'
	@echo '  make export        write commits made in build/tree back to the repo'
	@echo '  make series        git format-patch + cover letter into build/series'
	@echo '  make checkpatch    scripts/checkpatch.pl --strict on the series'
	@echo '  make am-check      the series applies with git am to the pristine base'
	@echo '  make bisect-check  every patch builds on its own (BISECT_ARCHES=..., hours)'
	@echo '  make sparse        sparse on the series files built for ARCH; fails on new warnings'
	@echo '  make kunit         the project KUnit suites via kunit.py run --arch=ARCH'
	@echo '  make deps          install the Debian packages the project needs'
	@echo '  make clean         remove build outputs (keeps build/tree)'
	@echo 'Variables: LLVM=1 (clang-19), KSRC=<7.3 tree>, C=1 (sparse on what is compiled),'
	@echo '           QEMU_TIMEOUT=<s>, KPKEYS_APPEND=<kernel params>, QEMU_CPU=<cpu>,'
	@echo '           ICOUNT=1 (QEMU -icount shift=0,sleep=off -smp 1)'

deps:
	@$(SCRIPTS)/install-deps.sh

tree: deps
	@python3 $(SCRIPTS)/tree.py assemble --ksrc "$(BASE)" --tree $(TREE)

# Used by the build targets: a tree with unexported edits is built as is.
tree-if-needed: deps
	@python3 $(SCRIPTS)/tree.py assemble --if-needed --ksrc "$(BASE)" --tree $(TREE)

export:
	@python3 $(SCRIPTS)/tree.py export --tree $(TREE)

# SIGNOFF: who posts the series (Developer's Certificate of Origin);
# BENCH_REPORT: a bench.py report.md whose cross-architecture table
# becomes series/bench.md, the cover letter's.
SIGNOFF ?=
series: tree-if-needed
	@python3 $(SCRIPTS)/tree.py series --tree $(TREE) --out build/series \
		--signoff "$(SIGNOFF)" $(if $(BENCH_REPORT),--bench "$(BENCH_REPORT)")

# The series applies with git am to the pristine 7.3 base (make test runs it).
am-check: series
	@python3 $(SCRIPTS)/tree.py am-check --tree $(TREE) --out build/series

# Every posted patch builds on its own for each architecture (BISECT_ARCHES=...);
# hours on 2 cores when cold, so not in CI: run it before posting.
bisect-check: tree-if-needed
	@$(SCRIPTS)/bisect-check.sh $(TREE) $(BISECT_ARCHES)

# sparse on the .c files the series adds or changes, as built for ARCH
# (building it first if needed); new warnings on lines the series added fail.
sparse: tree-if-needed
	@LLVM=$(LLVM) $(SCRIPTS)/sparse.sh check $(ARCH) $(TREE)

checkpatch: series
	@cd $(TREE) && PATH=/usr/bin:$$PATH ./scripts/checkpatch.pl --strict \
		--ignore FILE_PATH_CHANGES $$(ls ../series/0*.patch | grep -v 0000-cover-letter)

build: tree-if-needed
	@LLVM=$(LLVM) $(SCRIPTS)/build.sh $(ARCH) $(TREE)
	@LLVM=$(LLVM) $(SCRIPTS)/mkinitrd.sh $(ARCH) $(TREE) \
		$$(bash -c '. overlay-tools/lib.sh && build_dir $(ARCH) $$(llvm_arg "$(LLVM)")')

check: tree-if-needed
	@LLVM=$(LLVM) $(SCRIPTS)/check-many.sh $(TREE) $(ARCH)

check-all: tree-if-needed
	@LLVM=$(LLVM) $(SCRIPTS)/check-many.sh $(TREE) $(ARCHES)

test: tree-if-needed
	@$(SCRIPTS)/check-many.sh --tooling --sparse --bench-quick $(TREE) $(ARCHES)

bench: tree-if-needed
	@bash -c '. $(SCRIPTS)/lib.sh && check_arch "$(ARCH)"' bench
	@python3 $(SCRIPTS)/bench.py --tree $(TREE) --arch $(ARCH) $(BENCH_ARGS)

bench-all: tree-if-needed
	@python3 $(SCRIPTS)/bench.py --tree $(TREE) $(foreach a,$(ARCHES),--arch $(a)) $(BENCH_ARGS)

# The report step alone: kpkeys_bench -j files from any machine and mode.
bench-report:
	@if [ -z "$(RUNS)" ]; then \
		echo 'bench-report: give the runs: make bench-report RUNS="a.json b.json ..." [BEFORE="..."]' >&2; \
		exit 2; fi
	@python3 $(SCRIPTS)/bench.py report $(RUNS) $(foreach b,$(BEFORE),--before $(b))

test-llvm: tree-if-needed
	@$(SCRIPTS)/check-many.sh $(TREE) x86_64:llvm arm64:llvm powerpc:llvm

test-tooling: tree-if-needed
	@$(SCRIPTS)/check-many.sh --tooling $(TREE)

kunit: tree-if-needed
	@$(SCRIPTS)/kunit.sh $(ARCH) $(TREE)

clean:
	rm -rf build/x86_64* build/arm64* build/powerpc* build/results build/series

distclean:
	rm -rf build
