// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys hardened page tables (CONFIG_KPKEYS_HARDENED_PGTABLES).
 *
 * Every page-table page (PTP) carries KPKEYS_PKEY_PGTABLES in the linear
 * map while it is in use, so only code at KPKEYS_LVL_PGTABLES (the
 * kpkeys_hardened_pgtables guard, or a batched lazy MMU section) can write
 * it.  This file provides:
 *
 *  - the boot parameter kpkeys_hardened_pgtables=on|nobatch|off and the
 *    decision, logged once, whether and how the feature runs;
 *
 *  - the page-table page pool behind pagetable_alloc() and
 *    __pagetable_free().  Keying a page means set_memory_pkey() on its
 *    linear-map alias, which may have to split a block mapping, which needs
 *    a new PTP, which must be keyed: doing that per allocation recurses, may
 *    sleep and flushes the TLB every time.  Instead, order-0 PTPs come from
 *    a pool of pages keyed in blocks of KPKEYS_POOL_BLOCK pages (one
 *    set_memory_pkey() per block) by process context, and go back to the
 *    pool when freed, still keyed: allocation and free are a list operation
 *    under a spinlock, safe in any context.  KPKEYS_POOL_RESERVE pages are
 *    kept for allocations that cannot sleep and for the PTPs a split needs
 *    while the pool is being refilled.  Above KPKEYS_POOL_HIGH pages, and
 *    under memory pressure (shrinker), pages get the default key back and
 *    return to the page allocator, from a work item (the shrinker only
 *    queues it).  Higher-order PTPs (the x86 PTI PGD, order 1) are keyed
 *    and unkeyed one by one, their frees deferred to the same work item;
 *
 *  - the enable-time walk that keys every PTP created before, and the
 *    walker behind /sys/kernel/debug/kpkeys/walk that checks every PTP
 *    reachable from init_mm and from every process.
 *
 * Which PTPs are keyed is recorded in the page flags (PT_kpkeys), so the
 * free path knows what to undo, and the walker what to check.  Without pkey
 * hardware (CONFIG_KPKEYS_CHECK only) all of this runs the same way, with a
 * set_memory_pkey() that changes nothing: the bookkeeping, the batching and
 * the checker are tested everywhere.
 */
#define pr_fmt(fmt) "kpkeys: " fmt

#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/init.h>
#include <linux/kpkeys.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/pgtable.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/seq_file.h>
#include <linux/set_memory.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <asm/sections.h>
#include <kunit/visibility.h>

#include "kpkeys.h"

/* Exported: page-table writers in modules use the guard. */
DEFINE_PER_CPU(bool, kpkeys_pgtables_batching);
EXPORT_PER_CPU_SYMBOL(kpkeys_pgtables_batching);
DEFINE_STATIC_KEY_FALSE(kpkeys_hardened_pgtables_key);
EXPORT_SYMBOL(kpkeys_hardened_pgtables_key);
DEFINE_STATIC_KEY_FALSE(kpkeys_pgtables_batching_key);
EXPORT_SYMBOL(kpkeys_pgtables_batching_key);

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

static enum kpkeys_pgtables_mode kpkeys_pgtables_mode = KPKEYS_PGTABLES_ON;
/* What runs: the mode, or "off" if it could not be enabled. */
static enum kpkeys_pgtables_mode kpkeys_pgtables_active = KPKEYS_PGTABLES_OFF;

static int __init kpkeys_hardened_pgtables_setup(char *arg)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(kpkeys_pgtables_modes); i++) {
		if (!strcmp(arg, kpkeys_pgtables_modes[i])) {
			kpkeys_pgtables_mode = i;
			return 1;
		}
	}
	pr_err("kpkeys_hardened_pgtables=%s: invalid value, valid values are on, nobatch and off; keeping %s\n",
	       arg, kpkeys_pgtables_modes[kpkeys_pgtables_mode]);
	return 1;
}
__setup("kpkeys_hardened_pgtables=", kpkeys_hardened_pgtables_setup);

/* Keying pages */

static bool kpkeys_page_keyed(struct page *page)
{
	return test_bit(PT_kpkeys, &compound_head(page)->flags.f);
}

static int kpkeys_key_pages(struct page *page, unsigned int nr, int pkey)
{
	unsigned long addr = (unsigned long)page_address(page);
	bool keyed = pkey == KPKEYS_PKEY_PGTABLES;
	int ret;

	kpkeys_stat_inc(KPKEYS_STAT_SET_MEMORY_PKEY);
	ret = set_memory_pkey(addr, nr, pkey);
	if (ret) {
		pr_warn_ratelimited("set_memory_pkey(pfn %#lx, %u pages, pkey %d) failed: %d\n",
				    page_to_pfn(page), nr, pkey, ret);
		return ret;
	}
	if (keyed)
		set_bit(PT_kpkeys, &page->flags.f);
	else
		clear_bit(PT_kpkeys, &page->flags.f);
	kpkeys_stat_add(keyed ? KPKEYS_STAT_PTPS_KEYED :
				KPKEYS_STAT_PTPS_UNKEYED, nr);
	return 0;
}

/* The pool */

#define KPKEYS_POOL_BLOCK_ORDER	4
#define KPKEYS_POOL_BLOCK	BIT(KPKEYS_POOL_BLOCK_ORDER)
#define KPKEYS_POOL_RESERVE	16
#define KPKEYS_POOL_LOW		(KPKEYS_POOL_RESERVE + 2 * KPKEYS_POOL_BLOCK)
#define KPKEYS_POOL_HIGH	(8 * KPKEYS_POOL_LOW)
/* PTPs a refill may need for splits when even the reserve is gone */
#define KPKEYS_POOL_BOOTSTRAP	8

static struct {
	spinlock_t lock;		/* pages, count, deferred */
	struct list_head pages;		/* keyed order-0 pages, via page->lru */
	unsigned long count;
	struct list_head deferred;	/* higher-order PTPs to unkey and free */
	struct mutex refill_lock;
	struct task_struct *refiller;	/* holds refill_lock, in set_memory_pkey() */
	struct page *bootstrap[KPKEYS_POOL_BOOTSTRAP];
	unsigned int nr_bootstrap;
	unsigned long trim_to;		/* what the trim work keeps */
	struct work_struct refill_work;
	struct work_struct trim_work;
} kpkeys_pool = {
	.lock		= __SPIN_LOCK_UNLOCKED(kpkeys_pool.lock),
	.pages		= LIST_HEAD_INIT(kpkeys_pool.pages),
	.deferred	= LIST_HEAD_INIT(kpkeys_pool.deferred),
	.refill_lock	= __MUTEX_INITIALIZER(kpkeys_pool.refill_lock),
	.trim_to	= KPKEYS_POOL_HIGH / 2,
};

static bool kpkeys_pool_is_refiller(void)
{
	return READ_ONCE(kpkeys_pool.refiller) == current;
}

/* Take a page, leaving @keep pages in the pool. */
static struct page *kpkeys_pool_take(unsigned long keep)
{
	struct page *page = NULL;
	unsigned long flags, left = 0;

	spin_lock_irqsave(&kpkeys_pool.lock, flags);
	if (kpkeys_pool.count > keep) {
		page = list_first_entry(&kpkeys_pool.pages, struct page, lru);
		list_del_init(&page->lru);
		left = --kpkeys_pool.count;
	}
	spin_unlock_irqrestore(&kpkeys_pool.lock, flags);

	if (page && left < KPKEYS_POOL_LOW)
		queue_work(system_dfl_wq, &kpkeys_pool.refill_work);
	return page;
}

static void kpkeys_pool_put(struct page *page)
{
	unsigned long flags, count;

	spin_lock_irqsave(&kpkeys_pool.lock, flags);
	list_add(&page->lru, &kpkeys_pool.pages);
	count = ++kpkeys_pool.count;
	spin_unlock_irqrestore(&kpkeys_pool.lock, flags);

	kpkeys_stat_inc(KPKEYS_STAT_POOL_FREES);
	if (count > KPKEYS_POOL_HIGH)
		queue_work(system_dfl_wq, &kpkeys_pool.trim_work);
}

/*
 * Key the PTPs that set_memory_pkey() allocated for itself (splitting the
 * block the pool is being refilled from) while the pool was empty.  Keying
 * them may split again, which takes from the pool just refilled.
 */
static void kpkeys_pool_key_bootstrap(void)
{
	while (kpkeys_pool.nr_bootstrap) {
		struct page *page;

		page = kpkeys_pool.bootstrap[--kpkeys_pool.nr_bootstrap];
		kpkeys_key_pages(page, 1, KPKEYS_PKEY_PGTABLES);
	}
}

/*
 * Add a block of keyed pages to the pool.  Process context: the mutex
 * serialises refills, and set_memory_pkey() may sleep.
 */
static int kpkeys_pool_refill(void)
{
	const gfp_t gfp = GFP_KERNEL | __GFP_SKIP_KASAN;
	unsigned int order = KPKEYS_POOL_BLOCK_ORDER;
	struct page *block;
	unsigned long flags;
	unsigned int i;
	int ret = 0;

	mutex_lock(&kpkeys_pool.refill_lock);
	if (READ_ONCE(kpkeys_pool.count) >= KPKEYS_POOL_LOW)
		goto out;

	block = alloc_pages(gfp | __GFP_NORETRY | __GFP_NOWARN, order);
	if (!block) {
		order = 0;
		block = alloc_pages(gfp, order);
	}
	if (!block) {
		ret = -ENOMEM;
		goto out;
	}

	WRITE_ONCE(kpkeys_pool.refiller, current);
	ret = kpkeys_key_pages(block, 1U << order, KPKEYS_PKEY_PGTABLES);
	kpkeys_pool_key_bootstrap();
	WRITE_ONCE(kpkeys_pool.refiller, NULL);
	if (ret) {
		__free_pages(block, order);
		goto out;
	}

	split_page(block, order);
	spin_lock_irqsave(&kpkeys_pool.lock, flags);
	for (i = 0; i < (1U << order); i++) {
		set_bit(PT_kpkeys, &block[i].flags.f);
		list_add_tail(&block[i].lru, &kpkeys_pool.pages);
	}
	kpkeys_pool.count += 1U << order;
	spin_unlock_irqrestore(&kpkeys_pool.lock, flags);
	kpkeys_stat_inc(KPKEYS_STAT_POOL_REFILLS);
out:
	mutex_unlock(&kpkeys_pool.refill_lock);
	return ret;
}

static void kpkeys_pool_refill_work(struct work_struct *work)
{
	while (READ_ONCE(kpkeys_pool.count) < KPKEYS_POOL_LOW) {
		if (kpkeys_pool_refill())
			break;
	}
}

/* Give the default key back to an order-@order page and free it. */
static void kpkeys_unkey_and_free(struct page *page, unsigned int order)
{
	if (kpkeys_key_pages(page, 1U << order, KPKEYS_PKEY_DEFAULT)) {
		/* Leaking it is safer than handing out a read-only page. */
		return;
	}
	__free_pages(page, order);
}

/* Return up to @nr pages above @keep to the page allocator. */
static unsigned long kpkeys_pool_trim(unsigned long keep, unsigned long nr)
{
	unsigned long done = 0;

	while (done < nr) {
		struct page *page = NULL;
		unsigned long flags;

		spin_lock_irqsave(&kpkeys_pool.lock, flags);
		if (kpkeys_pool.count > keep) {
			page = list_last_entry(&kpkeys_pool.pages, struct page,
					       lru);
			list_del_init(&page->lru);
			kpkeys_pool.count--;
		}
		spin_unlock_irqrestore(&kpkeys_pool.lock, flags);
		if (!page)
			break;
		kpkeys_unkey_and_free(page, 0);
		done++;
	}
	return done;
}

static void kpkeys_pool_trim_work(struct work_struct *work)
{
	unsigned long flags;
	LIST_HEAD(deferred);
	struct page *page, *next;

	spin_lock_irqsave(&kpkeys_pool.lock, flags);
	list_splice_init(&kpkeys_pool.deferred, &deferred);
	spin_unlock_irqrestore(&kpkeys_pool.lock, flags);
	list_for_each_entry_safe(page, next, &deferred, lru) {
		list_del_init(&page->lru);
		kpkeys_unkey_and_free(page, compound_order(page));
	}

	kpkeys_pool_trim(xchg(&kpkeys_pool.trim_to, KPKEYS_POOL_HIGH / 2),
			 ULONG_MAX);
}

static unsigned long kpkeys_pool_shrink_count(struct shrinker *shrinker,
					      struct shrink_control *sc)
{
	unsigned long count = READ_ONCE(kpkeys_pool.count);

	return count > KPKEYS_POOL_LOW ? count - KPKEYS_POOL_LOW : 0;
}

/*
 * Unkeying takes the CPA locks and flushes the TLB on every CPU: not from
 * reclaim, which may run under locks that path needs.  Have the work item
 * give pages back down to the low mark instead.
 */
static unsigned long kpkeys_pool_shrink_scan(struct shrinker *shrinker,
					     struct shrink_control *sc)
{
	WRITE_ONCE(kpkeys_pool.trim_to, KPKEYS_POOL_LOW);
	queue_work(system_dfl_wq, &kpkeys_pool.trim_work);
	return SHRINK_STOP;
}

/**
 * kpkeys_pgtable_alloc() - allocate a keyed page-table page
 * @gfp: as for pagetable_alloc()
 * @order: as for pagetable_alloc()
 *
 * Called by pagetable_alloc() once hardened page tables are enabled.
 * Order-0 allocations work in any context: one that cannot sleep only
 * takes a page from the pool (reserve included) and fails if it is empty;
 * one that can sleep refills the pool itself when it runs dry.
 *
 * Return: the page, or %NULL.
 */
struct page *kpkeys_pgtable_alloc(gfp_t gfp, unsigned int order)
{
	bool blocking = gfpflags_allow_blocking(gfp);
	struct page *page;

	if (order) {
		if (!blocking) {
			pr_warn_ratelimited("order-%u page-table allocation that cannot sleep: not supported\n",
					    order);
			return NULL;
		}
		page = alloc_pages_noprof(gfp, order);
		if (page && kpkeys_key_pages(page, 1U << order,
					     KPKEYS_PKEY_PGTABLES)) {
			__free_pages(page, order);
			page = NULL;
		}
		return page;
	}

	if (kpkeys_pool_is_refiller()) {
		/* A split inside the refill: the reserve, then bootstrap. */
		page = kpkeys_pool_take(0);
		if (!page && kpkeys_pool.nr_bootstrap < KPKEYS_POOL_BOOTSTRAP) {
			page = alloc_pages_noprof(gfp, 0);
			if (page)
				kpkeys_pool.bootstrap[kpkeys_pool.nr_bootstrap++] = page;
			return page;
		}
	} else if (blocking) {
		page = kpkeys_pool_take(KPKEYS_POOL_RESERVE);
		if (!page) {
			kpkeys_pool_refill();
			page = kpkeys_pool_take(0);
		}
	} else {
		page = kpkeys_pool_take(0);
	}
	if (!page) {
		kpkeys_stat_inc(KPKEYS_STAT_POOL_EMPTY);
		if (!(gfp & __GFP_NOWARN))
			pr_warn_ratelimited("page-table pool empty (gfp %pGg)\n",
					    &gfp);
		return NULL;
	}

	if ((gfp & __GFP_ACCOUNT) && memcg_kmem_charge_page(page, gfp, 0)) {
		kpkeys_pool_put(page);
		return NULL;
	}
	if (gfp & __GFP_ZERO) {
		guard(kpkeys_hardened_pgtables)();
		clear_page(page_address(page));
	}
	kpkeys_stat_inc(KPKEYS_STAT_POOL_ALLOCS);
	return page;
}

/**
 * kpkeys_pgtable_free() - take back a page-table page being freed
 * @page: the page, its page-table destructor already run
 *
 * Called by __pagetable_free() in any context (RCU and softirq included).
 *
 * Return: true if @page was keyed and kpkeys took it, false if the caller
 * frees it as usual.
 */
bool kpkeys_pgtable_free(struct page *page)
{
	unsigned long flags;
	unsigned int order;

	if (!test_bit(PT_kpkeys, &page->flags.f))
		return false;

	order = compound_order(page);
	memcg_kmem_uncharge_page(page, order);
	if (!order) {
		kpkeys_pool_put(page);
		return true;
	}

	spin_lock_irqsave(&kpkeys_pool.lock, flags);
	list_add(&page->lru, &kpkeys_pool.deferred);
	spin_unlock_irqrestore(&kpkeys_pool.lock, flags);
	queue_work(system_dfl_wq, &kpkeys_pool.trim_work);
	return true;
}

/**
 * kpkeys_pgtable_free_reserved() - unkey a boot page-table page being freed
 * @page: a PTP allocated from memblock, keyed by the enable-time walk
 *
 * Called by free_reserved_ptdesc(), in process context.
 */
void kpkeys_pgtable_free_reserved(struct page *page)
{
	if (test_bit(PT_kpkeys, &page->flags.f))
		kpkeys_key_pages(page, 1, KPKEYS_PKEY_DEFAULT);
}

/* Walking page tables */

enum kpkeys_walk_level { WALK_PGD, WALK_P4D, WALK_PUD, WALK_PMD, WALK_PTE };

static const char * const kpkeys_walk_level_names[] = {
	"pgd", "p4d", "pud", "pmd", "pte"
};

struct kpkeys_walk {
	bool key;		/* key the unkeyed PTPs found (enable time) */
	const char *what;	/* for reports */
	unsigned long tables;	/* PTPs seen */
	unsigned long unkeyed;	/* ... without the page-table key */
	unsigned long slab;	/* ... from a kmem cache: not keyable here */
	unsigned long keyed;	/* ... keyed by this walk */
	unsigned long reported;
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

	/* A folded level lives in its parent's table. */
	if (parent && page == kpkeys_table_page(parent))
		return;

	w->tables++;
	if (kpkeys_page_keyed(page))
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

	kpkeys_walk_table(w, pgd, NULL, WALK_PGD);
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
 * The enable-time walk (@w->key) runs alone, before SMP, and must not
 * hold init_mm's lock: set_memory_pkey() takes it.
 */
static void kpkeys_walk_kernel(struct kpkeys_walk *w)
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

struct kpkeys_walk_all {
	struct kpkeys_walk kernel, user;
	unsigned long mms;
};

/* Every process's mm, each once, then init_mm. */
static int kpkeys_walk_all(struct kpkeys_walk_all *all)
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
		if (!mm)
			continue;
		for (i = 0; i < nr && mms[i] != mm; i++)
			;
		if (i < nr) {
			mmput_async(mm);
			continue;
		}
		mms[nr++] = mm;
	}
	rcu_read_unlock();

	for (i = 0; i < nr; i++) {
		kpkeys_walk_user(&all->user, mms[i]);
		mmput(mms[i]);
	}
	all->mms = nr;
	kvfree(mms);

	kpkeys_walk_kernel(&all->kernel);
	return 0;
}

/* Setup */

static struct shrinker *kpkeys_pool_shrinker;

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

static int __init kpkeys_hardened_pgtables_init(void)
{
	struct kpkeys_walk w = { .key = true };
	int ret;

	if (kpkeys_pgtables_mode == KPKEYS_PGTABLES_OFF) {
		pr_info("hardened page tables: off (disabled on the command line: kpkeys_hardened_pgtables=off)\n");
		return 0;
	}
	if (!arch_kpkeys_enabled() && !IS_ENABLED(CONFIG_KPKEYS_CHECK)) {
		pr_info("hardened page tables: off (%s)\n",
			IS_ENABLED(CONFIG_ARCH_HAS_KPKEYS) ?
			"this CPU has no usable protection keys for the kernel" :
			"no kpkeys backend for this architecture");
		return 0;
	}

	INIT_WORK(&kpkeys_pool.refill_work, kpkeys_pool_refill_work);
	INIT_WORK(&kpkeys_pool.trim_work, kpkeys_pool_trim_work);
	while (kpkeys_pool.count < KPKEYS_POOL_LOW) {
		ret = kpkeys_pool_refill();
		if (ret) {
			pr_err("hardened page tables: off (could not fill the page-table pool: %d)\n",
			       ret);
			return 0;
		}
	}

	kpkeys_pgtables_active = kpkeys_pgtables_mode;
	static_branch_enable(&kpkeys_hardened_pgtables_key);
	if (kpkeys_pgtables_active == KPKEYS_PGTABLES_ON &&
	    IS_ENABLED(CONFIG_ARCH_HAS_LAZY_MMU_MODE))
		static_branch_enable(&kpkeys_pgtables_batching_key);

	/*
	 * Before SMP and user space: the only page tables are init_mm's, and
	 * nothing frees them concurrently.
	 */
	kpkeys_walk_kernel(&w);

	kpkeys_pool_shrinker = shrinker_alloc(0, "kpkeys-pgtable-pool");
	if (kpkeys_pool_shrinker) {
		kpkeys_pool_shrinker->count_objects = kpkeys_pool_shrink_count;
		kpkeys_pool_shrinker->scan_objects = kpkeys_pool_shrink_scan;
		shrinker_register(kpkeys_pool_shrinker);
	}

	pr_info("hardened page tables: %s, page-table pkey %d\n",
		kpkeys_pgtables_mode_text(), KPKEYS_PKEY_PGTABLES);
	if (!arch_kpkeys_enabled())
		pr_info("hardened page tables: software only (%s): page tables are tracked and checked, not write-protected\n",
			IS_ENABLED(CONFIG_ARCH_HAS_KPKEYS) ?
			"this CPU has no usable protection keys for the kernel" :
			"no kpkeys backend for this architecture");
	pr_info("hardened page tables: keyed %lu boot page-table pages (%lu unkeyed, %lu from kmem caches), pool %lu pages\n",
		w.keyed, w.unkeyed, w.slab, kpkeys_pool.count);
	return 0;
}
early_initcall(kpkeys_hardened_pgtables_init);

/* debugfs */

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
	seq_printf(m, "%s\n", kpkeys_pgtables_modes[kpkeys_pgtables_active]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kpkeys_mode);

static int __init kpkeys_hardened_pgtables_debugfs_init(void)
{
	struct dentry *dir = kpkeys_debugfs_dir();

	debugfs_create_file("pgtables_mode", 0444, dir, NULL,
			    &kpkeys_mode_fops);
	debugfs_create_file("walk", 0400, dir, NULL, &kpkeys_walk_fops);
	debugfs_create_ulong("pool_pages", 0444, dir, &kpkeys_pool.count);
	return 0;
}
late_initcall(kpkeys_hardened_pgtables_debugfs_init);
