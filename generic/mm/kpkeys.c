// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys: the debugfs directory shared by the kpkeys parts, the out-of-line
 * part of the context API, and the statistics (CONFIG_KPKEYS_STATS).
 *
 * /sys/kernel/debug/kpkeys/stats lists each counter summed over all CPUs,
 * one "name value" pair per line.  The counters only grow: a benchmark
 * reads them before and after what it measures.  Counting is switched on
 * or off at boot (kpkeys_stats=, default CONFIG_KPKEYS_STATS_DEFAULT_ON),
 * so that a production kernel can carry the counters at the cost of a
 * patched-out branch per event; the file exists only while they count.
 */
#define pr_fmt(fmt) "kpkeys: " fmt

#include <linux/bug.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/jump_label.h>
#include <linux/kpkeys_check.h>
#include <linux/kprobes.h>
#include <linux/kstrtox.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <kunit/visibility.h>

#include "kpkeys.h"

static struct dentry *kpkeys_dir;

/* The kpkeys directory in debugfs, created on first use (initcalls only). */
struct dentry *kpkeys_debugfs_dir(void)
{
	if (!kpkeys_dir)
		kpkeys_dir = debugfs_create_dir("kpkeys", NULL);
	return kpkeys_dir;
}

/**
 * kpkeys_leave_invalid() - a state to leave to that no context produces
 * @arch_state: the state kpkeys_leave_context() was given, replaced by
 *	the default context's
 *
 * Out of line, so that the warning is not inlined into every guard.
 */
notrace void kpkeys_leave_invalid(struct arch_kpkeys_state *arch_state)
{
	WARN_ONCE(1, "kpkeys: leaving to a state that no kpkeys context has (%*phN); loading the default context\n",
		  (int)sizeof(*arch_state), arch_state);
	*arch_state = arch_kpkeys_ctx_state(KPKEYS_CTX_DEFAULT);
}
EXPORT_SYMBOL_GPL(kpkeys_leave_invalid);
NOKPROBE_SYMBOL(kpkeys_leave_invalid);

#ifdef CONFIG_KPKEYS_STATS
DEFINE_PER_CPU(unsigned long, kpkeys_stats[KPKEYS_NR_STATS]);
EXPORT_PER_CPU_SYMBOL_GPL(kpkeys_stats);

/* Also called in the page-table context: not traceable, not probeable. */
notrace void __kpkeys_stat_add(enum kpkeys_stat stat, unsigned long nr)
{
	this_cpu_add(kpkeys_stats[stat], nr);
}
EXPORT_SYMBOL_GPL(__kpkeys_stat_add);
NOKPROBE_SYMBOL(__kpkeys_stat_add);
#ifdef CONFIG_KPKEYS_STATS_DEFAULT_ON
DEFINE_STATIC_KEY_TRUE_RO(kpkeys_stats_key);
#else
DEFINE_STATIC_KEY_FALSE_RO(kpkeys_stats_key);
#endif
EXPORT_SYMBOL_GPL(kpkeys_stats_key);

/* Switched once, here, while booting: read-only after init. */
static int __init kpkeys_stats_setup(char *str)
{
	bool on;

	if (kstrtobool(str, &on)) {
		pr_warn("kpkeys_stats=%s is not on or off; the statistics stay %s\n",
			str, kpkeys_stats_enabled() ? "on" : "off");
		return 1;
	}
	if (on)
		static_branch_enable(&kpkeys_stats_key);
	else
		static_branch_disable(&kpkeys_stats_key);
	return 1;
}
__setup("kpkeys_stats=", kpkeys_stats_setup);

static const char * const kpkeys_stat_names[KPKEYS_NR_STATS] = {
	[KPKEYS_STAT_REG_WRITES]	= "reg_writes",
	[KPKEYS_STAT_ENTRY_REG_WRITES]	= "reg_writes_entry",
	[KPKEYS_STAT_SCHED_REG_WRITES]	= "reg_writes_sched",
	[KPKEYS_STAT_PGTABLES_SWITCHES]	= "pgtables_switches",
	[KPKEYS_STAT_PGTABLES_SKIPPED]	= "pgtables_switches_skipped",
	[KPKEYS_STAT_LAZY_SECTIONS]	= "lazy_mmu_sections",
	[KPKEYS_STAT_SET_MEMORY_PKEY]	= "set_memory_pkey_calls",
	[KPKEYS_STAT_PTPS_KEYED]	= "ptps_keyed",
	[KPKEYS_STAT_PTPS_UNKEYED]	= "ptps_unkeyed",
	[KPKEYS_STAT_POOL_ALLOCS]	= "pool_allocs",
	[KPKEYS_STAT_POOL_FREES]	= "pool_frees",
	[KPKEYS_STAT_POOL_REFILLS]	= "pool_refills",
	[KPKEYS_STAT_POOL_EMPTY]	= "pool_empty",
};

/**
 * kpkeys_stat_read() - a counter summed over all possible CPUs
 * @stat: which one
 *
 * Return: the sum; it may be stale by the increments running meanwhile.
 */
unsigned long kpkeys_stat_read(enum kpkeys_stat stat)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(kpkeys_stats[stat], cpu);
	return sum;
}
EXPORT_SYMBOL_IF_KUNIT(kpkeys_stat_read);

static int kpkeys_stats_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < KPKEYS_NR_STATS; i++)
		seq_printf(m, "%s %lu\n", kpkeys_stat_names[i],
			   kpkeys_stat_read(i));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kpkeys_stats);

static int __init kpkeys_stats_init(void)
{
	if (!kpkeys_stats_enabled()) {
		pr_info("statistics off (kpkeys_stats=on counts them)\n");
		return 0;
	}
	debugfs_create_file("stats", 0444, kpkeys_debugfs_dir(), NULL,
			    &kpkeys_stats_fops);
	return 0;
}
late_initcall(kpkeys_stats_init);
#endif /* CONFIG_KPKEYS_STATS */
