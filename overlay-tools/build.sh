#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Configure and build the kpkeys test kernel for one architecture, out of
# tree: tinyconfig + overlay-tools/configs/common.config + <arch>.config (+ any
# extra fragments), checked option by option after merging.
#
# usage: build.sh <arch> <kernel tree> [extra.config ...]
# env:   LLVM=1 (clang-19), C=1|2 (sparse, see sparse.sh; CHECK=<sparse>
#        overrides its choice), KMAKEFLAGS (more make arguments),
#        KPKEYS_O (output directory, default build/<arch>[-llvm]),
#        KPKEYS_CONFIG_ONLY=1 (stop after configuring),
#        KPKEYS_CONFIG_LENIENT=1 (a requested option that does not land
#        in .config is reported, not an error, whether no Kconfig of the
#        tree defines it or its dependencies are not met: bisect-check.sh
#        builds commits that predate some options, or the arch support
#        they depend on)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || { echo "usage: $0 <arch> <kernel tree> [extra.config ...]" >&2; exit 2; }
arch=$1 src=$2
shift 2
check_arch "$arch"
[ -f "$src/Makefile" ] || die "$src is not a kernel tree"
llvm=$(llvm_arg "${LLVM:-}")
out=${KPKEYS_O:-$(build_dir "$arch" "$llvm")}
cross=$(cross_compile "$arch")
frags=("$KPKEYS_REPO/overlay-tools/configs/common.config" "$KPKEYS_REPO/overlay-tools/configs/$arch.config" "$@")
for i in "${!frags[@]}"; do
	[ -f "${frags[$i]}" ] || die "config fragment ${frags[$i]} does not exist"
	# merge_config.sh runs in the kernel tree: absolute paths only.
	frags[$i]=$(realpath "${frags[$i]}")
done

# Tools this build needs, with the package that provides each.
need() { command -v "$1" >/dev/null || die "$1 not found: install $2 (or run overlay-tools/install-deps.sh)"; }
need flex flex
need bison bison
need bc bc
need rsync rsync
if [ -n "$llvm" ]; then
	need "clang$llvm" "clang${llvm}"
	need "ld.lld$llvm" "lld${llvm}"
	need "llvm-ar$llvm" "llvm${llvm}"
else
	need "${cross}gcc" "gcc-${cross%-}"
fi

# A sub-make must not inherit the top-level make's command-line variables
# (LLVM=1 in particular would override LLVM=-19).
unset MAKEFLAGS MAKELEVEL MFLAGS
kernel_make "$arch" "$src" "$out" "$llvm"
# C=1/C=2: Kbuild runs CHECK on what it compiles.  Debian's sparse 0.6.4
# fails the tree's checker-valid.sh (Kbuild would say "not available or not
# up to date" and check nothing), so pass the sparse sparse.sh selects: the
# system's if it passes, else one built from Debian sid's source package.
if [ -n "${C:-}" ] && [ "$C" != 0 ]; then
	check=$("$KPKEYS_REPO/overlay-tools/sparse.sh" which "$src") ||
		die "C=$C: no sparse that can check Linux 7.3 (see above)"
	kmake+=(C="$C" CHECK="$check")
fi
# shellcheck disable=SC2206
kmake+=(${KMAKEFLAGS:-})

# The options the fragments ask for, the last fragment's word on each.
effective_options() {
	awk '/^CONFIG_[A-Za-z0-9_]+=/ { k = $0; sub(/=.*/, "", k) }
	     /^# CONFIG_[A-Za-z0-9_]+ is not set$/ { k = $2 }
	     k != "" { if (!(k in v)) ord[n++] = k; v[k] = $0; k = "" }
	     END { for (i = 0; i < n; i++) print v[ord[i]] }' "$@"
}

mkdir -p "$out"
stamp=$out/.kpkeys-config-inputs
inputs=$(cat "${frags[@]}" "$src/Makefile" | sha256sum | cut -d' ' -f1)
if [ ! -f "$out/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$inputs" ]; then
	say "$arch: configuring ($(basename -a "${frags[@]}" | tr '\n' ' '))"
	"${kmake[@]}" tinyconfig >/dev/null
	(cd "$src" && ARCH=$arch scripts/kconfig/merge_config.sh -m -O "$out" \
		"$out/.config" "${frags[@]}" >/dev/null)
	"${kmake[@]}" olddefconfig >/dev/null
	# merge_config.sh only warns; an option Kconfig dropped is a hard error.
	bad=0 known_missing=
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF "$line" "$out/.config" && continue
			got=$(grep -E "^(# )?${line%%=*}[= ]" "$out/.config" || echo "absent")
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			grep -qE "^$opt=" "$out/.config" || continue
			got=$(grep -E "^$opt=" "$out/.config")
			;;
		*) continue ;;
		esac
		echo "  requested: $line" >&2
		echo "  got:       $got" >&2
		bad=1
		# Which of them a Kconfig file of this tree defines (its
		# dependencies are not met), for the message.
		opt=${line#\# }; opt=${opt%%[= ]*}; opt=${opt#CONFIG_}
		if grep -rqsE --include='Kconfig*' "^[[:space:]]*(menu)?config[[:space:]]+$opt\$" "$src"; then
			known_missing+=" CONFIG_$opt"
		fi
	done < <(effective_options "${frags[@]}")
	if [ "$bad" = 1 ] && [ -n "${KPKEYS_CONFIG_LENIENT:-}" ]; then
		say "$arch: KPKEYS_CONFIG_LENIENT: building without the options above${known_missing:+ (dependencies not met in this tree:$known_missing; the others no Kconfig defines)}"
	elif [ "$bad" = 1 ]; then
		[ -z "$known_missing" ] || say "$arch: defined in this tree but not set:$known_missing"
		rm -f "$out/.config"
		die "$arch: requested options did not land in .config (missing dependency?)"
	fi
	echo "$inputs" > "$stamp"
fi

[ -n "${KPKEYS_CONFIG_ONLY:-}" ] && exit 0

say "$arch: building $(kernel_image "$arch") in $out${llvm:+ (LLVM=$llvm)}"
start=$SECONDS
"${kmake[@]}" "$(basename "$(kernel_image "$arch")")"
if grep -q '^CONFIG_MODULES=y' "$out/.config"; then
	"${kmake[@]}" modules
fi
"${kmake[@]}" headers_install INSTALL_HDR_PATH="$out/usr-headers" >/dev/null
say "$arch: built in $((SECONDS - start)) s: $out/$(kernel_image "$arch")"
