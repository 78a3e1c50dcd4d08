// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys hardened page tables: the page-table walker.
 *
 * The enable-time walk keys every PTP created before hardened page tables
 * started; the walker behind /sys/kernel/debug/kpkeys/walk checks every PTP
 * reachable from init_mm, from the trees no mm on the process list reaches
 * (arch_kpkeys_extra_pgd()) and from every process, and reports each page
 * where PT_kpkeys and the key in the linear-map PTE disagree.
 */
#define pr_fmt(fmt) "kpkeys: " fmt

#include <linux/kpkeys.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <asm/sections.h>
#include <kunit/visibility.h>

#include "kpkeys.h"

/* Walking page tables */

enum kpkeys_walk_level { WALK_PGD, WALK_P4D, WALK_PUD, WALK_PMD, WALK_PTE };

static const char * const kpkeys_walk_level_names[] = {
	"pgd", "p4d", "pud", "pmd", "pte"
};

#define KPKEYS_WALK_MAX_REPORTS	8

/* Page of a table; the top level may be a kernel-image symbol. */
static struct page *kpkeys_table_page(const void *table)
{
	unsigned long addr = (unsigned long)table;

	if (__is_kernel(addr))
		return virt_to_page(lm_alias(table));
	return virt_to_page(table);
}

static void kpkeys_walk_table(struct kpkeys_walk *w, const void *table,
			      const void *parent, enum kpkeys_walk_level level)
{
	struct page *page = kpkeys_table_page(table);
	bool flagged, pte_keyed;
	int pkey;

	/* A folded level lives in its parent's table. */
	if (parent && page == kpkeys_table_page(parent))
		return;

	w->tables++;
	pkey = kpkeys_page_pte_pkey(page);
	flagged = kpkeys_page_flagged(page);
	pte_keyed = pkey == KPKEYS_PKEY_PGTABLES;
	if (pkey != -EOPNOTSUPP && flagged != pte_keyed) {
		/* Bookkeeping and hardware disagree: never fine. */
		w->unkeyed++;
		if (w->reported++ < KPKEYS_WALK_MAX_REPORTS)
			pr_warn("walk: %s page-table page pfn %#lx (%s level): PT_kpkeys %s but key %d in its linear-map PTE\n",
				w->what, page_to_pfn(page),
				kpkeys_walk_level_names[level],
				flagged ? "set" : "clear", pkey);
		return;
	}
	if (flagged)
		return;
	if (PageSlab(page)) {
		w->slab++;
		return;
	}
	if (w->key && !kpkeys_key_pages(page, 1, KPKEYS_PKEY_PGTABLES)) {
		w->keyed++;
		return;
	}
	w->unkeyed++;
	if (w->reported++ < KPKEYS_WALK_MAX_REPORTS)
		pr_warn("walk: %s page-table page pfn %#lx (%s level) is not keyed\n",
			w->what, page_to_pfn(page),
			kpkeys_walk_level_names[level]);
}

static void kpkeys_walk_pmd(struct kpkeys_walk *w, pud_t *pudp)
{
	pmd_t *base = pmd_offset(pudp, 0);
	unsigned long i;

	kpkeys_walk_table(w, base, pudp, WALK_PMD);
	for (i = 0; i < PTRS_PER_PMD; i++) {
		pmd_t pmd = pmdp_get(base + i);

		if (pmd_none(pmd) || !pmd_present(pmd) || pmd_leaf(pmd) ||
		    pmd_bad(pmd))
			continue;
		kpkeys_walk_table(w, pte_offset_kernel(base + i, 0), base + i,
				  WALK_PTE);
	}
}

static void kpkeys_walk_pud(struct kpkeys_walk *w, p4d_t *p4dp)
{
	pud_t *base = pud_offset(p4dp, 0);
	unsigned long i;

	kpkeys_walk_table(w, base, p4dp, WALK_PUD);
	for (i = 0; i < PTRS_PER_PUD; i++) {
		pud_t pud = pudp_get(base + i);

		if (pud_none(pud) || !pud_present(pud) || pud_leaf(pud) ||
		    pud_bad(pud))
			continue;
		kpkeys_walk_pmd(w, base + i);
		/* Keying walks hold no lock; a big linear map takes a while. */
		if (w->key)
			cond_resched();
	}
}

static void kpkeys_walk_p4d(struct kpkeys_walk *w, pgd_t *pgdp)
{
	p4d_t *base = p4d_offset(pgdp, 0);
	unsigned long i;

	kpkeys_walk_table(w, base, pgdp, WALK_P4D);
	for (i = 0; i < PTRS_PER_P4D; i++) {
		p4d_t p4d = p4dp_get(base + i);

		if (p4d_none(p4d) || !p4d_present(p4d) || p4d_leaf(p4d) ||
		    p4d_bad(p4d))
			continue;
		kpkeys_walk_pud(w, base + i);
	}
}

/* Walk the PGD entries [0, @nr) of @pgd. */
static void kpkeys_walk_pgd(struct kpkeys_walk *w, pgd_t *pgd,
			    unsigned long nr)
{
	unsigned long i;

	/* A top-level table may span pages (powerpc radix, 4K pages: 16). */
	for (i = 0; i < PTRS_PER_PGD; i += PAGE_SIZE / sizeof(pgd_t))
		kpkeys_walk_table(w, pgd + i, NULL, WALK_PGD);
	for (i = 0; i < nr; i++) {
		pgd_t entry = pgdp_get(pgd + i);

		if (pgd_none(entry) || pgd_leaf(entry) || pgd_bad(entry))
			continue;
		kpkeys_walk_p4d(w, pgd + i);
	}
}

/* The PGD entries that map user space in @mm. */
static unsigned long kpkeys_user_pgds(struct mm_struct *mm)
{
	return min_t(unsigned long, pgd_index(mm->task_size - 1) + 1,
		     PTRS_PER_PGD);
}

#ifndef arch_kpkeys_extra_pgd
/**
 * arch_kpkeys_extra_pgd() - page-table trees outside init_mm and processes
 * @i: which tree, counting from 0
 * @nr_pgds: set to the number of top-level entries of the tree to walk
 * @what: set to a name for the walker's reports
 *
 * An architecture that builds page tables no mm on the process list
 * reaches (x86: the text-poking mm, the PTI user copy of the kernel part,
 * the EFI runtime mm) returns their top-level tables here, so that the
 * enable-time walk keys what was built before kpkeys was enabled and the
 * debugfs walk checks them.  The trees must never be freed.
 *
 * Return: the @i-th top-level table, or NULL after the last one.
 */
static inline pgd_t *arch_kpkeys_extra_pgd(unsigned int i,
					   unsigned long *nr_pgds,
					   const char **what)
{
	return NULL;
}
#endif

/*
 * init_mm, then the trees the architecture built for itself that no mm on
 * the process list reaches (see arch_kpkeys_extra_pgd()); they are never
 * freed.
 */
static void __kpkeys_walk_kernel(struct kpkeys_walk *w)
{
	unsigned long nr_pgds;
	unsigned int i;
	pgd_t *pgd;

	w->what = "kernel";
	kpkeys_walk_pgd(w, init_mm.pgd, PTRS_PER_PGD);
	for (i = 0; (pgd = arch_kpkeys_extra_pgd(i, &nr_pgds, &w->what)); i++)
		kpkeys_walk_pgd(w, pgd, nr_pgds);
}

/*
 * A keying walk (@w->key: at enable time, alone before SMP, and after an
 * unkeyed window, at boot before any driver probes) must not hold
 * init_mm's lock, which x86's set_memory_pkey() takes; it relies on
 * nothing freeing kernel page tables meanwhile.
 */
void kpkeys_walk_kernel(struct kpkeys_walk *w)
{
	if (w->key) {
		__kpkeys_walk_kernel(w);
		return;
	}
	mmap_read_lock(&init_mm);
	__kpkeys_walk_kernel(w);
	mmap_read_unlock(&init_mm);
}

/*
 * The user part of @mm.  mmap_lock keeps the upper levels; RCU keeps PTE
 * tables freed with pte_free_defer() while we look at them.
 */
static void kpkeys_walk_user(struct kpkeys_walk *w, struct mm_struct *mm)
{
	w->what = "user";
	mmap_read_lock(mm);
	rcu_read_lock();
	kpkeys_walk_pgd(w, mm->pgd, kpkeys_user_pgds(mm));
	rcu_read_unlock();
	mmap_read_unlock(mm);
}

/**
 * kpkeys_pgtable_keyed() - whether a page-table page carries the key
 * @table: the table, as a pointer to its entries
 *
 * Return: true if kpkeys keyed the page holding @table.
 */
bool kpkeys_pgtable_keyed(const void *table)
{
	/*
	 * A table written through an alias of its own (arm64 writes boot
	 * and hotplug tables through the fixmap) has no struct page to go
	 * by here: not reported.
	 */
	if (!__is_kernel((unsigned long)table) && !virt_addr_valid(table))
		return false;
	return kpkeys_page_keyed(kpkeys_table_page(table));
}
EXPORT_SYMBOL_IF_KUNIT(kpkeys_pgtable_keyed);

/**
 * kpkeys_pgtable_from_kmem_cache() - whether a table lives in a slab page
 * @table: the table, as a pointer to its entries
 *
 * Tables smaller than a page (powerpc hash PGD and PUD, the arm64 PGD with
 * 52-bit VAs) come from kmem caches, which kpkeys does not key (yet).
 *
 * Return: true if @table is in a slab page.
 */
bool kpkeys_pgtable_from_kmem_cache(const void *table)
{
	return PageSlab(kpkeys_table_page(table));
}
EXPORT_SYMBOL_IF_KUNIT(kpkeys_pgtable_from_kmem_cache);

/**
 * kpkeys_walk_mm() - count the PTPs of @mm and those without the key
 * @mm: a user mm (the user part is walked) or &init_mm (all of it)
 * @tables: PTPs found
 * @unkeyed: PTPs found without the page-table key
 * @slab: PTPs from a kmem cache, which kpkeys cannot key (yet)
 */
void kpkeys_walk_mm(struct mm_struct *mm, unsigned long *tables,
		    unsigned long *unkeyed, unsigned long *slab)
{
	struct kpkeys_walk w = {};

	if (mm == &init_mm)
		kpkeys_walk_kernel(&w);
	else
		kpkeys_walk_user(&w, mm);
	*tables = w.tables;
	*unkeyed = w.unkeyed;
	*slab = w.slab;
}
EXPORT_SYMBOL_IF_KUNIT(kpkeys_walk_mm);

static int kpkeys_cmp_ptr(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/*
 * Every process's mm, each once, then init_mm.  Threads share an mm:
 * sorting the references takes the duplicates out in O(n log n).
 */
int kpkeys_walk_all(struct kpkeys_walk_all *all)
{
	struct mm_struct **mms;
	struct task_struct *p;
	unsigned long nr = 0, max, i;

	max = nr_processes() + 16;
	mms = kvcalloc(max, sizeof(*mms), GFP_KERNEL);
	if (!mms)
		return -ENOMEM;

	rcu_read_lock();
	for_each_process(p) {
		struct mm_struct *mm;

		if (nr == max)
			break;
		mm = get_task_mm(p);
		if (mm)
			mms[nr++] = mm;
	}
	rcu_read_unlock();

	sort(mms, nr, sizeof(*mms), kpkeys_cmp_ptr, NULL);
	all->mms = 0;
	for (i = 0; i < nr; i++) {
		if (i == 0 || mms[i] != mms[i - 1]) {
			kpkeys_walk_user(&all->user, mms[i]);
			all->mms++;
		}
		mmput(mms[i]);
	}
	kvfree(mms);

	kpkeys_walk_kernel(&all->kernel);
	return 0;
}
