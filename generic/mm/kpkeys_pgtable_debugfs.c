// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys hardened page tables: /sys/kernel/debug/kpkeys/pgtables_mode
 * (what runs), pool_pages (keyed pages in the pool now) and walk (the
 * whole-system walker's counts).  See Documentation/core-api/kpkeys.rst.
 */
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/seq_file.h>

#include "kpkeys.h"

static int kpkeys_walk_show(struct seq_file *m, void *v)
{
	struct kpkeys_walk_all all = {};
	int ret;

	ret = kpkeys_walk_all(&all);
	if (ret)
		return ret;
	seq_printf(m, "kernel_tables %lu\n", all.kernel.tables);
	seq_printf(m, "kernel_unkeyed %lu\n", all.kernel.unkeyed);
	seq_printf(m, "kernel_slab %lu\n", all.kernel.slab);
	seq_printf(m, "user_mms %lu\n", all.mms);
	seq_printf(m, "user_tables %lu\n", all.user.tables);
	seq_printf(m, "user_unkeyed %lu\n", all.user.unkeyed);
	seq_printf(m, "user_slab %lu\n", all.user.slab);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kpkeys_walk);

static int kpkeys_mode_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%s\n", kpkeys_pgtables_active_mode());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kpkeys_mode);

static int kpkeys_pool_pages_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%lu\n", kpkeys_pool_pages());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kpkeys_pool_pages);

static int __init kpkeys_hardened_pgtables_debugfs_init(void)
{
	struct dentry *dir = kpkeys_debugfs_dir();

	debugfs_create_file("pgtables_mode", 0444, dir, NULL,
			    &kpkeys_mode_fops);
	debugfs_create_file("walk", 0400, dir, NULL, &kpkeys_walk_fops);
	debugfs_create_file("pool_pages", 0444, dir, NULL,
			    &kpkeys_pool_pages_fops);
	return 0;
}
late_initcall(kpkeys_hardened_pgtables_debugfs_init);
