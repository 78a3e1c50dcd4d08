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
# BENCH: the benchmark's row set. Unset or headline: the 14 rows of the
# cover letter's table; full: every row (size sweep, 2-vCPU rows);
# quick: CI's reduced set. Anything else is refused.
BENCH ?=
ifneq ($(filter-out headline full quick,$(BENCH))$(word 2,$(BENCH)),)
$(error BENCH='$(BENCH)': not a row set; accepted: headline (the default: the cover letter's 14 rows), full (every row) or quick (CI's reduced set))
endif
BENCH_ARGS = --set $(or $(BENCH),headline)

SCRIPTS := overlay-tools
BASE = $(if $(KSRC),$(KSRC),$$($(SCRIPTS)/fetch-kernel.sh))

# Every variable the goals (and the scripts they run) read is checked
# here, while make reads this file: a bad value stops make before the
# package step, a download or a build.  check-vars.sh knows which target
# reads what; a new target goes into its table.
shq = '$(subst ','\'',$(1))'
CHECKED_VARS := $(shell $(SCRIPTS)/check-vars.sh --vars)
VARS_BAD := $(shell $(SCRIPTS)/check-vars.sh $(or $(MAKECMDGOALS),all) -- \
	$(foreach v,$(CHECKED_VARS),$(if $(filter undefined,$(origin $(v))),,$(call shq,$(if \
	$(filter environment%,$(origin $(v))),env:)$(v)=$($(v))))) >&2 || echo bad)
ifneq ($(VARS_BAD),)
$(error nothing was run: fix the value(s) above ('make help' lists the variables))
endif

.PHONY: all build tree export series check check-all test test-llvm test-tooling am-check bisect-check \
	bench bench-all bench-all-run bench-report results deps kunit checkpatch sparse clean distclean help

all: build

# 'make help': every target and variable.  Durations are classes, not
# figures: the measured ones are in the results document.
define HELP_TEXT
kpkeys on Linux 7.3: the series and the tooling that builds, tests, posts it.
Every target but help, clean, distclean, export, results and bench-report first
installs missing Debian packages (deps) and assembles build/tree.  Durations
are rough, with warm caches (a first run also fetches the base kernel, builds
QEMU and sparse); measured figures: see the results document,
results/measured.md.

Targets (where the outputs go; how long):
  make [build]       kernel + guest initramfs for ARCH (build/<arch>[-llvm]/;
                     minutes)
  make check         build, boot under QEMU, run every test for ARCH: KUnit, the
                     guest's tests, one boot per KPKEYS_MODES value
                     (build/results/<arch>*.log and .log.json; minutes)
  make check-all     make check for the three architectures (about an hour)
  make test          what CI runs: tooling tests, check-all, sparse, the quick
                     benchmark; ends "N passed, N failed" (build/results/;
                     about an hour)
  make test-llvm     check-all with LLVM=1 (build/<arch>-llvm/; about an hour)
  make test-tooling  tests of the tooling (build/results/tooling.json; minutes)
  make kunit         the KUnit suites through kunit.py, for ARCH
                     (build/kunit-<arch>[-llvm]/; minutes)
  make sparse        sparse on the series' files built for ARCH; fails on a new
                     warning (build/<arch>/, report on the console; minutes)
  make bench         benchmark suite for ARCH, rows BENCH (build/bench/, quick:
                     build/bench/quick/; BENCH=full: several times longer)
  make bench-all     the main job: the benchmark on all three architectures
                     (same; under an hour, BENCH=full: over an hour)
  make bench-report  RUNS="a.json ..." [BEFORE="..."] [OUT=<dir>]: the same
                     report from kpkeys_bench -j files of any machine
                     (build/bench-report/; seconds)
  make results       record new runs in results/, write results/measured.md
                     (seconds)
  make tree          build/tree: the base kernel + the series' commits (minutes)
  make export        build/tree's new commits back into the overlay (seconds)
  make series        git format-patch + cover letters (build/series/, the
                     separate series in build/series/<name>/; seconds)
  make checkpatch    checkpatch.pl --strict on the series (console; minutes)
  make am-check      the series applies with git am to the base (seconds)
  make bisect-check  every posted patch builds on its own, for BISECT_ARCHES
                     (build/bisect-<arch>/, series/bisect-check.txt; hours)
  make deps          install the Debian packages the project needs (minutes)
  make clean         remove build/<arch>*, build/results, build/series (seconds)
  make distclean     remove build/, build/tree included (seconds)

Variables [default]; a bad value stops make before anything runs:
  ARCH=x86_64|arm64|powerpc  [the host: $(ARCH_HOST)]
  LLVM=1|-<N>        [gcc] clang-19 (1) or clang-<N>: build/<arch>-llvm/
  KSRC=<dir>         [Debian's linux-source-7.3, in KPKEYS_CACHE] the 7.3 base
  C=1|2              [off] Kbuild runs sparse on what it compiles
  ICOUNT=1           [off] boots with QEMU -icount shift=0,sleep=off -smp 1
  QEMU_TIMEOUT=<s>   [300] seconds per boot (twice that: x86_64 debug kernel)
  QEMU_CPU=<model>   [max; QEMU's own on powerpc] QEMU -cpu
  KPKEYS_APPEND=<p>  [none] kernel parameters added to every boot
  KPKEYS_MODES="..." [nobatch off bogus] kpkeys_hardened_pgtables= boots after
                     the default one: nobatch, off, or a value the kernel must
                     refuse; empty: the default boot only
  BENCH=headline|full|quick  [headline] the benchmark's row set
  RUNS, BEFORE, OUT  bench-report's kpkeys_bench -j files (runs, baseline),
                     output directory [build/bench-report]
  BISECT_ARCHES="."  [x86_64 arm64 powerpc]   BISECT_COMMITS=<m>-<n> [all]
  BISECT_FRESH=1     [off] build every patch again, whatever the record says
  BISECT_OPTIONS_ONLY=1  [off] only check that no patch loses a config option
  BISECT_RECORD=<file>   [series/bisect-check.txt; -llvm.txt with LLVM]
  BISECT_GAPS=<file>     [series/bisect-gaps.txt] option gaps allowed by design
  KPKEYS_BISECT_BUILD=<command>  [build.sh] a stand-in (needs BISECT_RECORD)
  SIGNOFF='Name <address>'  [git's user.name, user.email] who posts the series
  BENCH_REPORT=<dir>|<report.md>  [none] a bench report: its cross-arch
                     table -> series/bench.md
  KMAKEFLAGS=<args>  [none] more Kbuild arguments   CHECK=<sparse> [sparse.sh's]
  KPKEYS_CACHE=<dir> [~/.cache/kpkeys] downloads; QEMU, sparse, busybox builds
  KPKEYS_BUILD=<dir> [build] kernels and results (not build/tree, build/bench)
  KPKEYS_QEMU_BINDIR=<dir>  [the project's QEMU] QEMU for arm64 and powerpc
  KPKEYS_QEMU_SOURCE, KPKEYS_SPARSE_SOURCE='deb-src <URI> <suite> <component>'
                     [deb-src http://deb.debian.org/debian sid main]
  KPKEYS_QEMU_JOBS=<n> [CPUs + 1]  KPKEYS_BUSYBOX_MIRROR=<url> [deb.debian.org]
  KPKEYS_O, KPKEYS_CONFIG_ONLY, KPKEYS_CONFIG_LENIENT: the scripts' own; refused
endef

help:
	@: $(info $(HELP_TEXT))

deps:
	@$(SCRIPTS)/install-deps.sh

tree: deps
	@python3 $(SCRIPTS)/tree.py assemble --ksrc "$(BASE)" --tree $(TREE)

# Used by the build targets: a tree with unexported edits is built as is.
tree-if-needed: deps
	@python3 $(SCRIPTS)/tree.py assemble --if-needed --ksrc "$(BASE)" --tree $(TREE)

export:
	@python3 $(SCRIPTS)/tree.py export --tree $(TREE)

# results/measured.md and the README's measured block, from the records
# in results/: first copies in the runs not yet recorded (build/timed/*.json
# from overlay-tools/timed.sh, a finished build/bench).
results:
	@python3 $(SCRIPTS)/results.py import

# SIGNOFF: who posts the series (Developer's Certificate of Origin);
# BENCH_REPORT: a report.md of make bench-all or make bench-report, or
# its directory, whose cross-architecture table becomes series/bench.md,
# the cover letter's.
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
	@$(SCRIPTS)/checkpatch-series.py $(TREE) series/checkpatch-allow \
		$$(ls build/series/0*.patch build/series/*/0*.patch | grep -v /qemu- | grep -v 0000-cover-letter)

build: tree-if-needed
	@LLVM=$(LLVM) $(SCRIPTS)/alive.sh "$(ARCH): building the kernel" -- $(SCRIPTS)/build.sh $(ARCH) $(TREE)
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

# The main job, timed as a whole (packages, kernel download, the project's
# QEMU and every build included) by timed.sh: build/timed/bench-all*.json,
# which 'make results' publishes.
bench-all:
	@$(SCRIPTS)/timed.sh bench-all$(if $(filter-out headline,$(or $(BENCH),headline)),-$(BENCH)) -- \
		make --no-print-directory bench-all-run

bench-all-run: tree-if-needed
	@python3 $(SCRIPTS)/bench.py --tree $(TREE) $(foreach a,$(ARCHES),--arch $(a)) $(BENCH_ARGS)

# The report step alone: kpkeys_bench -j files from any machine and mode;
# the outputs of bench-all (report.md, results.csv, <arch>.json, the
# chart) go to OUT.
bench-report:
	@if [ -z "$(RUNS)" ]; then \
		echo 'bench-report: give the runs: make bench-report RUNS="a.json b.json ..." [BEFORE="..."] [OUT=dir]' >&2; \
		exit 2; fi
	@python3 $(SCRIPTS)/bench.py report --out "$(or $(OUT),build/bench-report)" \
		$(RUNS) $(foreach b,$(BEFORE),--before $(b))

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
