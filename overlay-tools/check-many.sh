#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run check.sh for several architectures (and optionally the tooling
# tests), keep going after a failure, then print one summary ending in
# "N passed, N failed".  Exit status is non-zero if anything failed.
#
# --bench-quick also runs the reduced benchmark suite (overlay-tools/bench.py
# --quick) on each architecture after its checks: the test build for the
# counters and the timings, except on arm64 and powerpc, whose timings
# come from the production kernel that check.sh built (bench.py
# QUICK_PROD_ARCHES).  One case per benchmark row and mode, passed
# when the row produced results, and one for the counter and mode
# assertions.
#
# --sparse also runs sparse (overlay-tools/sparse.sh check) on the series' files
# of each build after its checks: one case per build, failed by a new
# warning on a line the series added (skipped when the build failed).
#
# usage: check-many.sh [--tooling] [--bench-quick] [--sparse] <kernel tree> [<arch>[:llvm] ...]
set -uo pipefail
. "$(dirname "$0")/lib.sh"

tooling=0 bench=0 sparse=0
while [ $# -gt 0 ]; do
	case "$1" in
	--tooling) tooling=1 ;;
	--bench-quick) bench=1 ;;
	--sparse) sparse=1 ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || { echo "usage: $0 [--tooling] [--bench-quick] [--sparse] <kernel tree> [<arch>[:llvm] ...]" >&2; exit 2; }
src=$1
shift
for spec in "$@"; do
	check_arch "${spec%:llvm}"
done

results=$KPKEYS_BUILD/results
mkdir -p "$results"
jsons=()
start=$SECONDS
if [ "$tooling" = 1 ]; then
	"$KPKEYS_REPO/overlay-tools/test-tooling.sh" "$src" "$results/tooling.json"
	jsons+=("$results/tooling.json")
fi
for spec in "$@"; do
	arch=${spec%:llvm}
	llvm=${LLVM:-}
	[ "$spec" != "$arch" ] && llvm=1
	label=$arch${llvm:+-llvm}
	[ -n "$(llvm_arg "$llvm")" ] || label=$arch
	rm -f "$results/$label.log.json" "$results/$label+"*.log.json
	say "=== $label ==="
	built=1
	if ! LLVM=$llvm "$KPKEYS_REPO/overlay-tools/check.sh" "$arch" "$src" &&
	   [ ! -f "$results/$label.log.json" ]; then
		# The build or the initramfs failed before QEMU ran.
		printf '{"label": "%s", "problems": ["build failed (see above)"], "suites": {}}\n' \
			"$label" > "$results/$label.log.json"
		built=0
	fi
	jsons+=("$results/$label.log.json")
	for extra in "$results/$label+"*.log.json; do
		[ -f "$extra" ] && jsons+=("$extra")
	done
	if [ "$sparse" = 1 ]; then
		say "=== $label: sparse on the series' files ==="
		sjson=$results/sparse-$label.json
		rm -f "$sjson"
		if [ "$built" = 0 ]; then
			say "$label: not built, sparse skipped"
			printf '{"label": "sparse-%s", "problems": [], "suites": {"sparse": [{"name": "no_new_warnings", "status": "SKIP"}]}}\n' \
				"$label" > "$sjson"
		elif ! LLVM=$llvm "$KPKEYS_REPO/overlay-tools/sparse.sh" check --no-build \
			--results-json "$sjson" "$arch" "$src" && [ ! -f "$sjson" ]; then
			printf '{"label": "sparse-%s", "problems": ["sparse check failed (see above)"], "suites": {}}\n' \
				"$label" > "$sjson"
		fi
		jsons+=("$sjson")
	fi
	if [ "$bench" = 1 ] && [ "$label" = "$arch" ]; then
		say "=== $arch: benchmark suite, quick ==="
		bjson=$results/bench-$arch.json
		rm -f "$bjson"
		if ! python3 "$KPKEYS_REPO/overlay-tools/bench.py" --tree "$src" --arch "$arch" \
			--quick --results-json "$bjson" && [ ! -f "$bjson" ]; then
			printf '{"label": "bench-%s", "problems": ["benchmark suite failed (see above)"], "suites": {}}\n' \
				"$arch" > "$bjson"
		fi
		jsons+=("$bjson")
	fi
done
say "total time $((SECONDS - start)) s"
outputs="${results#"$KPKEYS_REPO"/}/: per boot the console log (<label>.log) and its results (<label>.log.json); kernels in build/<arch>*/"
[ "$bench" = 0 ] || outputs+="; the quick benchmark's report in build/bench/quick/"
say "outputs: $outputs"
exec python3 "$KPKEYS_REPO/overlay-tools/summary.py" "${jsons[@]}"
