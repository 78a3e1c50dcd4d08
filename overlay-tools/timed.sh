#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a whole job and record what it cost, for results/measured.md.
#
# Before the job starts, it notes what the machine already has (the
# Debian packages, the kernel source, the project's QEMU, ccache's
# entries, kernels built in this checkout): a run with none of them is
# "fresh".  It runs the command,
# its output going to the terminal as usual, and writes
# build/timed/<job>.json: the command, the repository's commit (with
# "-dirty" when the working tree has changes), the start date (UTC), the
# seconds it took, its exit status, its closing "N passed, N failed"
# line if it printed one, the machine (CPUs, memory, CPU model) and the
# caches found.  'make results' copies the record into results/jobs/.
# The exit status is the command's.
#
# usage: timed.sh <job> -- <command> [<argument> ...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")

[ $# -ge 3 ] && [ "$2" = -- ] || { echo "usage: $0 <job> -- <command> [<argument> ...]" >&2; exit 2; }
job=$1
shift 2
[[ $job =~ ^[a-z0-9][a-z0-9-]*$ ]] ||
	{ echo "timed.sh: job name '$job': use lower-case letters, digits and '-'" >&2; exit 2; }

cache=${KPKEYS_CACHE:-$HOME/.cache/kpkeys}
out=$repo/build/timed
mkdir -p "$out"
log=$out/$job.log

# What is there before the job starts.
have_packages=false
"$here/install-deps.sh" --check >/dev/null 2>&1 && have_packages=true
have_kernel=false
compgen -G "$cache/linux-7.3*/Makefile" >/dev/null && have_kernel=true
have_qemu=false
compgen -G "$cache/qemu/*/bin/qemu-system-*" >/dev/null && have_qemu=true
ccache_kib=0
if command -v ccache >/dev/null; then
	d=$(ccache -k cache_dir 2>/dev/null)
	[ -n "$d" ] && [ -d "$d" ] && ccache_kib=$(du -sk "$d" | cut -f1)
fi
# Kernels built before in this checkout (build/<arch>*/vmlinux).
build_kernels=$(compgen -G "$repo/build/*/vmlinux" | wc -l)
commit=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ] || commit+=-dirty
start_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
start=$(date +%s)

echo "timed.sh: $job: $* (started $start_date; record: ${out#$repo/}/$job.json)"
"$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
seconds=$(( $(date +%s) - start ))

summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
JOB=$job CMD="$*" COMMIT=$commit DATE=$start_date SECONDS_=$seconds STATUS=$status \
SUMMARY=$summary PKGS=$have_packages KERNEL=$have_kernel QEMU=$have_qemu CCACHE=$ccache_kib \
BUILT=$build_kernels \
python3 - "$out/$job.json" <<'EOF'
import json, os, sys
e = os.environ
def meminfo():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1])
    return 0
def cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.split(":")[0].strip() in ("model name", "cpu"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return os.uname().machine
caches = {"packages": e["PKGS"] == "true", "kernel_source": e["KERNEL"] == "true",
          "project_qemu": e["QEMU"] == "true", "ccache_kib": int(e["CCACHE"]),
          "build_kernels": int(e["BUILT"])}
rec = {"job": e["JOB"], "command": e["CMD"], "commit": e["COMMIT"], "date": e["DATE"],
       "seconds": int(e["SECONDS_"]), "status": int(e["STATUS"]),
       "summary": e["SUMMARY"] or None,
       "fresh": not (caches["packages"] or caches["kernel_source"]
                     or caches["project_qemu"] or caches["ccache_kib"] > 1024
                     or caches["build_kernels"]),
       "caches": caches,
       "machine": {"cpus": os.cpu_count(), "mem_kib": meminfo(), "cpu": cpu()}}
with open(sys.argv[1], "w") as f:
    json.dump(rec, f, indent=1, sort_keys=True)
    f.write("\n")
EOF
echo "timed.sh: $job: exit status $status after ${seconds} s; record in ${out#$repo/}/$job.json ('make results' publishes it)"
exit "$status"
