/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The page-table pages on the way to an address, for the kpkeys suites
 * that check every level of a tree: kpkeys_hardened_pgtables and
 * kpkeys_conformance (both built in, with CONFIG_KPKEYS_HARDENED_PGTABLES).
 */
#ifndef _MM_TESTS_KPKEYS_TEST_PATHS_H
#define _MM_TESTS_KPKEYS_TEST_PATHS_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/kpkeys.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/pgtable.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/sections.h>

#include "../kpkeys.h"

/* The page-table entries on the way to one address, top to bottom. */
struct kpkeys_test_path {
	void *entry[5];
	unsigned int size[5];
	const char *name[5];
	int nr;
};

static inline void kpkeys_test_path_add(struct kpkeys_test_path *path, void *entry,
					unsigned int size, const char *name)
{
	path->entry[path->nr] = entry;
	path->size[path->nr] = size;
	path->name[path->nr] = name;
	path->nr++;
}

/*
 * Follow the tables from the PGD entry @pgdp to @addr, recording the entry
 * used at each level that has a table of its own (folded levels share
 * their parent's).
 */
static inline void kpkeys_test_pgd_path(struct kpkeys_test_path *path, pgd_t *pgdp,
					unsigned long addr)
{
	p4d_t *p4dp;
	pud_t *pudp;
	pmd_t *pmdp;

	path->nr = 0;
	kpkeys_test_path_add(path, pgdp, sizeof(*pgdp), "pgd");
	if (pgd_none(pgdp_get(pgdp)) || pgd_leaf(pgdp_get(pgdp)))
		return;
	p4dp = p4d_offset(pgdp, addr);
	if ((void *)p4dp != (void *)pgdp)
		kpkeys_test_path_add(path, p4dp, sizeof(*p4dp), "p4d");
	if (p4d_none(p4dp_get(p4dp)) || p4d_leaf(p4dp_get(p4dp)))
		return;
	pudp = pud_offset(p4dp, addr);
	if ((void *)pudp != (void *)p4dp)
		kpkeys_test_path_add(path, pudp, sizeof(*pudp), "pud");
	if (pud_none(pudp_get(pudp)) || pud_leaf(pudp_get(pudp)))
		return;
	pmdp = pmd_offset(pudp, addr);
	if ((void *)pmdp != (void *)pudp)
		kpkeys_test_path_add(path, pmdp, sizeof(*pmdp), "pmd");
	if (pmd_none(pmdp_get(pmdp)) || pmd_leaf(pmdp_get(pmdp)))
		return;
	kpkeys_test_path_add(path, pte_offset_kernel(pmdp, addr), sizeof(pte_t), "pte");
}

/* init_mm's tables on the way to @addr. */
static inline void kpkeys_test_kernel_path(struct kpkeys_test_path *path, unsigned long addr)
{
	kpkeys_test_pgd_path(path, pgd_offset_k(addr), addr);
}

/*
 * How a suite judges the tables on one path; @what names the tree.  It
 * runs with the tree's memory held, and the mmap lock held for a user mm:
 * it must not end the test (no KUNIT_ASSERT).
 */
typedef void (*kpkeys_test_path_check_t)(struct kunit *test,
					 const struct kpkeys_test_path *path,
					 const char *what);

/*
 * Run @check on a path through each kind of tree every architecture has:
 * vmalloc, the linear map, and a user mm (this test's, with a page
 * faulted in).  Trees only some architectures have are the suite's own.
 */
static inline void kpkeys_test_each_tree(struct kunit *test, kpkeys_test_path_check_t check)
{
	struct kpkeys_test_path path;
	unsigned long addr;
	struct page *page;
	void *area;
	char c = 1;

	area = vmalloc(PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, area);
	kpkeys_test_kernel_path(&path, (unsigned long)area);
	KUNIT_EXPECT_STREQ_MSG(test, path.name[path.nr - 1], "pte",
			       "vmalloc: the walk stopped above the PTE");
	check(test, &path, "vmalloc");
	vfree(area);

	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	kpkeys_test_kernel_path(&path, (unsigned long)page_address(page));
	check(test, &path, "linear map");
	__free_page(page);

	addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "kunit_vm_mmap() failed");
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)addr, &c, 1), 0);
	mmap_read_lock(current->mm);
	kpkeys_test_pgd_path(&path, pgd_offset(current->mm, addr), addr);
	KUNIT_EXPECT_STREQ_MSG(test, path.name[path.nr - 1], "pte",
			       "user mm: the walk stopped above the PTE");
	check(test, &path, "user mm");
	mmap_read_unlock(current->mm);
}

/*
 * Every table on @path carries the page-table key: in its kernel PTE
 * where a backend is in use (kpkeys_pgtable_keyed()), which is what the
 * conformance suite relies on.
 */
static inline void kpkeys_test_expect_path_keyed(struct kunit *test,
						 const struct kpkeys_test_path *path,
						 const char *what)
{
	int i;

	for (i = 0; i < path->nr; i++) {
		if (kpkeys_pgtable_from_kmem_cache(path->entry[i])) {
			kunit_info(test, "%s: the %s table comes from a kmem cache: not keyed (listed in Documentation/core-api/kpkeys.rst)\n",
				   what, path->name[i]);
			continue;
		}
		KUNIT_EXPECT_TRUE_MSG(test, kpkeys_pgtable_keyed(path->entry[i]),
				      "%s: the %s table is not keyed", what, path->name[i]);
	}
}

/*
 * Every table on @path carries the key, faults on a store in the default
 * context and takes one in the page-table context.  Tables from a kmem cache
 * are not keyed (see kpkeys_pgtable_from_kmem_cache()) and are passed
 * over.
 *
 * The entries are live and may be shared (a linear-map leaf that another
 * CPU's set_memory_pkey() splits): the store that must fault writes the
 * value read before, which only a broken backend lets through, and the
 * store in the page-table context is an atomic add of zero, which changes
 * nothing whatever another CPU writes meanwhile.  Every page-table entry
 * is 64 bits wide on the architectures with kpkeys.
 */
static inline void kpkeys_test_expect_path_enforced(struct kunit *test,
						    const struct kpkeys_test_path *path,
						    const char *what)
{
	int i, checked = 0;

	for (i = 0; i < path->nr; i++) {
		u64 val;

		if (kpkeys_pgtable_from_kmem_cache(path->entry[i]))
			continue;
		if (path->size[i] != sizeof(u64)) {
			KUNIT_FAIL(test, "%s: %s entry of %u bytes, not 64 bits",
				   what, path->name[i], path->size[i]);
			continue;
		}
		/*
		 * No store into a table that does not carry the key: the one
		 * in the default context would land.  The store in the
		 * page-table context is not made through a fixup: the context
		 * opens the key (checked, a failed store reported, on a table
		 * of the conformance suite's own).
		 */
		if (!kpkeys_pgtable_keyed(path->entry[i])) {
			KUNIT_FAIL(test, "%s: %s table not keyed: not stored into",
				   what, path->name[i]);
			continue;
		}
		/*
		 * A top-level table in the kernel image (x86 init_top_pgt,
		 * arm64 swapper_pg_dir) is reached through the image alias,
		 * which arm64 makes read-only at the end of boot: in a run
		 * after boot (from debugfs), neither store would say anything
		 * about the key.
		 */
		if (__is_kernel((unsigned long)path->entry[i]) && system_state >= SYSTEM_RUNNING) {
			kunit_info(test, "%s: %s table in the kernel image, read-only after boot: not stored into\n",
				   what, path->name[i]);
			continue;
		}
		val = READ_ONCE(*(u64 *)path->entry[i]);
		KUNIT_EXPECT_EQ_MSG(test,
				    copy_to_kernel_nofault(path->entry[i], &val, sizeof(val)),
				    -EFAULT, "%s: %s write in the default context",
				    what, path->name[i]);
		scoped_guard(kpkeys_hardened_pgtables)
			atomic64_add(0, (atomic64_t *)path->entry[i]);
		checked++;
	}
	kunit_info(test, "%s: %d of %d levels keyed, stored into in the page-table context\n",
		   what, checked, path->nr);
}

#endif /* _MM_TESTS_KPKEYS_TEST_PATHS_H */
