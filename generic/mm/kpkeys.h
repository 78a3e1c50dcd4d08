/* SPDX-License-Identifier: GPL-2.0-only */
/* Internal to the kpkeys files in mm/. */
#ifndef __MM_KPKEYS_H
#define __MM_KPKEYS_H

struct dentry;
struct mm_struct;

struct dentry *kpkeys_debugfs_dir(void);

#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
void kpkeys_walk_mm(struct mm_struct *mm, unsigned long *tables,
		    unsigned long *unkeyed, unsigned long *slab);
bool kpkeys_pgtable_from_kmem_cache(const void *table);
#endif

#endif /* __MM_KPKEYS_H */
