// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of kpkeys hardened page tables: the page-table pages of a
 * new user mm, of a vmalloc area and of the linear map carry the
 * page-table key, and, where the CPU enforces keys, cannot be written in
 * the default context.
 */
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/kpkeys_check.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/pgalloc.h>
#include <linux/pgtable.h>
#include <linux/set_memory.h>
#include <linux/stop_machine.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/tlbflush.h>

#include "../kpkeys.h"
#include "kpkeys_test_paths.h"

#ifdef arch_kpkeys_extra_pgd
/*
 * The address the first present entries of a tree lead to, starting at
 * PGD entry @first: a path through one table of every level it has.
 */
static unsigned long first_mapped_addr(pgd_t *pgdp, unsigned long first)
{
	unsigned long addr = first << PGDIR_SHIFT;
	p4d_t *p4dp;
	pud_t *pudp;
	pmd_t *pmdp;
	int i;

	if (pgd_leaf(pgdp_get(pgdp)))
		return addr;
	p4dp = p4d_offset(pgdp, addr);
	for (i = 0; i < PTRS_PER_P4D && p4d_none(p4dp_get(p4dp + i)); i++)
		;
	if (i == PTRS_PER_P4D || p4d_leaf(p4dp_get(p4dp + i)))
		return addr;
	addr += (unsigned long)i << P4D_SHIFT;
	pudp = pud_offset(p4dp + i, addr);
	for (i = 0; i < PTRS_PER_PUD && pud_none(pudp_get(pudp + i)); i++)
		;
	if (i == PTRS_PER_PUD || pud_leaf(pudp_get(pudp + i)))
		return addr;
	addr += (unsigned long)i << PUD_SHIFT;
	pmdp = pmd_offset(pudp + i, addr);
	for (i = 0; i < PTRS_PER_PMD && pmd_none(pmdp_get(pmdp + i)); i++)
		;
	if (i == PTRS_PER_PMD)
		return addr;
	return addr + ((unsigned long)i << PMD_SHIFT);
}
#endif

static int hardened_pgtables_test_init(struct kunit *test)
{
	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test,
			   "hardened page tables are off (see the kpkeys lines of the boot log)");
	return 0;
}

static void user_mm_tables_keyed(struct kunit *test)
{
	unsigned long tables, unkeyed, slab, addr, i;
	const unsigned long len = 4 * PMD_SIZE;
	struct vm_area_struct *vma;
	char c = 1;

	addr = kunit_vm_mmap(test, NULL, 0, len, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "kunit_vm_mmap() failed");
	/* Small folios only (as MADV_NOHUGEPAGE): PTE tables, not THPs. */
	mmap_write_lock(current->mm);
	vma = find_vma(current->mm, addr);
	KUNIT_ASSERT_NOT_NULL(test, vma);
	vm_flags_set(vma, VM_NOHUGEPAGE);
	mmap_write_unlock(current->mm);
	/* Fault in a page every PMD_SIZE / 2: several PTE tables. */
	for (i = 0; i < len; i += PMD_SIZE / 2)
		KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)(addr + i),
						   &c, 1), 0);

	kpkeys_walk_mm(current->mm, &tables, &unkeyed, &slab);
	kunit_info(test, "user mm: %lu page-table pages, %lu unkeyed, %lu from kmem caches\n",
		   tables, unkeyed, slab);
	/* A top level and at least four PTE tables. */
	KUNIT_EXPECT_GE(test, tables, 5);
	KUNIT_EXPECT_EQ(test, unkeyed, 0);
	if (slab)
		kunit_info(test, "%lu tables come from kmem caches (sub-page PGD/PUD) and are not keyed: listed in Documentation/core-api/kpkeys.rst\n",
			   slab);
}

static void vmalloc_tables_keyed(struct kunit *test)
{
	struct kpkeys_test_path path;
	void *area = vmalloc(4 * PAGE_SIZE);

	KUNIT_ASSERT_NOT_NULL(test, area);
	kpkeys_test_kernel_path(&path, (unsigned long)area);
	KUNIT_EXPECT_STREQ(test, path.name[path.nr - 1], "pte");
	kpkeys_test_expect_path_keyed(test, &path, "vmalloc");
	vfree(area);
}

static void linear_map_tables_keyed(struct kunit *test)
{
	struct kpkeys_test_path path;
	struct page *page = alloc_page(GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, page);
	kpkeys_test_kernel_path(&path, (unsigned long)page_address(page));
	kunit_info(test, "linear map: %d table levels down to the mapping of the page\n",
		   path.nr);
	kpkeys_test_expect_path_keyed(test, &path, "linear map");
	__free_page(page);
}

static void kernel_tables_all_keyed(struct kunit *test)
{
	unsigned long tables, unkeyed, slab;

	kpkeys_walk_mm(&init_mm, &tables, &unkeyed, &slab);
	kunit_info(test, "init_mm: %lu page-table pages, %lu unkeyed, %lu from kmem caches\n",
		   tables, unkeyed, slab);
	KUNIT_EXPECT_GT(test, tables, 1);
	KUNIT_EXPECT_EQ(test, unkeyed, 0);
}

/*
 * Enforcement, on every level of every kind of tree: a user mm, vmalloc,
 * the linear map, and the trees no mm on the process list reaches (x86:
 * PTI user copy, text-poking mm, EFI mm).
 */
static void default_context_write_faults(struct kunit *test)
{
	if (!kpkeys_supported())
		kunit_skip(test,
			   "%s: page tables are keyed in software only, nothing enforces the key",
			   kpkeys_no_hardware_reason());

	kpkeys_test_each_tree(test, kpkeys_test_expect_path_enforced);

#ifdef arch_kpkeys_extra_pgd
	{
		struct kpkeys_test_path path;
		unsigned long nr_pgds, j, addr;
		const char *what;
		unsigned int i;
		pgd_t *pgd;

		for (i = 0; (pgd = arch_kpkeys_extra_pgd(i, &nr_pgds, &what)); i++) {
			for (j = 0; j < nr_pgds && pgd_none(pgdp_get(pgd + j)); j++)
				;
			if (j == nr_pgds) {
				kunit_info(test, "%s: nothing mapped\n", what);
				continue;
			}
			addr = first_mapped_addr(pgd + j, j);
			kpkeys_test_pgd_path(&path, pgd + j, addr);
			kpkeys_test_expect_path_enforced(test, &path, what);
		}
	}
#endif
}

/*
 * kpkeys_key_pages() as set_memory_pkey() fails it: halfway through a
 * block it keys (a CPA that could not split a mapping, say), or refusing
 * every call before changing anything (arm64's -EBUSY from the start of
 * the secondary CPUs until splits are known to be safe).
 */
static unsigned int key_stub_unkeys;
static bool key_stub_active;
/* The block's pages still keyed right after the give-back unkeyed it. */
static int key_stub_keyed_after_unkey;

static unsigned int keyed_pages(struct page *block, unsigned int nr)
{
	unsigned int i, keyed = 0;

	for (i = 0; i < nr; i++)
		if (kernel_page_pkey((unsigned long)page_address(block + i)) ==
		    KPKEYS_PKEY_PGTABLES)
			keyed++;
	return keyed;
}

static int key_pages_fail_halfway(struct page *page, unsigned int nr, int pkey)
{
	int ret;

	if (pkey == KPKEYS_PKEY_PGTABLES && nr > 1) {
		set_memory_pkey((unsigned long)page_address(page), nr / 2, pkey);
		return -EIO;
	}
	if (pkey != KPKEYS_PKEY_DEFAULT || nr == 1) {
		/* Not the block: a page-table page of a split, keyed for real. */
		kunit_deactivate_static_stub(kunit_get_current_test(), kpkeys_key_pages);
		ret = kpkeys_key_pages(page, nr, pkey);
		kunit_activate_static_stub(kunit_get_current_test(), kpkeys_key_pages,
					   key_pages_fail_halfway);
		return ret;
	}
	/* The give-back's unkeying of the block: the real one, looked at before the free. */
	kunit_deactivate_static_stub(kunit_get_current_test(), kpkeys_key_pages);
	key_stub_active = false;
	ret = kpkeys_key_pages(page, nr, pkey);
	key_stub_keyed_after_unkey = keyed_pages(page, nr);
	return ret;
}

static int key_pages_refuse(struct page *page, unsigned int nr, int pkey)
{
	if (pkey != KPKEYS_PKEY_PGTABLES)
		key_stub_unkeys++;
	return -EBUSY;
}

#define TEST_BLOCK_ORDER	4

/*
 * A refill whose keying fails halfway must not hand its block back to the
 * page allocator with half of it still keyed read-only: the next user of
 * those pages would fault on its first write.  Looks at the key in each
 * page's PTE right after the give-back unkeyed the block, before it frees
 * it.
 */
static void pool_refill_failure_leaves_nothing_keyed(struct kunit *test)
{
	unsigned int nr = 1U << TEST_BLOCK_ORDER;
	struct page *block;
	int ret;

	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test, "hardened page tables are off");
	if (!kpkeys_supported())
		kunit_skip(test,
			   "%s: set_memory_pkey() changes no PTE, a failed refill leaves no key behind",
			   kpkeys_no_hardware_reason());

	block = alloc_pages(GFP_KERNEL, TEST_BLOCK_ORDER);
	KUNIT_ASSERT_NOT_NULL(test, block);
	key_stub_keyed_after_unkey = -1;
	kunit_activate_static_stub(test, kpkeys_key_pages, key_pages_fail_halfway);
	key_stub_active = true;
	ret = kpkeys_pool_refill_block(block, TEST_BLOCK_ORDER, false);
	if (key_stub_active)
		kunit_deactivate_static_stub(test, kpkeys_key_pages);

	KUNIT_ASSERT_EQ_MSG(test, ret, -EIO, "the refill did not fail as injected");
	KUNIT_ASSERT_GE_MSG(test, key_stub_keyed_after_unkey, 0,
			    "the failed refill gave its block back without unkeying it");
	kunit_info(test, "failed refill (%d): %d of %u pages still keyed when given back\n",
		   ret, key_stub_keyed_after_unkey, nr);
	KUNIT_EXPECT_EQ_MSG(test, key_stub_keyed_after_unkey, 0,
			    "pages of a failed refill go back to the page allocator keyed");
}

/*
 * A keying that set_memory_pkey() refuses changed nothing: the refill
 * frees its block as it is.  Unkeying it would be refused too, and a
 * failure path that tried would leak the block ("leaking 16 pages"): a
 * refused refill must not try.
 */
static void pool_refill_refused_leaks_nothing(struct kunit *test)
{
	struct page *block;
	int ret;

	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test, "hardened page tables are off");

	block = alloc_pages(GFP_KERNEL, TEST_BLOCK_ORDER);
	KUNIT_ASSERT_NOT_NULL(test, block);
	key_stub_unkeys = 0;
	kunit_activate_static_stub(test, kpkeys_key_pages, key_pages_refuse);
	ret = kpkeys_pool_refill_block(block, TEST_BLOCK_ORDER, false);
	kunit_deactivate_static_stub(test, kpkeys_key_pages);

	KUNIT_ASSERT_EQ_MSG(test, ret, -EBUSY, "the refill was not refused as injected");
	KUNIT_EXPECT_EQ_MSG(test, key_stub_unkeys, 0,
			    "a refused refill tried to unkey its block, and so leaked it");
}

#ifdef CONFIG_KPKEYS_CHECK
/*
 * The software check at every page-table store: a store to a keyed table
 * outside a guard is reported once, in software, where the hardware (when
 * there is some) faults; the guarded and batched writers, and a store to
 * a page that is not a keyed table, are not reported.  Then a real writer
 * whose guard is skipped, as a batching bug would skip it: its store is
 * reported too.
 */
static void unguarded_pgtable_write_is_reported(struct kunit *test)
{
	unsigned long addr;
	struct kpkeys_test_path path;
	void *area, *plain;
	pte_t *ptep, pte;
	int before;

	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test, "hardened page tables are off");
	plain = kunit_kzalloc(test, sizeof(pte_t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, plain);
	area = vmalloc(PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, area);
	addr = (unsigned long)area;
	kpkeys_test_kernel_path(&path, addr);
	ptep = path.entry[path.nr - 1];
	if (strcmp(path.name[path.nr - 1], "pte") || !kpkeys_pgtable_keyed(ptep)) {
		vfree(area);
		KUNIT_FAIL(test, "the vmalloc PTE table is missing or not keyed");
		return;
	}
	pte = ptep_get(ptep);

	kpkeys_check_expect_reports(true);
	before = kpkeys_check_reports();

	/* The writer without its guard. */
	kpkeys_check_pgtable_write(ptep);
	if (kpkeys_supported())
		KUNIT_EXPECT_EQ_MSG(test,
				    copy_to_kernel_nofault(ptep, &pte, sizeof(pte)),
				    -EFAULT, "unguarded PTE store did not fault");
	else
		WRITE_ONCE(*ptep, pte);
	KUNIT_EXPECT_EQ_MSG(test, kpkeys_check_reports(), before + 1,
			    "unguarded PTE store: expected exactly one report");

	/*
	 * The real writers, guarded, then batched: on the architectures
	 * whose writers take the guard (and so call the check).
	 */
	if (IS_ENABLED(CONFIG_ARCH_HAS_KPKEYS_HARDENED_PGTABLES)) {
		set_pte_at(&init_mm, addr, ptep, pte);
		lazy_mmu_mode_enable();
		set_pte_at(&init_mm, addr, ptep, pte);
		lazy_mmu_mode_disable();
	}
	/* Not a keyed table: any level may write it. */
	kpkeys_check_pgtable_write(plain);
	KUNIT_EXPECT_EQ_MSG(test, kpkeys_check_reports(), before + 1,
			    "a guarded, batched or unkeyed store was reported");

	/*
	 * A real writer whose guard is skipped: this CPU says "batched"
	 * without the context ever having been entered.  Software only (the
	 * hardware would fault), and with batching on.  Two reports: the
	 * skipped guard's context check and the store's.
	 */
#ifdef CONFIG_ARCH_HAS_LAZY_MMU_MODE
	if (IS_ENABLED(CONFIG_ARCH_HAS_KPKEYS_HARDENED_PGTABLES) &&
	    !kpkeys_supported() &&
	    static_branch_unlikely(&kpkeys_pgtables_batching_key)) {
		u8 *batching = &current->lazy_mmu_state.kpkeys.batching;
		u8 state = *batching;

		before = kpkeys_check_reports();
		preempt_disable();
		*batching = KPKEYS_BATCH_ACTIVE;
		set_pte_at(&init_mm, addr, ptep, pte);
		*batching = state;
		preempt_enable();
		KUNIT_EXPECT_EQ_MSG(test, kpkeys_check_reports(), before + 2,
				    "set_pte_at() with its guard skipped: expected the context check and the store check");
	} else {
		kunit_info(test, "skipped-guard part not run: needs a guarded arch, software only and batching\n");
	}
#else
	kunit_info(test, "skipped-guard part not run: no lazy MMU mode, so no batching\n");
#endif

	kpkeys_check_expect_reports(false);
	vfree(area);
}
#else
static void unguarded_pgtable_write_is_reported(struct kunit *test)
{
	kunit_skip(test, "the software check needs CONFIG_KPKEYS_CHECK");
}
#endif

static struct kunit_case hardened_pgtables_cases[] = {
	KUNIT_CASE(pool_refill_failure_leaves_nothing_keyed),
	KUNIT_CASE(pool_refill_refused_leaks_nothing),
	KUNIT_CASE(user_mm_tables_keyed),
	KUNIT_CASE(vmalloc_tables_keyed),
	KUNIT_CASE(linear_map_tables_keyed),
	KUNIT_CASE(kernel_tables_all_keyed),
	KUNIT_CASE(default_context_write_faults),
	KUNIT_CASE(unguarded_pgtable_write_is_reported),
	{}
};

static struct kunit_suite hardened_pgtables_suite = {
	.name = "kpkeys_hardened_pgtables",
	.init = hardened_pgtables_test_init,
	.test_cases = hardened_pgtables_cases,
};

kunit_test_suite(hardened_pgtables_suite);

/*
 * An unkeyed window (arm64's repaint of the linear map under
 * stop_machine()): a table allocated in it does not carry the key in its
 * linear-map PTE (it did not come from the pool), and
 * kpkeys_pgtables_key_unkeyed() keys it once init_mm's tree reaches it.
 * The window functions are __init: a boot-time suite.
 */

/* A PMD entry that only a fresh vmalloc area uses, for a table of ours. */
static pmd_t *__init unused_pmd_entry(struct vm_struct **vmp, unsigned long *addrp)
{
	int tries;

	for (tries = 0; tries < 4; tries++) {
		struct vm_struct *vm = get_vm_area(3 * PMD_SIZE, VM_ALLOC);
		unsigned long addr;
		pmd_t *pmdp = NULL;
		pud_t *pudp = NULL;
		p4d_t *p4dp;

		if (!vm)
			return NULL;
		addr = ALIGN((unsigned long)vm->addr, PMD_SIZE);
		p4dp = p4d_alloc(&init_mm, pgd_offset_k(addr), addr);
		if (p4dp)
			pudp = pud_alloc(&init_mm, p4dp, addr);
		if (pudp)
			pmdp = pmd_alloc(&init_mm, pudp, addr);
		if (pmdp && pmd_none(pmdp_get(pmdp))) {
			*vmp = vm;
			*addrp = addr;
			return pmdp;
		}
		/* A range used before keeps its PTE table: another one. */
		free_vm_area(vm);
	}
	return NULL;
}

/* As the arm64 repaint does it: every other CPU stopped, atomic. */
static int __init alloc_in_unkeyed_window(void *data)
{
	struct ptdesc **pt = data;

	kpkeys_pgtables_unkeyed_begin();
	*pt = pagetable_alloc(GFP_ATOMIC | __GFP_ZERO, 0);
	kpkeys_pgtables_unkeyed_end();
	return 0;
}

static void __init unkeyed_window_tables_keyed_after(struct kunit *test)
{
	unsigned long tables, unkeyed, slab;
	struct ptdesc *pt = NULL;
	struct vm_struct *vm;
	unsigned long addr;
	pmd_t *pmdp;

	/*
	 * kpkeys_pgtables_key_unkeyed() keys every unkeyed table of init_mm,
	 * not only this test's: a table some allocator left unkeyed since
	 * enable (a vmemmap table of device memory, say) would be keyed here
	 * and hidden from every later walk.  There must be none.
	 */
	kpkeys_walk_mm(&init_mm, &tables, &unkeyed, &slab);
	KUNIT_ASSERT_EQ_MSG(test, unkeyed, 0,
			    "init_mm has %lu unkeyed page-table pages (listed above) before the window",
			    unkeyed);

	pmdp = unused_pmd_entry(&vm, &addr);
	KUNIT_ASSERT_NOT_NULL_MSG(test, pmdp,
				  "no unused PMD entry in 4 fresh vmalloc areas");

	stop_machine(alloc_in_unkeyed_window, &pt, NULL);
	if (!pt) {
		free_vm_area(vm);
		KUNIT_FAIL_AND_ABORT(test, "pagetable_alloc() failed in an unkeyed window");
	}
	KUNIT_EXPECT_FALSE_MSG(test, kpkeys_pgtable_keyed(ptdesc_address(pt)),
			       "a table allocated in an unkeyed window is keyed: it came from the pool");

	pmd_populate_kernel(&init_mm, pmdp, ptdesc_address(pt));
	kpkeys_pgtables_key_unkeyed();
	KUNIT_EXPECT_TRUE_MSG(test, kpkeys_pgtable_keyed(ptdesc_address(pt)),
			      "kpkeys_pgtables_key_unkeyed() left a table of init_mm unkeyed");

	pmd_clear(pmdp);
	flush_tlb_kernel_range(addr, addr + PMD_SIZE);
#ifdef CONFIG_ARM64
	/* That was last-level only: the walk cache may hold the PMD entry. */
	__flush_tlb_kernel_pgtable(addr);
#endif
	pagetable_free(pt);
	free_vm_area(vm);

	/* The pool serves again. */
	pt = pagetable_alloc(GFP_KERNEL, 0);
	KUNIT_ASSERT_NOT_NULL(test, pt);
	KUNIT_EXPECT_TRUE_MSG(test, kpkeys_pgtable_keyed(ptdesc_address(pt)),
			      "after an unkeyed window, page tables are not keyed");
	pagetable_free(pt);
}

static struct kunit_case __refdata hardened_pgtables_boot_cases[] = {
	KUNIT_CASE(unkeyed_window_tables_keyed_after),
	{}
};

static struct kunit_suite hardened_pgtables_boot_suite = {
	.name = "kpkeys_hardened_pgtables_boot",
	.init = hardened_pgtables_test_init,
	.test_cases = hardened_pgtables_boot_cases,
};

kunit_test_init_section_suites(&hardened_pgtables_boot_suite);
