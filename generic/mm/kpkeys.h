/* SPDX-License-Identifier: GPL-2.0-only */
/* Internal to the kpkeys files in mm/. */
#ifndef __MM_KPKEYS_H
#define __MM_KPKEYS_H

struct dentry;
struct mm_struct;
struct page;

struct dentry *kpkeys_debugfs_dir(void);

#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
/* kpkeys_hardened_pgtables.c */
const char *kpkeys_pgtables_active_mode(void);
extern bool kpkeys_pgtables_live;

/* kpkeys_pgtable_pool.c */
bool kpkeys_page_flagged(struct page *page);
int kpkeys_page_pte_pkey(struct page *page);
bool kpkeys_page_keyed(struct page *page);
int kpkeys_key_pages(struct page *page, unsigned int nr, int pkey);
int kpkeys_pool_init(void);
void kpkeys_pool_shrinker_init(void);
unsigned long kpkeys_pool_pages(void);

/* kpkeys_pgtable_walk.c */
struct kpkeys_walk {
	bool key;		/* key the unkeyed PTPs found (enable time) */
	const char *what;	/* for reports */
	unsigned long tables;	/* PTPs seen */
	unsigned long unkeyed;	/* ... without the page-table key */
	unsigned long slab;	/* ... from a kmem cache: not keyable here */
	unsigned long keyed;	/* ... keyed by this walk */
	unsigned long reported;
};

struct kpkeys_walk_all {
	struct kpkeys_walk kernel, user;
	unsigned long mms;
};

void kpkeys_walk_kernel(struct kpkeys_walk *w);
int kpkeys_walk_all(struct kpkeys_walk_all *all);
void kpkeys_walk_mm(struct mm_struct *mm, unsigned long *tables,
		    unsigned long *unkeyed, unsigned long *slab);
bool kpkeys_pgtable_from_kmem_cache(const void *table);
const char *kpkeys_no_hardware_reason(void);
#if IS_ENABLED(CONFIG_KUNIT)
int kpkeys_pool_refill_block(struct page *block, unsigned int order, bool only_if_low);
#endif
#endif

#endif /* __MM_KPKEYS_H */
