// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of kpkeys hardened page tables: the page-table pages of a
 * new user mm, of a vmalloc area and of the linear map carry the
 * page-table key, and, where the CPU enforces keys, cannot be written at
 * the default level.
 */
#include <kunit/test.h>
#include <linux/kpkeys.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/pgtable.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "../kpkeys.h"

/* The page-table entries on the way to one address, top to bottom. */
struct kpkeys_test_path {
	void *entry[5];
	unsigned int size[5];
	const char *name[5];
	int nr;
};

static void path_add(struct kpkeys_test_path *path, void *entry,
		     unsigned int size, const char *name)
{
	path->entry[path->nr] = entry;
	path->size[path->nr] = size;
	path->name[path->nr] = name;
	path->nr++;
}

/*
 * Follow init_mm's tables to @addr, recording the entry used at each level
 * that has a table of its own (folded levels share their parent's).
 */
static void kernel_path(struct kpkeys_test_path *path, unsigned long addr)
{
	pgd_t *pgdp = pgd_offset_k(addr);
	p4d_t *p4dp;
	pud_t *pudp;
	pmd_t *pmdp;

	path->nr = 0;
	path_add(path, pgdp, sizeof(*pgdp), "pgd");
	if (pgd_none(pgdp_get(pgdp)) || pgd_leaf(pgdp_get(pgdp)))
		return;
	p4dp = p4d_offset(pgdp, addr);
	if ((void *)p4dp != (void *)pgdp)
		path_add(path, p4dp, sizeof(*p4dp), "p4d");
	if (p4d_none(p4dp_get(p4dp)) || p4d_leaf(p4dp_get(p4dp)))
		return;
	pudp = pud_offset(p4dp, addr);
	if ((void *)pudp != (void *)p4dp)
		path_add(path, pudp, sizeof(*pudp), "pud");
	if (pud_none(pudp_get(pudp)) || pud_leaf(pudp_get(pudp)))
		return;
	pmdp = pmd_offset(pudp, addr);
	if ((void *)pmdp != (void *)pudp)
		path_add(path, pmdp, sizeof(*pmdp), "pmd");
	if (pmd_none(pmdp_get(pmdp)) || pmd_leaf(pmdp_get(pmdp)))
		return;
	path_add(path, pte_offset_kernel(pmdp, addr), sizeof(pte_t), "pte");
}

static void expect_path_keyed(struct kunit *test,
			      const struct kpkeys_test_path *path)
{
	int i;

	for (i = 0; i < path->nr; i++) {
		if (kpkeys_pgtable_from_kmem_cache(path->entry[i])) {
			kunit_info(test, "%s table comes from a kmem cache: not keyed (listed in Documentation/core-api/kpkeys.rst)\n",
				   path->name[i]);
			continue;
		}
		KUNIT_EXPECT_TRUE_MSG(test, kpkeys_pgtable_keyed(path->entry[i]),
				      "%s table is not keyed", path->name[i]);
	}
}

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
	kernel_path(&path, (unsigned long)area);
	KUNIT_EXPECT_STREQ(test, path.name[path.nr - 1], "pte");
	expect_path_keyed(test, &path);
	vfree(area);
}

static void linear_map_tables_keyed(struct kunit *test)
{
	struct kpkeys_test_path path;
	struct page *page = alloc_page(GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, page);
	kernel_path(&path, (unsigned long)page_address(page));
	kunit_info(test, "linear map: %d table levels down to the mapping of the page\n",
		   path.nr);
	expect_path_keyed(test, &path);
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

static void default_level_write_faults(struct kunit *test)
{
	struct kpkeys_test_path path;
	void *area;
	int i;

	if (!arch_kpkeys_enabled())
		kunit_skip(test,
			   "%s: page tables are keyed in software only, nothing enforces the key",
			   IS_ENABLED(CONFIG_ARCH_HAS_KPKEYS) ?
			   "this CPU has no usable protection keys for the kernel" :
			   "no kpkeys backend for this architecture");

	area = vmalloc(PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, area);
	kernel_path(&path, (unsigned long)area);
	for (i = 0; i < path.nr; i++) {
		u64 val = 0;

		if (kpkeys_pgtable_from_kmem_cache(path.entry[i]))
			continue;
		/* Write back the value already there: harmless if it works. */
		memcpy(&val, path.entry[i], path.size[i]);
		KUNIT_EXPECT_EQ_MSG(test,
				    copy_to_kernel_nofault(path.entry[i], &val,
							   path.size[i]),
				    -EFAULT, "%s write at the default level",
				    path.name[i]);
		scoped_guard(kpkeys_hardened_pgtables)
			KUNIT_EXPECT_EQ_MSG(test,
					    copy_to_kernel_nofault(path.entry[i],
								   &val,
								   path.size[i]),
					    0, "%s write at the page-table level",
					    path.name[i]);
	}
	vfree(area);
}

static struct kunit_case hardened_pgtables_cases[] = {
	KUNIT_CASE(user_mm_tables_keyed),
	KUNIT_CASE(vmalloc_tables_keyed),
	KUNIT_CASE(linear_map_tables_keyed),
	KUNIT_CASE(kernel_tables_all_keyed),
	KUNIT_CASE(default_level_write_faults),
	{}
};

static struct kunit_suite hardened_pgtables_suite = {
	.name = "kpkeys_hardened_pgtables",
	.init = hardened_pgtables_test_init,
	.test_cases = hardened_pgtables_cases,
};

kunit_test_suite(hardened_pgtables_suite);
