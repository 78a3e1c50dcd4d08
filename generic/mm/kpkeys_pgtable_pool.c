// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys hardened page tables: the page-table page pool behind
 * pagetable_alloc() and __pagetable_free().
 *
 * Keying a page means set_memory_pkey() on its linear-map alias, which may
 * have to split a block mapping, which needs a new PTP, which must be
 * keyed: doing that per allocation recurses, may sleep and flushes the TLB
 * every time.  Instead, order-0 PTPs come from a pool of pages keyed in
 * blocks of KPKEYS_POOL_BLOCK pages (one set_memory_pkey() per block) by
 * process context, and go back to the pool when freed, still keyed:
 * allocation and free are a list operation under a spinlock, safe in any
 * context.  KPKEYS_POOL_RESERVE pages are kept for allocations that cannot
 * sleep and for the PTPs a split needs while the pool is being refilled.
 * Above KPKEYS_POOL_HIGH pages, and under memory pressure (shrinker), pages
 * get the default key back and return to the page allocator, from a work
 * item (the shrinker only queues it).  Higher-order PTPs (the x86 PTI PGD,
 * order 1) are keyed and unkeyed one by one, their frees deferred to the
 * same work item.
 *
 * Which PTPs are keyed is recorded in the page flags (PT_kpkeys), so the
 * free path knows what to undo; where the CPU has keys, the key in the
 * PTE is what counts (kpkeys_page_keyed()).
 */
#define pr_fmt(fmt) "kpkeys: " fmt

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/gfp.h>
#include <linux/init.h>
#include <linux/kpkeys.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/set_memory.h>
#include <linux/shrinker.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <kunit/static_stub.h>
#include <kunit/visibility.h>

#include "kpkeys.h"

/* Keying pages */

bool kpkeys_page_flagged(struct page *page)
{
	return test_bit(PT_kpkeys, &compound_head(page)->flags.f);
}

/*
 * Where the CPU has keys, a page is keyed when its linear-map PTE says so,
 * whatever PT_kpkeys says; PT_kpkeys is the bookkeeping that the pool and
 * the free path go by, and the two must agree.  Without pkey hardware
 * (CONFIG_KPKEYS_CHECK alone) only PT_kpkeys exists.
 */
int kpkeys_page_pte_pkey(struct page *page)
{
	if (!kpkeys_supported())
		return -EOPNOTSUPP;
	return kernel_page_pkey((unsigned long)page_address(page));
}

bool kpkeys_page_keyed(struct page *page)
{
	int pkey = kpkeys_page_pte_pkey(page);

	if (pkey == -EOPNOTSUPP)
		return kpkeys_page_flagged(page);
	return pkey == KPKEYS_PKEY_PGTABLES;
}

/*
 * Failure injection on the refill path: the fail_kpkeys_pool attribute
 * (CONFIG_KPKEYS_FAULT_INJECTION).
 */
#ifdef CONFIG_KPKEYS_FAULT_INJECTION
static DECLARE_FAULT_ATTR(fail_kpkeys_pool);

static int __init setup_fail_kpkeys_pool(char *str)
{
	return setup_fault_attr(&fail_kpkeys_pool, str);
}
__setup("fail_kpkeys_pool=", setup_fail_kpkeys_pool);

static int __init fail_kpkeys_pool_debugfs(void)
{
	fault_create_debugfs_attr("fail_kpkeys_pool", NULL, &fail_kpkeys_pool);
	return 0;
}
late_initcall(fail_kpkeys_pool_debugfs);
#endif

static bool kpkeys_pool_is_refiller(void);

/*
 * set_memory_pkey() errors after which nothing changed: the linear map
 * cannot be keyed on this system (-EOPNOTSUPP), or not yet (-EBUSY: arm64
 * between the start of the secondary CPUs and the point where splits are
 * known to be safe).
 */
static bool kpkeys_key_refused(int ret)
{
	return ret == -EOPNOTSUPP || ret == -EBUSY;
}

static bool kpkeys_should_fail(void)
{
#ifdef CONFIG_KPKEYS_FAULT_INJECTION
	return should_fail(&fail_kpkeys_pool, 1);
#else
	return false;
#endif
}

/*
 * Give @nr pages from @page the key @pkey.  On failure the keys of the
 * pages are unknown (set_memory_pkey() may have changed some of them):
 * see kpkeys_give_back().
 */
int kpkeys_key_pages(struct page *page, unsigned int nr, int pkey)
{
	unsigned long addr = (unsigned long)page_address(page);
	bool keyed = pkey == KPKEYS_PKEY_PGTABLES;
	int ret;

	KUNIT_STATIC_STUB_REDIRECT(kpkeys_key_pages, page, nr, pkey);
	kpkeys_stat_inc(KPKEYS_STAT_SET_MEMORY_PKEY);
	if (keyed && nr > 1 && kpkeys_pool_is_refiller() && kpkeys_should_fail()) {
		/* Injected: fail halfway, as a CPA that could not split. */
		set_memory_pkey(addr, nr / 2, pkey);
		ret = -EIO;
	} else {
		ret = set_memory_pkey(addr, nr, pkey);
	}
	if (ret) {
		/* A refusal changed nothing; -EOPNOTSUPP says why once. */
		if (!kpkeys_key_refused(ret))
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

/*
 * Give the default key back to an order-@order page and free it: also
 * after a failed keying, which may have keyed part of it.  With @may_keep
 * the caller keeps a page whose unkeying is refused (-EBUSY) for later.
 */
static int __kpkeys_unkey(struct page *page, unsigned int order, bool may_keep)
{
	int ret = kpkeys_key_pages(page, 1U << order, KPKEYS_PKEY_DEFAULT);

	/* Leaking it is safer than handing out a read-only page. */
	if (ret && !(may_keep && ret == -EBUSY))
		pr_err("leaking %u pages at pfn %#lx: their key could not be reset (%d)\n",
		       1U << order, page_to_pfn(page), ret);
	return ret;
}

static int kpkeys_unkey(struct page *page, unsigned int order)
{
	return __kpkeys_unkey(page, order, false);
}

/*
 * Give back a block whose keying failed with @ret: as it is after a
 * refusal (nothing changed; unkeying would be refused too), else unkeyed
 * first.  Return: true if the block was freed, false if it was leaked.
 */
static bool kpkeys_give_back(struct page *page, unsigned int order, int ret)
{
	if (kpkeys_key_refused(ret)) {
		__free_pages(page, order);
		return true;
	}
	if (kpkeys_unkey(page, order))
		return false;
	__free_pages(page, order);
	return true;
}

/* The pool */

#define KPKEYS_POOL_BLOCK_ORDER	4
#define KPKEYS_POOL_BLOCK	BIT(KPKEYS_POOL_BLOCK_ORDER)
#define KPKEYS_POOL_RESERVE	16
#define KPKEYS_POOL_LOW		(KPKEYS_POOL_RESERVE + 2 * KPKEYS_POOL_BLOCK)
#define KPKEYS_POOL_HIGH	(8 * KPKEYS_POOL_LOW)
/* Refill failures tolerated while filling the pool at boot */
#define KPKEYS_POOL_INIT_TRIES	8
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

/*
 * Is this a page-table allocation made by the refill itself (a split in
 * set_memory_pkey())?  Not in an interrupt: one taken on the refiller's
 * CPU sees the refiller as current.
 */
static bool kpkeys_pool_is_refiller(void)
{
	return in_task() && READ_ONCE(kpkeys_pool.refiller) == current;
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

	/* A forged free list could hand out an unkeyed page as a table. */
	if (IS_ENABLED(CONFIG_DEBUG_VM) && page && kpkeys_supported())
		VM_WARN_ON_ONCE(kernel_page_pkey((unsigned long)page_address(page)) !=
				KPKEYS_PKEY_PGTABLES);
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
 * them may split again, which takes from the pool just refilled.  They are
 * live page tables: one that cannot be keyed now stays on the list, and
 * the next refill tries again (the walker reports it meanwhile).
 */
static int kpkeys_pool_key_bootstrap(void)
{
	while (kpkeys_pool.nr_bootstrap) {
		/* Popped first: keying it may push another one. */
		struct page *page = kpkeys_pool.bootstrap[--kpkeys_pool.nr_bootstrap];
		int ret;

		ret = kpkeys_key_pages(page, 1, KPKEYS_PKEY_PGTABLES);
		if (ret) {
			kpkeys_pool.bootstrap[kpkeys_pool.nr_bootstrap++] = page;
			pr_warn_ratelimited("could not key %u page-table pages of a linear-map split (%d); retrying at the next refill\n",
					    kpkeys_pool.nr_bootstrap, ret);
			return ret;
		}
	}
	return 0;
}

/*
 * Key @block and add its pages to the pool; refill_lock held.  On failure
 * the caller gives the block back with kpkeys_give_back() after
 * dropping refill_lock: unkeying may split a mapping and so allocate a
 * page table, which may refill.  The PTPs the keying allocates for splits
 * (through the refiller path) do not enter direct reclaim, which could
 * allocate page tables and come back here.
 */
static int kpkeys_pool_add_block(struct page *block, unsigned int order)
{
	unsigned int noreclaim, i;
	unsigned long flags;
	int ret;

	lockdep_assert_held(&kpkeys_pool.refill_lock);
	noreclaim = memalloc_noreclaim_save();
	WRITE_ONCE(kpkeys_pool.refiller, current);
	ret = kpkeys_key_pages(block, 1U << order, KPKEYS_PKEY_PGTABLES);
	kpkeys_pool_key_bootstrap();
	WRITE_ONCE(kpkeys_pool.refiller, NULL);
	memalloc_noreclaim_restore(noreclaim);
	if (ret)
		return ret;

	split_page(block, order);
	spin_lock_irqsave(&kpkeys_pool.lock, flags);
	for (i = 0; i < (1U << order); i++) {
		set_bit(PT_kpkeys, &block[i].flags.f);
		list_add_tail(&block[i].lru, &kpkeys_pool.pages);
	}
	kpkeys_pool.count += 1U << order;
	spin_unlock_irqrestore(&kpkeys_pool.lock, flags);
	kpkeys_stat_inc(KPKEYS_STAT_POOL_REFILLS);
	return 0;
}

/**
 * kpkeys_pool_refill_block() - key a block of pages and add it to the pool
 * @block: the first page of the block, allocated by the caller
 * @order: its order
 * @only_if_low: add it only if the pool is still below its low mark, else
 *	free it (another refill got there first)
 *
 * Process context: the mutex serialises refills, and set_memory_pkey() may
 * sleep.  A block that could not be keyed is given back to the page
 * allocator, or leaked if some of it stays keyed.
 *
 * Return: 0, or the error of the keying.
 */
VISIBLE_IF_KUNIT int kpkeys_pool_refill_block(struct page *block, unsigned int order,
					      bool only_if_low)
{
	int ret;

	mutex_lock(&kpkeys_pool.refill_lock);
	if (only_if_low && READ_ONCE(kpkeys_pool.count) >= KPKEYS_POOL_LOW) {
		mutex_unlock(&kpkeys_pool.refill_lock);
		__free_pages(block, order);
		return 0;
	}
	ret = kpkeys_pool_add_block(block, order);
	mutex_unlock(&kpkeys_pool.refill_lock);
	if (ret)
		kpkeys_give_back(block, order, ret);
	return ret;
}

/*
 * Add a block of keyed pages to the pool.  The block is allocated before
 * the mutex is taken: direct reclaim may allocate page tables, and so come
 * back here.
 */
static int kpkeys_pool_refill(void)
{
	const gfp_t gfp = GFP_KERNEL | __GFP_SKIP_KASAN;
	unsigned int order = KPKEYS_POOL_BLOCK_ORDER;
	struct page *block = NULL;

	if (READ_ONCE(kpkeys_pool.count) >= KPKEYS_POOL_LOW)
		return 0;
	if (!kpkeys_should_fail()) {
		block = alloc_pages(gfp | __GFP_NORETRY | __GFP_NOWARN, order);
		if (!block) {
			order = 0;
			block = alloc_pages(gfp, order);
		}
	}
	if (!block)
		return -ENOMEM;
	return kpkeys_pool_refill_block(block, order, true);
}

static void kpkeys_pool_refill_work(struct work_struct *work)
{
	while (READ_ONCE(kpkeys_pool.count) < KPKEYS_POOL_LOW) {
		if (kpkeys_pool_refill())
			break;
	}
}

/* Return up to @nr pages above @keep to the page allocator. */
static unsigned long kpkeys_pool_trim(unsigned long keep, unsigned long nr)
{
	unsigned long done = 0;

	while (done < nr) {
		struct page *page = NULL;
		unsigned long flags;
		int ret;

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
		ret = __kpkeys_unkey(page, 0, true);
		if (ret == -EBUSY) {
			/* Still keyed: back in the pool, trimmed later. */
			spin_lock_irqsave(&kpkeys_pool.lock, flags);
			list_add_tail(&page->lru, &kpkeys_pool.pages);
			kpkeys_pool.count++;
			spin_unlock_irqrestore(&kpkeys_pool.lock, flags);
			break;
		}
		/* Freed, or leaked (and said so). */
		if (!ret)
			__free_page(page);
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
		unsigned int order = compound_order(page);
		int ret;

		list_del_init(&page->lru);
		ret = __kpkeys_unkey(page, order, true);
		if (ret == -EBUSY) {
			/* Still keyed: kept for the next trim. */
			list_add(&page->lru, &deferred);
			break;
		}
		if (!ret)
			__free_pages(page, order);
	}
	if (!list_empty(&deferred)) {
		spin_lock_irqsave(&kpkeys_pool.lock, flags);
		list_splice(&deferred, &kpkeys_pool.deferred);
		spin_unlock_irqrestore(&kpkeys_pool.lock, flags);
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

	/* Not every guard is patched yet: see kpkeys_pgtables_live. */
	if (unlikely(!READ_ONCE(kpkeys_pgtables_live)))
		return alloc_pages_noprof(gfp, order);

	if (order) {
		if (!blocking) {
			pr_warn_ratelimited("order-%u page-table allocation that cannot sleep: not supported\n",
					    order);
			return NULL;
		}
		page = alloc_pages_noprof(gfp, order);
		if (page) {
			int ret = kpkeys_key_pages(page, 1U << order,
						   KPKEYS_PKEY_PGTABLES);

			if (ret) {
				kpkeys_give_back(page, order, ret);
				page = NULL;
			}
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
 *
 * Return: false if the page is still keyed and must not be freed.
 */
bool kpkeys_pgtable_free_reserved(struct page *page)
{
	if (!test_bit(PT_kpkeys, &page->flags.f))
		return true;
	if (kpkeys_key_pages(page, 1, KPKEYS_PKEY_DEFAULT)) {
		pr_err("leaking boot page-table page pfn %#lx: its key could not be reset\n",
		       page_to_pfn(page));
		return false;
	}
	return true;
}

static struct shrinker *kpkeys_pool_shrinker;

/**
 * kpkeys_pool_init() - fill the pool before hardened page tables start
 *
 * A few refill failures are tolerated (fail_kpkeys_pool injects them),
 * but not -EOPNOTSUPP: set_memory_pkey() cannot key the linear map on
 * this system, and retrying would only say so again.
 *
 * Return: 0, or the error of the last refill.
 */
int __init kpkeys_pool_init(void)
{
	int ret, tries;

	INIT_WORK(&kpkeys_pool.refill_work, kpkeys_pool_refill_work);
	INIT_WORK(&kpkeys_pool.trim_work, kpkeys_pool_trim_work);
	for (tries = 0; kpkeys_pool.count < KPKEYS_POOL_LOW;) {
		ret = kpkeys_pool_refill();
		if (ret == -EOPNOTSUPP ||
		    (ret && ++tries == KPKEYS_POOL_INIT_TRIES))
			return ret;
	}
	return 0;
}

/* Give pool pages back under memory pressure, once the feature runs. */
void __init kpkeys_pool_shrinker_init(void)
{
	kpkeys_pool_shrinker = shrinker_alloc(0, "kpkeys-pgtable-pool");
	if (!kpkeys_pool_shrinker)
		return;
	kpkeys_pool_shrinker->count_objects = kpkeys_pool_shrink_count;
	kpkeys_pool_shrinker->scan_objects = kpkeys_pool_shrink_scan;
	shrinker_register(kpkeys_pool_shrinker);
}

/* Keyed pages in the pool now. */
unsigned long kpkeys_pool_pages(void)
{
	return READ_ONCE(kpkeys_pool.count);
}
