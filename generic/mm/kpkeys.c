// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys: the debugfs directory shared by the kpkeys parts and the
 * statistics (CONFIG_KPKEYS_STATS).
 *
 * /sys/kernel/debug/kpkeys/stats lists each counter summed over all CPUs,
 * one "name value" pair per line.  The counters only grow: a benchmark
 * reads them before and after what it measures.
 */
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kpkeys.h>
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

#ifdef CONFIG_KPKEYS_STATS
DEFINE_PER_CPU(unsigned long, kpkeys_stats[KPKEYS_NR_STATS]);
EXPORT_PER_CPU_SYMBOL_GPL(kpkeys_stats);

static const char * const kpkeys_stat_names[KPKEYS_NR_STATS] = {
	[KPKEYS_STAT_REG_WRITES]	= "reg_writes",
	[KPKEYS_STAT_PGTABLES_SWITCHES]	= "pgtables_switches",
	[KPKEYS_STAT_PGTABLES_SKIPPED]	= "pgtables_switches_skipped",
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
	debugfs_create_file("stats", 0444, kpkeys_debugfs_dir(), NULL,
			    &kpkeys_stats_fops);
	return 0;
}
late_initcall(kpkeys_stats_init);
#endif /* CONFIG_KPKEYS_STATS */
