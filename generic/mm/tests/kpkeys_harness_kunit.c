// SPDX-License-Identifier: GPL-2.0-only
/*
 * Self-tests of the mechanisms the kpkeys KUnit suites are built on: a
 * faulting write through copy_to_kernel_nofault() is caught and reported as
 * -EFAULT, and a walk of the kernel page tables reaches the PTE that maps a
 * vmalloc page.  If these fail on an architecture, the kpkeys suites cannot
 * be trusted there.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/set_memory.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#define HARNESS_PATTERN	0x5a

static void *alloc_test_page(struct kunit *test)
{
	void *page = vmalloc(PAGE_SIZE);

	KUNIT_ASSERT_NOT_NULL(test, page);
	memset(page, HARNESS_PATTERN, PAGE_SIZE);
	return page;
}

static void nofault_write_to_read_only_page_returns_efault(struct kunit *test)
{
	unsigned long val = 0;
	u8 *page = alloc_test_page(test);
	int ret;

	ret = set_memory_ro((unsigned long)page, 1);
	if (ret) {
		vfree(page);
		kunit_skip(test, "set_memory_ro() on vmalloc failed: %d", ret);
	}

	KUNIT_EXPECT_EQ(test, copy_to_kernel_nofault(page, &val, sizeof(val)),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, page[0], HARNESS_PATTERN);

	KUNIT_ASSERT_EQ(test, set_memory_rw((unsigned long)page, 1), 0);
	KUNIT_EXPECT_EQ(test, copy_to_kernel_nofault(page, &val, sizeof(val)), 0);
	KUNIT_EXPECT_EQ(test, page[0], 0);
	vfree(page);
}

static void nofault_write_to_writable_page_succeeds(struct kunit *test)
{
	unsigned long val = ~0UL;
	u8 *page = alloc_test_page(test);

	KUNIT_EXPECT_EQ(test, copy_to_kernel_nofault(page, &val, sizeof(val)), 0);
	KUNIT_EXPECT_EQ(test, page[0], 0xff);
	vfree(page);
}

static void kernel_walk_reaches_vmalloc_pte(struct kunit *test)
{
	u8 *page = alloc_test_page(test);
	unsigned long addr = (unsigned long)page;
	pgd_t *pgd;
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd;
	pte_t *pte;

	pgd = pgd_offset_k(addr);
	KUNIT_ASSERT_FALSE(test, pgd_none(*pgd));
	p4d = p4d_offset(pgd, addr);
	KUNIT_ASSERT_FALSE(test, p4d_none(*p4d));
	pud = pud_offset(p4d, addr);
	KUNIT_ASSERT_FALSE(test, pud_none(*pud));
	KUNIT_ASSERT_FALSE(test, pud_leaf(*pud));
	pmd = pmd_offset(pud, addr);
	KUNIT_ASSERT_FALSE(test, pmd_none(*pmd));
	KUNIT_ASSERT_FALSE(test, pmd_leaf(*pmd));
	pte = pte_offset_kernel(pmd, addr);
	KUNIT_ASSERT_TRUE(test, pte_present(ptep_get(pte)));
	KUNIT_EXPECT_EQ(test, pte_pfn(ptep_get(pte)), vmalloc_to_pfn(page));
	vfree(page);
}

static struct kunit_case kpkeys_harness_cases[] = {
	KUNIT_CASE(nofault_write_to_read_only_page_returns_efault),
	KUNIT_CASE(nofault_write_to_writable_page_succeeds),
	KUNIT_CASE(kernel_walk_reaches_vmalloc_pte),
	{}
};

static struct kunit_suite kpkeys_harness_suite = {
	.name = "kpkeys_harness",
	.test_cases = kpkeys_harness_cases,
};

kunit_test_suite(kpkeys_harness_suite);

MODULE_DESCRIPTION("Self-tests of the kpkeys test harness");
MODULE_LICENSE("GPL");
