#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the project tooling itself; results as JSON for summary.py.
#
# usage: test-tooling.sh <assembled kernel tree> <result.json>
set -uo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || { echo "usage: $0 <kernel tree> <result.json>" >&2; exit 2; }
tree=$(cd "$1" && pwd)
result=$2
work=$(mktemp -d "$KPKEYS_BUILD/tooling.XXXXXX")
trap 'rm -rf "$work"' EXIT
cases=()

record() {	# record <name> <0|1> [reason]
	local status=PASS
	[ "$2" = 0 ] || status=FAIL
	cases+=("{\"name\": \"$1\", \"status\": \"$status\"}")
	echo "tooling: $status $1${3:+: $3}" >&2
}

# A copy of the repository (without build/) that the tests may change.
copy_repo() {
	local dst=$1
	mkdir -p "$dst"
	(cd "$KPKEYS_REPO" && git ls-files -co --exclude-standard -z) |
		rsync -a --from0 --files-from=- "$KPKEYS_REPO/" "$dst/"
}

snapshot() {
	(cd "$1" && find . -path ./build -prune -o -type f -print0 | LC_ALL=C sort -z |
		xargs -0 sha256sum)
}

# make tree + make export leaves the repository byte-identical, and an edit
# made in the tree comes back through export.
test_tree_roundtrip() {
	local repo=$work/repo t=$work/repo/build/tree before after ksrc
	copy_repo "$repo"
	ksrc=$(cut -d' ' -f1 "$tree/.git/kpkeys-base")
	before=$(snapshot "$repo")
	python3 "$repo/overlay-tools/tree.py" assemble --ksrc "$ksrc" --tree "$t" \
		--reuse-base "$tree" 2>"$work/assemble.err" ||
		{ record tree_roundtrip_is_byte_identical 1 "$(cat "$work/assemble.err")"; return; }
	python3 "$repo/overlay-tools/tree.py" export --tree "$t" 2>/dev/null
	after=$(snapshot "$repo")
	if [ "$before" = "$after" ]; then
		record tree_roundtrip_is_byte_identical 0
	else
		record tree_roundtrip_is_byte_identical 1 "$(diff <(echo "$before") <(echo "$after") | head -5)"
	fi

	# A new file is stored as the whole series leaves it: each equals the
	# file in the tree's last commit, and where later commits change it,
	# the commit that adds it holds the earlier version.
	local rpath kpath addrev differ="" n=0 older=0
	while read -r rpath; do
		kpath=${rpath#generic/}
		n=$((n + 1))
		cmp -s "$repo/$rpath" <(git -C "$t" show "HEAD:$kpath") || differ+=" $rpath"
		addrev=$(git -C "$t" log --diff-filter=A --format=%H kpkeys-base..HEAD -- "$kpath")
		cmp -s "$repo/$rpath" <(git -C "$t" show "$addrev:$kpath") || older=$((older + 1))
	done < <(sed -n 's/^\tadd //p' "$repo/series/series")
	if [ -n "$differ" ]; then
		record repository_holds_final_files 1 "not as the series leaves them:$differ"
	elif [ "$n" = 0 ] || [ "$older" = 0 ]; then
		record repository_holds_final_files 1 "$n new files, $older changed after the commit that adds them: nothing to check"
	else
		record repository_holds_final_files 0
	fi

	# A new file edited in the repository so that a later patch no longer
	# undoes on it is refused, naming the patch, before the tree changes.
	local broken=$work/broken err
	copy_repo "$broken"
	: > "$broken/generic/include/linux/kpkeys.h"
	if err=$(python3 "$broken/overlay-tools/tree.py" assemble --ksrc "$ksrc" \
			--tree "$work/broken-tree" --reuse-base "$tree" 2>&1); then
		record edited_new_file_refused 1 "assembled"
	elif ! grep -q "cannot be undone" <<<"$err" || [ -e "$work/broken-tree" ]; then
		record edited_new_file_refused 1 "$(tail -n 1 <<<"$err")"
	else
		record edited_new_file_refused 0
	fi
	rm -rf "$broken"

	# Edit a patched kernel file and a new file, amend the first commit
	# that adds a file no later commit touches (so that the fixup cannot
	# conflict with the rest of the series).
	local first="" newfile="" f c
	for c in $(git -C "$t" rev-list --reverse kpkeys-base..HEAD); do
		for f in $(git -C "$t" diff-tree -r --no-commit-id --diff-filter=A --name-only "$c"); do
			if [ "$(git -C "$t" rev-list --count "$c..HEAD" -- "$f")" = 0 ]; then
				first=$c newfile=$f
				break 2
			fi
		done
	done
	if [ -z "$newfile" ]; then
		record export_writes_tree_edits_back 1 "every file a commit adds is changed again later"
		return
	fi
	echo "/* roundtrip marker */" >> "$t/$newfile"
	echo "# roundtrip marker" >> "$t/mm/Kconfig"
	git -C "$t" -c user.name=t -c user.email=t@t commit -q -a --fixup "$first"
	if ! GIT_SEQUENCE_EDITOR=true git -C "$t" -c user.name=t -c user.email=t@t \
		rebase -q -i --autosquash kpkeys-base >"$work/rebase.log" 2>&1; then
		record export_writes_tree_edits_back 1 "rebase failed: $(tail -n 1 "$work/rebase.log")"
		git -C "$t" rebase --abort 2>/dev/null
		return
	fi
	python3 "$repo/overlay-tools/tree.py" export --tree "$t" 2>/dev/null
	# The repository path of the kernel path (tree.py repo_path_of()).
	case "$newfile" in
	arch/*|Documentation/*|tools/testing/*) ;;
	*) newfile=generic/$newfile ;;
	esac
	if grep -q "roundtrip marker" "$repo/$newfile" &&
	   grep -rq "roundtrip marker" "$repo/generic/patches/"; then
		record export_writes_tree_edits_back 0
	else
		record export_writes_tree_edits_back 1 "edit not found in $repo"
	fi
}

# A KSRC of another version is refused, naming the version, and nothing
# is changed.
test_wrong_version_refused() {
	local fake=$work/linux-6.1 before out
	mkdir -p "$fake"
	printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 99\n' > "$fake/Makefile"
	before=$(git -C "$tree" rev-parse HEAD)
	out=$(make -s -C "$KPKEYS_REPO" tree KSRC="$fake" 2>&1)
	if [ $? -ne 0 ] && grep -q "Linux 6.1.99" <<<"$out" &&
	   [ "$(git -C "$tree" rev-parse HEAD)" = "$before" ]; then
		record wrong_version_ksrc_is_refused 0
	else
		record wrong_version_ksrc_is_refused 1 "$out"
	fi
	out=$(make -s -C "$KPKEYS_REPO" tree KSRC="$work/nonexistent" 2>&1)
	if [ $? -ne 0 ] && grep -q "not a kernel tree" <<<"$out"; then
		record missing_ksrc_is_refused 0
	else
		record missing_ksrc_is_refused 1 "$out"
	fi
}

# Bad variable values are refused while make reads the Makefile
# (overlay-tools/check-vars.sh): an error that names the variable, its
# value and what is accepted, and nothing run, no package step (stand-ins
# for apt-get, sudo and dpkg-query log any call) and no download.  Good
# values and a variable the target does not read pass; every target of
# the Makefile is in check-vars.sh's table.
test_bad_variables_refused() {
	local stubs=$work/stubs log=$work/stubs.log out rc c t v bad="" targets
	mkdir -p "$stubs"
	for c in apt-get apt sudo dpkg-query dpkg-deb; do
		printf '#!/bin/sh\necho "%s $*" >> "%s"\nexit 1\n' "$c" "$log" > "$stubs/$c"
		chmod +x "$stubs/$c"
	done
	: > "$log"
	out=$(PATH=$stubs:$PATH make -s -C "$KPKEYS_REPO" build ARCH=sparc64 2>&1)
	if [ $? -ne 0 ] && grep -qF "ARCH='sparc64'" <<<"$out" && [ ! -s "$log" ]; then
		record unsupported_arch_is_refused 0
	else
		record unsupported_arch_is_refused 1 "$out$(sed 's/^/ ran: /' "$log")"
	fi
	for c in "check ARCH=sparc64" "sparse ARCH=ppc" "kunit ARCH=" "check LLVM=yes" \
		"check LLVM=/usr/lib/llvm-19/bin/" "check-all C=3" "check ICOUNT=0" \
		"check QEMU_TIMEOUT=5m" "check KPKEYS_MODES=on" "check KPKEYS_MODES=a/b" \
		"test QEMU_CPU=max;pks" "bisect-check BISECT_ARCHES=sparc64" \
		"bisect-check BISECT_COMMITS=3" "bisect-check BISECT_FRESH=0" \
		"bisect-check BISECT_GAPS=$work/no-such-gaps" "series SIGNOFF=nobody" \
		"am-check BENCH_REPORT=$work/no-such-report.md" "tree KPKEYS_CACHE=relative/dir" \
		"test KPKEYS_QEMU_JOBS=0" "check KPKEYS_QEMU_SOURCE=http://mirror" \
		"build KPKEYS_O=/tmp/elsewhere" "test-llvm KPKEYS_QEMU_BINDIR=$work/no-such-dir"; do
		t=${c%% *} v=${c#* }
		: > "$log"
		out=$(PATH=$stubs:$PATH make -s -C "$KPKEYS_REPO" "$t" "$v" 2>&1)
		rc=$?
		if [ "$rc" = 0 ] || ! grep -qF "${v%%=*}='${v#*=}'" <<<"$out" ||
		   ! grep -q "accepted\|Linux 7.3" <<<"$out" || [ -s "$log" ]; then
			bad+="; make $c: exit $rc, $(head -n 1 <<<"$out")$(sed 's/^/, ran: /' "$log" | head -n 1)"
		fi
	done
	: > "$log"
	out=$(ARCH=x86 PATH=$stubs:$PATH make -s -C "$KPKEYS_REPO" check 2>&1)
	grep -qF "ARCH='x86' (from the environment)" <<<"$out" && [ ! -s "$log" ] ||
		bad+="; ARCH=x86 in the environment: $(head -n 1 <<<"$out")"
	out=$(ARCH=x86 make -n -s -C "$KPKEYS_REPO" check-all LLVM=1 ICOUNT=1 QEMU_TIMEOUT=600 \
		KPKEYS_MODES="nobatch off bogus" SIGNOFF="A Name <a@example.org>" 2>&1) ||
		bad+="; good values refused: $(head -n 2 <<<"$out" | tr '\n' ' ')"
	if [ -z "$bad" ]; then
		record bad_variable_values_refused_before_anything_runs 0
	else
		record bad_variable_values_refused_before_anything_runs 1 "${bad#; }"
	fi
	targets=$(sed -n '/^\.PHONY:/,/[^\\]$/p' "$KPKEYS_REPO/Makefile" | tr -d '\\' |
		sed 's/^\.PHONY://' | tr ' \t' '\n\n' | grep . | sort -u)
	bad=$(comm -23 <(echo "$targets") <("$KPKEYS_REPO/overlay-tools/check-vars.sh" --targets))
	if [ -n "$targets" ] && [ -z "$bad" ]; then
		record every_target_has_its_variables_checked 0
	else
		record every_target_has_its_variables_checked 1 "not in check-vars.sh's table: ${bad:-no .PHONY targets found}"
	fi
}

# What the project ships speaks of the software only, and the README is
# short (overlay-tools/check-wording.py, which runs on its own too): its
# own tests first, so that a check that can no longer fail does not pass.
test_wording() {
	local out
	if python3 "$KPKEYS_REPO/overlay-tools/test_check_wording.py" >"$work/wording.out" 2>&1; then
		record wording_check_catches_what_it_is_for 0
	else
		record wording_check_catches_what_it_is_for 1 "$(tail -n 5 "$work/wording.out")"
	fi
	out=$(python3 "$KPKEYS_REPO/overlay-tools/check-wording.py" 2>&1)
	if [ $? -eq 0 ]; then
		record wording_speaks_of_the_software_only 0
	else
		record wording_speaks_of_the_software_only 1 "$(head -n 10 <<<"$out")"
	fi
}

# The measured results are generated: results/measured.md and README.md's
# block are what the records give, the same records give the same files,
# and timed.sh and alive.sh record and report what they should.
test_results() {
	if python3 "$KPKEYS_REPO/overlay-tools/test_results.py" >"$work/results.out" 2>&1; then
		record results_are_generated_from_the_records 0
	else
		record results_are_generated_from_the_records 1 "$(tail -n 8 "$work/results.out")"
	fi
}

# An option that Kconfig drops is reported, and the build stops.
test_dropped_option_detected() {
	local frag=$work/bad.config out
	echo "CONFIG_PPC_MEM_KEYS=y" > "$frag"
	out=$(KPKEYS_O=$work/cfg KPKEYS_CONFIG_ONLY=1 \
		"$KPKEYS_REPO/overlay-tools/build.sh" x86_64 "$tree" "$frag" 2>&1)
	if [ $? -ne 0 ] && grep -q "requested: CONFIG_PPC_MEM_KEYS=y" <<<"$out"; then
		record dropped_config_option_is_an_error 0
	else
		record dropped_config_option_is_an_error 1 "$out"
	fi
}

# The console judge: synthetic logs, no boot needed.
test_runner_judge() {
	if python3 "$KPKEYS_REPO/overlay-tools/test_run_qemu.py" >"$work/judge.out" 2>&1; then
		record runner_judges_console_logs 0
	else
		record runner_judges_console_logs 1 "$(tail -n 5 "$work/judge.out")"
	fi
}

# A real oops in a real guest fails the run (arm64 boots fastest).
test_runner_detects_oops() {
	local arch=arm64 out dir
	dir=$(build_dir "$arch")
	if [ ! -f "$dir/$(kernel_image $arch)" ] || [ ! -f "$dir/initrd.gz" ]; then
		say "building $arch for the oops test"
		"$KPKEYS_REPO/overlay-tools/build.sh" "$arch" "$tree" >/dev/null 2>&1 &&
		"$KPKEYS_REPO/overlay-tools/mkinitrd.sh" "$arch" "$tree" "$dir" >/dev/null 2>&1
	fi
	out=$("$KPKEYS_REPO/overlay-tools/run-qemu.py" --arch "$arch" --label oops-test \
		--kernel "$dir/$(kernel_image $arch)" --initrd "$dir/initrd.gz" \
		--kernel-tree "$tree" --log "$work/oops.log" --timeout 120 \
		--append "kpkeys_init.provoke=EXCEPTION" 2>&1)
	if [ $? -ne 0 ] && grep -q "PROBLEM: oops" <<<"$out"; then
		record runner_fails_a_guest_that_oopses 0
	else
		record runner_fails_a_guest_that_oopses 1 "$(tail -n 5 <<<"$out")"
	fi
}

# The benchmark suite: its statistics and report (synthetic samples), and
# bad input refused before anything is built or booted.
# make checkpatch's wrapper: excuses only the reports it lists, by level,
# type, file and line, and fails on a stale entry or output it cannot read.
test_checkpatch_wrapper() {
	if python3 "$KPKEYS_REPO/overlay-tools/test_checkpatch_series.py" >"$work/checkpatch.out" 2>&1; then
		record checkpatch_wrapper_excuses_only_listed_reports 0
	else
		record checkpatch_wrapper_excuses_only_listed_reports 1 "$(tail -n 8 "$work/checkpatch.out")"
	fi
}

test_bench() {
	local out
	if python3 "$KPKEYS_REPO/overlay-tools/test_bench.py" >"$work/bench.out" 2>&1; then
		record bench_statistics_and_report 0
	else
		record bench_statistics_and_report 1 "$(tail -n 5 "$work/bench.out")"
	fi
	out=$(make -s -C "$KPKEYS_REPO" bench BENCH=slow 2>&1)
	if [ $? -ne 0 ] && grep -q "BENCH='slow': not a row set" <<<"$out"; then
		record bench_bad_mode_is_refused 0
	else
		record bench_bad_mode_is_refused 1 "$out"
	fi
	out=$(python3 "$KPKEYS_REPO/overlay-tools/bench.py" --no-build --rows fork_h0,nosuch \
		--out "$work/bench" 2>&1)
	if [ $? -ne 0 ] && grep -q "unknown row(s) nosuch" <<<"$out" &&
	   [ ! -e "$work/bench" ]; then
		record bench_unknown_row_is_refused 0
	else
		record bench_unknown_row_is_refused 1 "$out"
	fi
}

# sparse: bad input is refused, a failed download changes nothing, and
# only warnings on lines the series added are new (a synthetic sparse
# output; nothing is built or downloaded).
test_sparse() {
	local out new base log=$work/sparse.out cache=$work/sparse-cache
	out=$(make -s -C "$KPKEYS_REPO" sparse ARCH=sparc64 2>&1)
	if [ $? -ne 0 ] && grep -qF "ARCH='sparc64'" <<<"$out"; then
		record sparse_bad_arch_is_refused 0
	else
		record sparse_bad_arch_is_refused 1 "$out"
	fi
	out=$(CHECK=$work/no-such-sparse "$KPKEYS_REPO/overlay-tools/sparse.sh" which "$tree" 2>&1)
	if [ $? -ne 0 ] && grep -q "fails .*checker-valid.sh" <<<"$out"; then
		record sparse_invalid_check_is_refused 0
	else
		record sparse_invalid_check_is_refused 1 "$out"
	fi
	# An unreachable mirror (port 9, discard; no retries): the error says
	# so, and the cache holds no sparse, source or temporary directory.
	mkdir -p "$cache"
	echo 'Acquire::Retries "0";' > "$work/apt.conf"
	out=$(APT_CONFIG=$work/apt.conf KPKEYS_CACHE=$cache \
		KPKEYS_SPARSE_SOURCE="deb-src http://127.0.0.1:9/debian sid main" \
		"$KPKEYS_REPO/overlay-tools/fetch-sparse.sh" "$tree" 2>&1)
	if [ $? -ne 0 ] && grep -q "nothing was changed" <<<"$out" &&
	   [ -z "$(ls -d "$cache"/sparse "$cache"/sparse-src "$cache"/sparse.tmp.* 2>/dev/null)" ]; then
		record sparse_failed_fetch_changes_nothing 0
	else
		record sparse_failed_fetch_changes_nothing 1 "$(tail -n 3 <<<"$out")"
	fi
	# Line 1 of a file the series adds is a series line; init/main.c is the
	# base kernel's.
	new=$(git -C "$tree" diff --diff-filter=A --name-only kpkeys-base -- '*.c' | head -n 1)
	base=init/main.c
	{
		echo "$tree/$new:1:1: warning: series warning"
		echo "$tree/$new:1:1:    expected int"
		echo "$tree/$base:1:1: warning: base warning"
		echo "$tree/$base: note: in included file:"
		echo "$tree/$new:1:1: warning: series warning"
		echo "$tree/$new:1:1:    expected int"
	} > "$log"
	out=$("$KPKEYS_REPO/overlay-tools/sparse.sh" report "$tree" "$work" "$log" 2>&1)
	if [ $? -ne 0 ] && grep -qxF "$new:1:1: warning: series warning" <<<"$out" &&
	   ! grep -q "base warning" <<<"$out" &&
	   grep -q "1 new warnings on lines the series added, 1 in base-kernel lines" <<<"$out"; then
		record sparse_reports_only_series_lines 0
	else
		record sparse_reports_only_series_lines 1 "$out"
	fi
}

# fetch-busybox.sh: a bad architecture and an unreachable mirror are
# refused with what went wrong, and leave no busybox in the cache.
test_busybox() {
	local bb=$work/busybox cache out
	cache=$bb/cache
	mkdir -p "$cache"
	out=$(KPKEYS_CACHE=$cache "$KPKEYS_REPO/overlay-tools/fetch-busybox.sh" sparc 2>&1)
	if [ $? -ne 0 ] && grep -q "unknown architecture 'sparc'" <<<"$out"; then
		record busybox_bad_arch_is_refused 0
	else
		record busybox_bad_arch_is_refused 1 "$out"
	fi
	echo 'Acquire::Retries "0";' > "$bb/apt.conf"
	out=$(APT_CONFIG=$bb/apt.conf KPKEYS_CACHE=$cache \
		KPKEYS_BUSYBOX_MIRROR=http://127.0.0.1:9/debian \
		"$KPKEYS_REPO/overlay-tools/fetch-busybox.sh" arm64 2>&1)
	if [ $? -ne 0 ] && grep -q "no busybox was installed" <<<"$out" &&
	   [ -z "$(ls -d "$cache"/busybox-* 2>/dev/null)" ]; then
		record busybox_failed_fetch_changes_nothing 0
	else
		record busybox_failed_fetch_changes_nothing 1 "$(tail -n 3 <<<"$out")"
	fi
}

# build-qemu.sh: an unreachable source is refused with what went wrong
# and leaves nothing in the cache; a patch that does not apply to the
# pinned QEMU is named.  (The build itself runs in make check, for arm64
# and powerpc.)
test_build_qemu() {
	local q=$work/qemu cache out
	cache=$q/cache
	mkdir -p "$cache"
	echo 'Acquire::Retries "0";' > "$q/apt.conf"
	out=$(APT_CONFIG=$q/apt.conf KPKEYS_CACHE=$cache \
		KPKEYS_QEMU_SOURCE="deb-src http://127.0.0.1:9/debian sid main" \
		"$KPKEYS_REPO/overlay-tools/build-qemu.sh" 2>&1)
	if [ $? -ne 0 ] && grep -q "nothing was changed" <<<"$out" &&
	   [ -z "$(ls -A "$cache/qemu" 2>/dev/null)" ] && [ ! -e "$cache/qemu-src" ]; then
		record build_qemu_failed_fetch_changes_nothing 0
	else
		record build_qemu_failed_fetch_changes_nothing 1 "$(tail -n 3 <<<"$out")"
	fi
	out=$("$KPKEYS_REPO/overlay-tools/build-qemu.sh" --bogus 2>&1)
	if [ $? -eq 2 ] && grep -q "usage:" <<<"$out"; then
		record build_qemu_bad_option_is_refused 0
	else
		record build_qemu_bad_option_is_refused 1 "$out"
	fi
}

# What only this project's tooling knows: its make targets, scripts,
# boot labels and its own QEMU.
series_tooling_re="make (check|test|bisect-check|series|bench)|the project's|kpkeys project|run-qemu|overlay-tools|check\.sh|bench\.py|debug-uefi|guest walker|_guest\.|console judge"

# make series: the posted patches apply with 'git am' to the pristine
# base (tree.py am-check) and a damaged one is caught, the unposted
# harness self-test is left out, the series has no checkpatch --strict
# report but the reviewed false positives of series/checkpatch-allow, and
# get_maintainer.pl names the kpkeys entry for every patch.
test_series() {
	local out=$work/series broken=$work/series-broken p n cp bad=""
	if ! python3 "$KPKEYS_REPO/overlay-tools/tree.py" series --tree "$tree" \
		--signoff "kpkeys tooling test <tooling@kpkeys.invalid>" \
		--out "$out" 2>"$work/series.err"; then
		record series_is_written 1 "$(tail -n 2 "$work/series.err")"
		return
	fi
	record series_is_written 0
	if python3 "$KPKEYS_REPO/overlay-tools/tree.py" am-check --tree "$tree" \
		--out "$out" 2>"$work/am.err"; then
		record series_applies_with_git_am 0
	else
		record series_applies_with_git_am 1 "$(tail -n 1 "$work/am.err")"
	fi
	# A context line of patch 2 that the base does not have.
	cp -r "$out" "$broken"
	p=$(ls "$broken"/0002-*.patch)
	awk 'h && /^ / && !done { print " kpkeys-tooling-test: not in the base"; done = 1; next }
	     /^@@/ { h = 1 } { print }' "$p" > "$p.new" && mv "$p.new" "$p"
	if ! python3 "$KPKEYS_REPO/overlay-tools/tree.py" am-check --tree "$tree" \
		--out "$broken" 2>"$work/am-broken.err" &&
	   grep -q "git am onto .* failed at" "$work/am-broken.err"; then
		record am_check_refuses_a_damaged_patch 0
	else
		record am_check_refuses_a_damaged_patch 1 "$(tail -n 1 "$work/am-broken.err")"
	fi
	# The cover letter is filled in: no placeholder left, and a
	# bisect-check line for each architecture.
	if ! grep -q '@[A-Z][A-Z]*@' "$out/0000-cover-letter.patch" &&
	   [ "$(grep -cE '^  (x86_64|arm64|powerpc) +(not run|not known|[0-9]+ of [0-9]+ patches pass \([0-9]+ built, [0-9]+ change nothing it compiles\))' \
		"$out/0000-cover-letter.patch")" = 3 ]; then
		record cover_letter_filled_in 0
	else
		record cover_letter_filled_in 1 "$(grep -n '@[A-Z][A-Z]*@' "$out/0000-cover-letter.patch" | head -n 2)"
	fi
	if grep -q "^+++ b/mm/tests/kpkeys_harness_kunit.c" "$out"/0*.patch; then
		record series_leaves_out_unposted_commits 1 "the harness self-test is in the series"
	else
		record series_leaves_out_unposted_commits 0
	fi
	# Each separate series the manifest names is written beside the main
	# one, with its own filled-in cover letter, and none of its patches
	# is in the main series.
	local name names bad_sep=""
	names=$(sed -n 's/^\tseries //p' "$KPKEYS_REPO/series/series" | sort -u)
	for name in $names; do
		if [ ! -f "$out/$name/0000-cover-letter.patch" ] || ! ls "$out/$name"/0001-*.patch >/dev/null 2>&1 ||
		   grep -q '@[A-Z][A-Z]*@\|\*\*\* SUBJECT HERE' "$out/$name/0000-cover-letter.patch"; then
			bad_sep+=" $name"
		fi
	done
	if grep -q "^Subject: .*fault-inject: don't use DO_ONCE" "$out"/0*.patch; then
		bad_sep+=" (the fault-injection fix is in the main series)"
	fi
	# And the QEMU patches, each in one qemu-devel series, renumbered.
	local nq
	nq=$(cat "$out"/qemu-*/0[0-9][0-9][1-9]-*.patch 2>/dev/null | grep -c '^Subject: \[PATCH [0-9]*/[0-9]*\]')
	[ "$nq" = "$(ls "$KPKEYS_REPO"/overlay-tools/qemu/patches/*.patch | wc -l)" ] ||
		bad_sep+=" (QEMU: $nq patches in $out/qemu-*/)"
	if [ -z "$names" ] || [ -n "$bad_sep" ]; then
		record separate_series_written 1 "missing or unfilled:${bad_sep:- no separate series in series/series}"
	else
		record separate_series_written 0
	fi
	# One "total:" line per patch: a checkpatch that dies or finds no
	# patch is not clean.
	# (The QEMU series, qemu-*/, follow QEMU's coding style, not the kernel's.)
	n=$(ls "$out"/0*.patch "$out"/*/0*.patch | grep -v /qemu- | grep -vc /0000-cover-letter)
	# Errors, warnings and --strict checks alike, except the reviewed
	# false positives of series/checkpatch-allow.
	cp=$("$KPKEYS_REPO"/overlay-tools/checkpatch-series.py "$tree" "$KPKEYS_REPO"/series/checkpatch-allow \
		$(ls "$out"/0*.patch "$out"/*/0*.patch | grep -v /qemu- | grep -v /0000-cover-letter) 2>&1 | tail -1)
	case "$cp" in
	"checkpatch --strict: $n patches, 0 reports not excused,"*)
		record series_checkpatch_strict_clean 0 ;;
	*)	record series_checkpatch_strict_clean 1 "$cp (make checkpatch)" ;;
	esac
	# Commit messages and the kernel documentation are read by people who
	# have none of the project's tooling: they cite no make target, script
	# or configuration of it.
	# It must see every message and both documents, and its pattern must
	# match what it is for: else it would pass on nothing.
	n=$(ls "$out"/0*.patch | grep -vc /0000-cover-letter)
	bad=$(for p in $(ls "$out"/0*.patch | grep -v /0000-cover-letter); do
		sed -n '/^Subject: /,/^---$/p' "$p" |
			grep -nE "$series_tooling_re" | sed "s|^|$(basename "$p"):|"
	done
	grep -nE "$series_tooling_re" "$tree"/Documentation/core-api/kpkeys.rst \
		"$tree"/Documentation/core-api/kpkeys-porting.rst
	[ $? -le 1 ] || echo "grep failed on the documents"
	[ "$(cat "$out"/0*.patch | grep -c '^Subject: ')" = "$((n + 1))" ] ||
		echo "not one Subject: line per patch in $out"
	echo "Test: the x86_64 boot of make check" | grep -qE "$series_tooling_re" ||
		echo "the pattern misses 'make check'")
	if [ "$n" -gt 0 ] && [ -z "$bad" ]; then
		record series_cites_no_project_tooling 0
	else
		record series_cites_no_project_tooling 1 "$(head -n 3 <<<"$bad")"
	fi
	bad=""
	for p in "$out"/0*.patch; do
		case "$p" in */0000-cover-letter.patch) continue ;; esac
		n=$(cd "$tree" && ./scripts/get_maintainer.pl --no-git --no-git-fallback "$p" 2>/dev/null |
			grep -c "kpkeys@lists.example.org")
		[ "$n" != 0 ] || bad+=" $(basename "$p")"
	done
	if [ -z "$bad" ]; then
		record get_maintainer_names_kpkeys_for_every_patch 0
	else
		record get_maintainer_names_kpkeys_for_every_patch 1 "not named for:$bad"
	fi
}

# bisect-check.sh, with a stand-in for build.sh that logs the commit it
# was asked to build, fails on $fail_tree, warns (objtool) on $warn_tree
# and thousands of times on $warn_many_tree, and whose configuration of
# $lose_tree (or of every commit from $lose_from on) leaves out an option:
# a pass is recorded and not built again, a missing line is built again,
# a commit that touches only docs is not built, BISECT_FRESH and another
# build key build everything, a failed build or a warning fails the run
# and removes the commit's line, a gap in an option is allowed only where
# the gaps file lists it, a loss for good fails the run, and the stand-in
# may not write the series' own record.
test_bisect_record() {
	local b=$work/bisect rec=$work/bisect/record.txt fake=$work/bisect/fake-build.sh
	local n1 n2 n3 nf nk lines victim vt doc_tree t2 c2 keys rc1 rc2 rc3 rc4
	mkdir -p "$b"
	: > "$b/gaps"
	cat > "$fake" <<-'END'
	#!/bin/sh
	t=$(git -C "$2" rev-parse HEAD^{tree})
	if [ -n "${KPKEYS_CONFIG_ONLY:-}" ]; then
		case " ${lose_trees:-} " in *" $t "*) lose_tree=$t ;; esac
		if [ "$t" = "${lose_tree:-}" ] || { [ -n "${lose_from:-}" ] &&
			git -C "$2" merge-base --is-ancestor "$lose_from" HEAD; }; then
			printf '  requested: CONFIG_KPKEYS=y\n  got:       absent\n' >&2
		fi
		exit 0
	fi
	echo "$t" >> "$KPKEYS_BUILD/built"
	# An object compiled once, with a warning, and not again while it is
	# in the output directory (as make does).
	if [ "$t" = "${warn_once_tree:-}" ] && [ ! -e "$KPKEYS_O/warned.o" ]; then
		mkdir -p "$KPKEYS_O" && touch "$KPKEYS_O/warned.o"
		echo "mm/y.c:1:2: warning: stand-in once" >&2
	fi
	[ "$t" != "${warn_tree:-}" ] || echo "vmlinux.o: warning: objtool: stand-in" >&2
	[ "$t" != "${warn_many_tree:-}" ] ||
		seq 5000 | sed 's|^|include/linux/kpkeys.h:1:2: warning: stand-in |' >&2
	[ "$t" != "${fail_tree:-}" ] || { echo "mm/x.c:1:2: error: stand-in" >&2; exit 1; }
	END
	chmod +x "$fake"
	run_bisect() {
		rm -f "$b/built"
		KPKEYS_BUILD=$b BISECT_RECORD=$rec BISECT_GAPS=$b/gaps KPKEYS_BISECT_BUILD=$fake \
			BISECT_COMMITS=1-12 "$KPKEYS_REPO/overlay-tools/bisect-check.sh" "$tree" x86_64 2>"$b/err"
	}
	count() { if [ -f "$b/built" ]; then wc -l < "$b/built"; else echo 0; fi; }
	has_line() { awk -v t="$1" '$2 == t { f = 1 } END { exit !f }' "$rec"; }
	# The first patch that touches nothing x86_64 compiles (documentation,
	# tools/testing/, another architecture; there is one in 1-12).
	doc_tree=$(git -C "$tree" log --reverse --format='%H' kpkeys-base..HEAD | head -n 12 |
		while read -r c; do
			git -C "$tree" diff-tree -r --no-commit-id --name-only "$c" |
				grep -qvE '^(Documentation/|tools/testing/|MAINTAINERS$|arch/(arm64|powerpc)/)' ||
				{ git -C "$tree" rev-parse "$c^{tree}"; break; }
		done)
	run_bisect; rc1=$?; n1=$(count)
	lines=$(grep -vc '^#' "$rec")
	if [ "$rc1" = 0 ] && [ "$n1" -gt 3 ] && [ "$n1" -lt 12 ] && [ "$lines" = 12 ] && [ -n "$doc_tree" ] &&
	   ! grep -qx "$doc_tree" "$b/built" &&
	   [ "$(awk -v t="$doc_tree" '$2 == t { print $5 }' "$rec")" = - ]; then
		record bisect_check_skips_what_the_arch_does_not_compile 0
	else
		record bisect_check_skips_what_the_arch_does_not_compile 1 "exit $rc1, built $n1 of 12, recorded $lines, tree that x86_64 does not compile ${doc_tree:-not found}: $(tail -n 1 "$b/err")"
	fi
	run_bisect; rc2=$?; n2=$(count)
	victim=$(grep -v '^#' "$rec" | awk '$5 != "-"' | sed -n 3p)
	vt=$(echo "$victim" | cut -d' ' -f2)
	grep -vxF "$victim" "$rec" > "$rec.new" && mv "$rec.new" "$rec"
	run_bisect; rc3=$?; n3=$(count)
	if [ "$rc2$rc3" = 00 ] && [ "$n2" = 0 ] && [ "$n3" = 1 ] && [ "$(cat "$b/built")" = "$vt" ]; then
		record bisect_check_resumes_from_its_record 0
	else
		record bisect_check_resumes_from_its_record 1 "built $n1, then $n2 and, one line dropped, $n3 (exit $rc2, $rc3)"
	fi
	BISECT_FRESH=1 run_bisect; rc4=$?; nf=$(count)
	if [ "$rc4" = 0 ] && [ "$nf" = "$n1" ]; then
		record bisect_check_fresh_builds_everything 0
	else
		record bisect_check_fresh_builds_everything 1 "BISECT_FRESH=1 built $nf of $n1, exit $rc4"
	fi
	KMAKEFLAGS=V=0 run_bisect; rc4=$?; nk=$(count)
	keys=$(grep -v '^#' "$rec" | awk '{ print $3 }' | sort -u | wc -l)
	if [ "$rc4" = 0 ] && [ "$nk" = "$n1" ] && [ "$keys" = 1 ] && [ "$(grep -vc '^#' "$rec")" = 12 ]; then
		record bisect_check_another_build_key_builds_again 0
	else
		record bisect_check_another_build_key_builds_again 1 "KMAKEFLAGS=V=0 built $nk of $n1, $keys key(s) left in the record, exit $rc4"
	fi
	# Back to the plain key: the victim has a line, which a failure removes.
	run_bisect; rc4=$?
	if [ "$rc4" = 0 ] && has_line "$vt" && ! fail_tree=$vt BISECT_FRESH=1 run_bisect &&
	   grep -q "failed: " "$b/err" && ! has_line "$vt"; then
		record bisect_check_failure_fails_and_forgets_the_pass 0
	else
		record bisect_check_failure_fails_and_forgets_the_pass 1 "$(tail -n 2 "$b/err")"
	fi
	if ! warn_tree=$vt run_bisect && grep -q "objtool: stand-in" "$b/err" && ! has_line "$vt"; then
		record bisect_check_objtool_warning_fails 0
	else
		record bisect_check_objtool_warning_fails 1 "$(tail -n 2 "$b/err")"
	fi
	if ! warn_many_tree=$vt run_bisect && grep -q "failed: " "$b/err" && ! has_line "$vt"; then
		record bisect_check_many_warnings_fail 0
	else
		record bisect_check_many_warnings_fail 1 "$(tail -n 2 "$b/err")"
	fi
	# The first patch after patch 1 that the option check configures for
	# x86_64 (it changes a Kconfig input that x86_64 reads): k.
	local k=0 kp i=0 c
	for c in $(git -C "$tree" log --reverse --format='%H' kpkeys-base..HEAD); do
		i=$((i + 1))
		[ "$i" -ge 2 ] || continue
		if git -C "$tree" diff-tree -r --no-commit-id --name-only "$c" |
			grep -vE '^(Documentation/|tools/testing/|MAINTAINERS$|arch/(arm64|powerpc)/)' |
			grep -qE '(^|/)Kconfig|^scripts/|/configs/|^Makefile$'; then
			k=$i
			break
		fi
	done
	kp=$((k - 1))
	t2=$(git -C "$tree" log --reverse --format='%T' kpkeys-base..HEAD | sed -n "${k}p")
	c2=$(git -C "$tree" log --reverse --format='%H' kpkeys-base..HEAD | sed -n "${k}p")
	local again glen lose
	if ! lose_tree=$t2 run_bisect &&
	   grep -qE "patch(es)? $k(-[0-9]+)? builds? without CONFIG_KPKEYS=y, which patch $kp has and patch [0-9]+ has again, and .* does not list it" "$b/err"; then
		record bisect_check_unlisted_option_gap_fails 0
	else
		record bisect_check_unlisted_option_gap_fails 1 "$(grep CONFIG_KPKEYS= "$b/err" | tail -n 2)"
	fi
	# The gap is patches k to again - 1 (a patch that changes no Kconfig
	# input is not configured on its own).
	again=$(sed -n "s/.*which patch $kp has and patch \\([0-9]*\\) has again.*/\\1/p" "$b/err" | head -n 1)
	glen=$((${again:-$((k + 1))} - k))
	echo "x86_64 CONFIG_KPKEYS $glen $(git -C "$tree" log -1 --format=%s "$c2")" > "$b/gaps"
	if lose_tree=$t2 run_bisect &&
	   grep -qE "patch(es)? $k(-[0-9]+)? builds? without CONFIG_KPKEYS=y, .* \(by design" "$b/err"; then
		record bisect_check_listed_option_gap_passes 0
	else
		record bisect_check_listed_option_gap_passes 1 "$(grep CONFIG_KPKEYS= "$b/err" | tail -n 2)"
	fi
	# The same gap, made longer by a later patch: the listed gap ends
	# where it ended, so this fails.
	lose=$(git -C "$tree" log --reverse --format='%T' kpkeys-base..HEAD | sed -n "$k,${again:-$((k + 1))}p" | tr '\n' ' ')
	if [ -n "$again" ] && ! lose_trees=$lose run_bisect &&
	   grep -qE "without CONFIG_KPKEYS=y, which patch $kp has and patch [0-9]+ has again, and .* does not list it" "$b/err"; then
		record bisect_check_longer_listed_gap_fails 0
	else
		record bisect_check_longer_listed_gap_fails 1 "gap $k-$((${again:-0} - 1)) listed, lost in $k-${again:-?}: $(grep CONFIG_KPKEYS= "$b/err" | tail -n 2)"
	fi
	# A gaps file line without the gap's length is refused, not ignored.
	echo "x86_64 CONFIG_KPKEYS $(git -C "$tree" log -1 --format=%s "$c2")" > "$b/gaps"
	if ! lose_tree=$t2 run_bisect && grep -q "malformed" "$b/err"; then
		record bisect_check_malformed_gaps_line_refused 0
	else
		record bisect_check_malformed_gaps_line_refused 1 "$(tail -n 2 "$b/err")"
	fi
	echo "x86_64 CONFIG_KPKEYS $glen $(git -C "$tree" log -1 --format=%s "$c2")" > "$b/gaps"
	if ! lose_from=$c2 run_bisect &&
	   grep -q "patch $k (.*) loses CONFIG_KPKEYS=y, .* no later patch has it again" "$b/err"; then
		record bisect_check_option_lost_for_good_fails 0
	else
		record bisect_check_option_lost_for_good_fails 1 "$(tail -n 3 "$b/err")"
	fi
	if ! KPKEYS_BUILD=$b KPKEYS_BISECT_BUILD=$fake "$KPKEYS_REPO/overlay-tools/bisect-check.sh" \
		"$tree" x86_64 2>"$b/err" && grep -q "needs BISECT_RECORD" "$b/err"; then
		record bisect_check_stand_in_cannot_write_the_record 0
	else
		record bisect_check_stand_in_cannot_write_the_record 1 "$(tail -n 1 "$b/err")"
	fi
	# A build that fails leaves objects behind whose warnings make will
	# not print again: the next build in that directory starts from
	# scratch, and sees the warning.
	run_bisect
	if ! warn_once_tree=$vt fail_tree=$vt BISECT_FRESH=1 run_bisect &&
	   ! warn_once_tree=$vt run_bisect && grep -q "stand-in once" "$b/err" && ! has_line "$vt"; then
		record bisect_check_rebuilds_after_a_failed_build 0
	else
		record bisect_check_rebuilds_after_a_failed_build 1 "a warning of the failed build's objects was not seen again: $(tail -n 2 "$b/err")"
	fi
	# What configures only, and Kbuild's flags from the environment, can't
	# pass a build under the normal key.
	run_bisect
	if ! KPKEYS_CONFIG_ONLY=1 warn_tree=$vt BISECT_FRESH=1 run_bisect && grep -q "objtool: stand-in" "$b/err"; then
		record bisect_check_ignores_config_only_from_the_environment 0
	else
		record bisect_check_ignores_config_only_from_the_environment 1 "$(tail -n 2 "$b/err")"
	fi
	run_bisect
	KCFLAGS=-w run_bisect; rc4=$?; nk=$(count)
	if [ "$rc4" = 0 ] && [ "$nk" = "$n1" ]; then
		record bisect_check_kbuild_flags_change_the_key 0
	else
		record bisect_check_kbuild_flags_change_the_key 1 "KCFLAGS=-w built $nk of $n1, exit $rc4"
	fi
	# A pass of a commit that compiles nothing new holds only after a pass
	# of the commit before it: when that one fails, it is built again.
	local before_doc
	before_doc=$(git -C "$tree" log --reverse --format='%T' kpkeys-base..HEAD |
		grep -B1 -x "$doc_tree" | head -n 1)
	run_bisect
	awk -v t="$before_doc" '$2 != t' "$rec" > "$rec.new" && mv "$rec.new" "$rec"
	if [ -n "$before_doc" ] && [ "$(awk -v t="$doc_tree" '$2 == t { print $5 }' "$rec")" = - ] &&
	   ! fail_tree=$before_doc run_bisect && grep -qx "$doc_tree" "$b/built"; then
		record bisect_check_skipped_pass_needs_its_parent 0
	else
		record bisect_check_skipped_pass_needs_its_parent 1 "the commit after a failed one was not built again: $(tail -n 2 "$b/err")"
	fi
	git -C "$tree" worktree remove --force "$b/bisect-tree" 2>/dev/null
	# The cover letter's summary counts the passes of the current key only.
	local got want
	got=$(PYTHONPATH=$KPKEYS_REPO/overlay-tools python3 - "$tree" "$rec" <<-'END'
	import sys
	import tree
	t, rec = sys.argv[1:3]
	trees = tree.git(t, "log", "--reverse", "--format=%T", "kpkeys-base..HEAD").split()
	with open(rec, "w") as f:
	    f.write("# header\n")
	    f.write("x86_64 %s K1 2026-12-01 30 a\n" % trees[0])
	    f.write("x86_64 %s K1 2026-12-02 - b\n" % trees[1])
	    f.write("x86_64 %s OLD 2026-12-02 40 c\n" % trees[2])
	    f.write("x86_64 %s K1 2026-12-02 - e\n" % trees[3])
	    f.write("arm64 %s OLD 2026-12-02 40 d\n" % trees[0])
	print(tree.bisect_summary(t, rec, {"x86_64": "K1", "arm64": "K2", "powerpc": None}))
	END
	)
	want=$(printf '  %-8s %s\n' \
		x86_64 "2 of $(tree_posted_count) patches pass (1 built, 1 change nothing it compiles), 2026-12-01 to 2026-12-02 (not finished) (1 older passes under another build key not counted)" \
		arm64 "not run (1 older passes under another build key not counted)" \
		powerpc "not known: no compiler for it here")
	if [ "$got" = "$want" ]; then
		record bisect_summary_counts_the_current_key 0
	else
		record bisect_summary_counts_the_current_key 1 "$(diff <(echo "$want") <(echo "$got") | head -n 4 | tr '\n' ' ')"
	fi
}

tree_posted_count() {
	PYTHONPATH=$KPKEYS_REPO/overlay-tools python3 -c '
import sys, tree
print(tree.posted_range(sys.argv[1])[2])' "$tree"
}

# The kernel's docs tooling on ours: 'make htmldocs' of core-api renders
# kpkeys.rst (with the kernel-doc of <linux/kpkeys.h> and
# <linux/kpkeys_entry.h>) and kpkeys-porting.rst with no warning about
# them, and scripts/kernel-doc -Wall says nothing about the kpkeys
# headers and sources.  About a minute.
test_docs() {
	local out=$work/htmldocs log=$work/htmldocs.log files kd
	if ! command -v sphinx-build >/dev/null; then
		record docs_htmldocs_kpkeys_clean 1 "sphinx-build not found: run overlay-tools/install-deps.sh (python3-sphinx)"
	else
		make -C "$tree" O="$out" SPHINXDIRS=core-api htmldocs >"$log" 2>&1
		if [ ! -f "$out/Documentation/output/core-api/kpkeys-porting.html" ] ||
		   [ ! -f "$out/Documentation/output/core-api/kpkeys.html" ]; then
			record docs_htmldocs_kpkeys_clean 1 "kpkeys pages not rendered: $(tail -n 2 "$log")"
		elif grep -E 'WARNING|ERROR' "$log" | grep -q kpkeys; then
			record docs_htmldocs_kpkeys_clean 1 "$(grep -E 'WARNING|ERROR' "$log" | grep kpkeys | head -n 3)"
		else
			record docs_htmldocs_kpkeys_clean 0
		fi
	fi
	files=$(cd "$tree" && git ls-files 'include/linux/kpkeys*.h' 'include/asm-generic/kpkeys.h' \
		'mm/kpkeys*.c' 'arch/*/include/asm/kpkeys.h' 'arch/powerpc/mm/book3s64/kpkeys.c')
	# shellcheck disable=SC2086
	kd=$(cd "$tree" && ./scripts/kernel-doc -none -Wall $files 2>&1)
	if [ -n "$files" ] && [ -z "$kd" ]; then
		record kernel_doc_kpkeys_clean 0
	else
		record kernel_doc_kpkeys_clean 1 "${kd:-no kpkeys files found}"
	fi
}

test_wording
test_bad_variables_refused
test_results
test_busybox
test_build_qemu
test_bench
test_checkpatch_wrapper
test_sparse
test_wrong_version_refused
test_dropped_option_detected
test_runner_judge
test_tree_roundtrip
test_runner_detects_oops
test_series
test_bisect_record
test_docs

{
	printf '{"label": "tooling", "problems": [], "suites": {"tooling": [\n'
	(IFS=,; printf '%s\n' "${cases[*]}")
	printf ']}}\n'
} > "$result"
