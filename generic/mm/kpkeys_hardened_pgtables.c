// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys hardened page tables (CONFIG_KPKEYS_HARDENED_PGTABLES).
 *
 * Every page-table page (PTP) carries KPKEYS_PKEY_PGTABLES in the linear
 * map while it is in use, so only code in KPKEYS_CTX_PGTABLES (the
 * kpkeys_hardened_pgtables guard, or a batched lazy MMU section) can write
 * it.  The parts, one file each:
 *
 *  - this file: the boot parameter kpkeys_hardened_pgtables=on|nobatch|off
 *    and the decision, logged once, whether and how the feature runs;
 *  - kpkeys_pgtable_pool.c: the pool of keyed pages behind
 *    pagetable_alloc() and __pagetable_free();
 *  - kpkeys_pgtable_walk.c: the enable-time walk that keys every PTP
 *    created before, and the whole-system walker;
 *  - kpkeys_pgtable_debugfs.c: /sys/kernel/debug/kpkeys/.
 *
 * Without pkey hardware (CONFIG_KPKEYS_CHECK only) all of this runs the
 * same way, with a set_memory_pkey() that changes nothing: the
 * bookkeeping, the batching and the checker are tested everywhere.
 */
#define pr_fmt(fmt) "kpkeys: " fmt

#include <linux/array_size.h>
#include <linux/init.h>
#include <linux/jump_label.h>
#include <linux/kpkeys_entry.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "kpkeys.h"

/*
 * Set once static_branch_enable() has patched every site of
 * kpkeys_hardened_pgtables_key.  Jump labels are patched in batches, so
 * for a while some guards are live and others are not; a keyed page from
 * the pool must not reach a writer whose guard is still a no-op.  Until
 * then kpkeys_pgtable_alloc() hands out unkeyed pages, which the walk
 * that follows keys.  Cleared again for an unkeyed window (see
 * kpkeys_pgtables_unkeyed_begin()), which is also before user space.
 */
bool kpkeys_pgtables_live __ro_after_init;

/* Exported: page-table writers in modules use the guard. */
/* Enabled once at boot and never disabled: read-only after init. */
DEFINE_STATIC_KEY_FALSE_RO(kpkeys_hardened_pgtables_key);
EXPORT_SYMBOL_GPL(kpkeys_hardened_pgtables_key);
DEFINE_STATIC_KEY_FALSE_RO(kpkeys_pgtables_batching_key);
EXPORT_SYMBOL_GPL(kpkeys_pgtables_batching_key);

/*
 * The guard's register switch, out of line for the kernel image (see
 * <linux/kpkeys.h>).  It enters KPKEYS_CTX_PGTABLES and nothing else, and
 * its leave never enters it.  Not exported: only direct calls reach
 * them.  Neither traceable nor probeable: a tracer, kprobe or BPF program
 * run at their entry or return would run in the page-table context, which
 * the inlined switch never exposed.
 */
notrace struct kpkeys_state __kpkeys_hardened_pgtables_enter(void)
{
#ifdef CONFIG_ARCH_HAS_LAZY_MMU_MODE
	struct kpkeys_lazy_mmu *lazy = &current->lazy_mmu_state.kpkeys;
#endif

#ifdef CONFIG_ARCH_HAS_LAZY_MMU_MODE
	/*
	 * Batched, after the section's first write, without kpkeys hardware
	 * (the software checker alone).  With it, the register says whether
	 * the context is in place, and the guard came here because it is not
	 * (a guard of the default context nested in the section): enter it.
	 */
	if (!kpkeys_supported() && kpkeys_pgtables_batched()) {
		kpkeys_check_ctx(KPKEYS_CTX_PGTABLES);
		kpkeys_stat_inc(KPKEYS_STAT_PGTABLES_SKIPPED);
		return KPKEYS_STATE_UNCHANGED;
	}
#endif
	kpkeys_stat_inc(KPKEYS_STAT_PGTABLES_SWITCHES);
#ifdef CONFIG_ARCH_HAS_LAZY_MMU_MODE
	/*
	 * The first write of a batched lazy MMU section: enter the context
	 * for the rest of the section, which leaves it when it ends.  An
	 * interrupt or a preemption between the steps gets the state back as
	 * it found it, pending or active, with the register (entry saves and
	 * restores both, the scheduler keeps both with the task); the state
	 * is set last.
	 * Exception entry and softirq processing clear the state for their
	 * handler, so a handler never takes the section over.
	 */
	if (static_branch_unlikely(&kpkeys_pgtables_batching_key) &&
	    lazy->batching == KPKEYS_BATCH_PENDING) {
		/*
		 * Only a section that is really there ends, and restores:
		 * a pending state outside one (task_struct is writable
		 * memory) would leave the context open for good.  The
		 * task's section, not is_lazy_mmu_mode_active(): that is
		 * false under local_bh_disable(), and a handler never sees
		 * a pending state (entry cleared it).
		 */
		if (WARN_ONCE(!__task_lazy_mmu_mode_active(current),
			      "kpkeys: a pending batched section outside lazy MMU mode\n")) {
			lazy->batching = KPKEYS_BATCH_NONE;
			return kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
		}
		lazy->state = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
		WRITE_ONCE(lazy->batching, KPKEYS_BATCH_ACTIVE);
		return KPKEYS_STATE_UNCHANGED;
	}
#endif
	return kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
}
NOKPROBE_SYMBOL(__kpkeys_hardened_pgtables_enter);

notrace void __kpkeys_hardened_pgtables_leave(struct kpkeys_state *state)
{
	kpkeys_hardened_pgtables_restore(state);
}
NOKPROBE_SYMBOL(__kpkeys_hardened_pgtables_leave);

/* Boot parameter */

enum kpkeys_pgtables_mode {
	KPKEYS_PGTABLES_OFF,
	KPKEYS_PGTABLES_NOBATCH,
	KPKEYS_PGTABLES_ON,
};

static const char * const kpkeys_pgtables_modes[] = {
	[KPKEYS_PGTABLES_OFF]		= "off",
	[KPKEYS_PGTABLES_NOBATCH]	= "nobatch",
	[KPKEYS_PGTABLES_ON]		= "on",
};

static enum kpkeys_pgtables_mode kpkeys_pgtables_mode __ro_after_init = KPKEYS_PGTABLES_ON;
/* What runs: the mode, or "off" if it could not be enabled. */
static enum kpkeys_pgtables_mode kpkeys_pgtables_active = KPKEYS_PGTABLES_OFF;

/* Early: the backends decide from it whether to arm (kpkeys_requested()). */
static int __init kpkeys_hardened_pgtables_setup(char *arg)
{
	int i;

	for (i = 0; arg && i < ARRAY_SIZE(kpkeys_pgtables_modes); i++) {
		if (!strcmp(arg, kpkeys_pgtables_modes[i])) {
			kpkeys_pgtables_mode = i;
			return 0;
		}
	}
	pr_err("kpkeys_hardened_pgtables=%s: invalid value, valid values are on, nobatch and off; keeping %s\n",
	       arg ?: "", kpkeys_pgtables_modes[kpkeys_pgtables_mode]);
	return 0;
}
early_param("kpkeys_hardened_pgtables", kpkeys_hardened_pgtables_setup);

/**
 * kpkeys_requested() - whether a kpkeys user wants the hardware
 *
 * A backend arms itself (sets the hardware up, makes kpkeys_supported()
 * true, keeps its key from user space) only if this says so.  Valid from
 * parse_early_param() on, before any backend decides.
 *
 * An architecture declares that every page-table writer it has is guarded
 * by selecting ARCH_HAS_KPKEYS_HARDENED_PGTABLES; until it does, its
 * backend may be built but is never armed, and hardened page tables run in
 * software only.
 *
 * Return: false if hardened page tables, the only kpkeys user, were turned
 * off on the command line, or cannot be enforced on this architecture.
 */
bool kpkeys_requested(void)
{
	return IS_ENABLED(CONFIG_ARCH_HAS_KPKEYS_HARDENED_PGTABLES) &&
	       kpkeys_pgtables_mode != KPKEYS_PGTABLES_OFF;
}

/* Setup */

static const char *kpkeys_pgtables_mode_text(void)
{
	switch (kpkeys_pgtables_active) {
	case KPKEYS_PGTABLES_ON:
		if (IS_ENABLED(CONFIG_ARCH_HAS_LAZY_MMU_MODE))
			return "on (page-table writes batched in lazy MMU sections)";
		return "on (no lazy MMU mode on this architecture: every write switches)";
	case KPKEYS_PGTABLES_NOBATCH:
		return "nobatch (every page-table write switches)";
	default:
		return "off";
	}
}

/* What runs, for debugfs: on, nobatch or off. */
const char *kpkeys_pgtables_active_mode(void)
{
	return kpkeys_pgtables_modes[kpkeys_pgtables_active];
}

/**
 * kpkeys_no_hardware_reason() - why no pkey hardware protects page tables
 *
 * Return: the reason, for boot messages and skipped tests.
 */
const char *kpkeys_no_hardware_reason(void)
{
	if (!IS_ENABLED(CONFIG_ARCH_HAS_KPKEYS))
		return "no kpkeys backend for this architecture";
	if (!IS_ENABLED(CONFIG_ARCH_HAS_KPKEYS_HARDENED_PGTABLES))
		return "this architecture does not guard its page-table writers";
	return "this CPU has no usable protection keys for the kernel";
}
EXPORT_SYMBOL_IF_KUNIT(kpkeys_no_hardware_reason);

/**
 * kpkeys_pgtables_unkeyed_begin() - hand out unkeyed page tables for a while
 *
 * For an architecture that must build many kernel page tables where
 * neither the pool nor set_memory_pkey() can serve it: arm64 repaints the
 * linear map with page mappings under stop_machine() when a secondary CPU
 * cannot split live blocks (no BBML3).  That needs far more tables than
 * the pool holds, in atomic context, and none can be keyed until the
 * repaint is done.  Until kpkeys_pgtables_unkeyed_end(),
 * kpkeys_pgtable_alloc() takes pages from the page allocator, unkeyed and
 * so writable in every context, as before hardened page tables started.
 *
 * Boot only, before user space, and with every other CPU stopped by the
 * caller: a table allocated in the window must be in init_mm's tree by
 * kpkeys_pgtables_unkeyed_end(), so that kpkeys_pgtables_key_unkeyed()
 * finds it.  Any context.
 */
void __init kpkeys_pgtables_unkeyed_begin(void)
{
	if (!kpkeys_hardened_pgtables_enabled())
		return;
	WARN_ON_ONCE(!READ_ONCE(kpkeys_pgtables_live));
	WRITE_ONCE(kpkeys_pgtables_live, false);
}

/**
 * kpkeys_pgtables_unkeyed_end() - page-table allocations use the pool again
 *
 * Closes the window kpkeys_pgtables_unkeyed_begin() opened.  Any context;
 * call kpkeys_pgtables_key_unkeyed() next, from process context.
 */
void __init kpkeys_pgtables_unkeyed_end(void)
{
	if (kpkeys_hardened_pgtables_enabled())
		WRITE_ONCE(kpkeys_pgtables_live, true);
}

/**
 * kpkeys_pgtables_key_unkeyed() - key the kernel's unkeyed page tables
 *
 * Walks init_mm (and the architecture's extra trees) and keys every
 * page-table page that is not keyed yet: those of an unkeyed window.
 * Process context, boot only, before drivers probe: as the enable-time
 * walk, it takes no lock (x86's set_memory_pkey() takes init_mm's), so
 * nothing may free kernel page tables meanwhile.
 */
void __init kpkeys_pgtables_key_unkeyed(void)
{
	struct kpkeys_walk w = { .key = true };

	if (!kpkeys_hardened_pgtables_enabled())
		return;
	kpkeys_walk_kernel(&w);
	if (w.unkeyed)
		pr_err("hardened page tables: %lu page-table pages could not be keyed (see above), %lu were\n",
		       w.unkeyed, w.keyed);
	else
		pr_info("hardened page tables: keyed %lu page-table pages built unkeyed\n",
			w.keyed);
}

static int __init kpkeys_hardened_pgtables_init(void)
{
	struct kpkeys_walk w = { .key = true };
	int ret;

	if (kpkeys_pgtables_mode == KPKEYS_PGTABLES_OFF) {
		pr_info("hardened page tables: off (disabled on the command line: kpkeys_hardened_pgtables=off)\n");
		return 0;
	}
	if (!kpkeys_supported() && !IS_ENABLED(CONFIG_KPKEYS_CHECK)) {
		pr_info("hardened page tables: off (%s)\n",
			kpkeys_no_hardware_reason());
		return 0;
	}

	ret = kpkeys_pool_init();
	if (ret == -EOPNOTSUPP) {
		pr_warn("hardened page tables: off (the linear map cannot be keyed on this system: set_memory_pkey() refused, see above)\n");
		return 0;
	}
	if (ret) {
		pr_err("hardened page tables: off (could not fill the page-table pool: %d)\n",
		       ret);
		return 0;
	}

	kpkeys_pgtables_active = kpkeys_pgtables_mode;
	static_branch_enable(&kpkeys_hardened_pgtables_key);
	if (kpkeys_pgtables_active == KPKEYS_PGTABLES_ON &&
	    IS_ENABLED(CONFIG_ARCH_HAS_LAZY_MMU_MODE))
		static_branch_enable(&kpkeys_pgtables_batching_key);
	WRITE_ONCE(kpkeys_pgtables_live, true);

	/*
	 * Before SMP and user space: the only page tables are init_mm's, and
	 * nothing frees them concurrently.
	 */
	kpkeys_walk_kernel(&w);

	kpkeys_pool_shrinker_init();

	pr_info("hardened page tables: %s, page-table pkey %d\n",
		kpkeys_pgtables_mode_text(), KPKEYS_PKEY_PGTABLES);
	if (!kpkeys_supported())
		pr_info("hardened page tables: software only (%s): page tables are tracked and checked, not write-protected\n",
			kpkeys_no_hardware_reason());
	pr_info("hardened page tables: keyed %lu boot page-table pages (%lu unkeyed, %lu from kmem caches), pool %lu pages\n",
		w.keyed, w.unkeyed, w.slab, kpkeys_pool_pages());
	return 0;
}
early_initcall(kpkeys_hardened_pgtables_init);
