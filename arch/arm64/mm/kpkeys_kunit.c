// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the arm64 kpkeys backend: what the hardware holds, read
 * with MRS and from the page tables, against values written down here
 * from the architecture (Arm ARM D24.2.151, POR_EL1; D8.3, POIndex), not
 * from the macros the backend uses.
 */
#include <kunit/test.h>
#include <linux/bitfield.h>
#include <linux/cpufeature.h>
#include <linux/kpkeys.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/pkeys.h>
#include <linux/sched/mm.h>
#include <asm/sysreg.h>

/* POR_EL1 with fields 1-6 RWX (7): field 0 RWX, field 7 R (1) or RW (5). */
#define TEST_POR_EL1_DEFAULT	0x17777777ULL
#define TEST_POR_EL1_PGTABLES	0x57777777ULL
#define TEST_POINDEX		GENMASK_ULL(62, 60)

static void require_poe(struct kunit *test)
{
	if (!system_supports_poe())
		kunit_skip(test, "this CPU has no FEAT_S1POE: nothing to read back");
	if (IS_ENABLED(CONFIG_ARM64_KPKEYS_MOCK))
		kunit_skip(test, "the mock backend writes CONTEXTIDR_EL1, not POR_EL1");
}

/* Each level is one POR_EL1 value, and TCR2_EL1.POE (bit 3) is on. */
static void por_el1_holds_each_level(struct kunit *test)
{
	struct kpkeys_saved saved;
	u64 def, pgt;

	require_poe(test);
	KUNIT_EXPECT_TRUE_MSG(test, read_sysreg_s(SYS_TCR2_EL1) & BIT(3),
			      "TCR2_EL1.POE is clear: POR_EL1 is not applied");

	def = read_sysreg_s(SYS_POR_EL1);
	saved = kpkeys_set_level(KPKEYS_LVL_PGTABLES);
	pgt = read_sysreg_s(SYS_POR_EL1);
	kpkeys_restore_pkey_reg(saved);

	KUNIT_EXPECT_EQ(test, def, TEST_POR_EL1_DEFAULT);
	KUNIT_EXPECT_EQ(test, pgt, TEST_POR_EL1_PGTABLES);
	KUNIT_EXPECT_EQ(test, read_sysreg_s(SYS_POR_EL1), TEST_POR_EL1_DEFAULT);
}

/*
 * Only the two managed fields change: a value planted in a field kpkeys
 * does not manage (index 3) survives a switch and its restore.
 */
static void unmanaged_fields_survive_a_switch(struct kunit *test)
{
	u64 planted = (TEST_POR_EL1_DEFAULT & ~(0xfULL << 12)) | (0x1ULL << 12);
	struct kpkeys_saved saved;
	unsigned long flags;
	u64 in, out;

	require_poe(test);
	local_irq_save(flags);
	write_sysreg_s(planted, SYS_POR_EL1);
	isb();
	saved = kpkeys_set_level(KPKEYS_LVL_PGTABLES);
	in = read_sysreg_s(SYS_POR_EL1);
	kpkeys_restore_pkey_reg(saved);
	out = read_sysreg_s(SYS_POR_EL1);
	write_sysreg_s(TEST_POR_EL1_DEFAULT, SYS_POR_EL1);
	isb();
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ(test, in, (planted & ~0xf0000000ULL) | 0x50000000ULL);
	KUNIT_EXPECT_EQ(test, out, planted);
}

/* The raw linear-map PTE of @addr, walked here; 0 if not PTE-mapped. */
static u64 linear_map_pte(unsigned long addr)
{
	pgd_t *pgdp = pgd_offset_k(addr);
	p4d_t *p4dp;
	pud_t *pudp;
	pmd_t *pmdp;

	if (pgd_none(pgdp_get(pgdp)))
		return 0;
	p4dp = p4d_offset(pgdp, addr);
	if (p4d_none(p4dp_get(p4dp)))
		return 0;
	pudp = pud_offset(p4dp, addr);
	if (pud_none(pudp_get(pudp)) || pud_leaf(pudp_get(pudp)))
		return pud_val(pudp_get(pudp));
	pmdp = pmd_offset(pudp, addr);
	if (pmd_none(pmdp_get(pmdp)) || pmd_leaf(pmdp_get(pmdp)))
		return pmd_val(pmdp_get(pmdp));
	return pte_val(__ptep_get(pte_offset_kernel(pmdp, addr)));
}

/*
 * A page-table page has POIndex 7 in bits 62:60 of its linear-map entry
 * while in use, and an ordinary kernel page has 0.
 */
static void pgtable_page_has_poindex_7(struct kunit *test)
{
	struct ptdesc *ptdesc;
	unsigned long plain;
	u64 pte;

	require_poe(test);
	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test, "hardened page tables are off (see the boot log)");

	ptdesc = pagetable_alloc(GFP_KERNEL, 0);
	KUNIT_ASSERT_NOT_NULL(test, ptdesc);
	pte = linear_map_pte((unsigned long)ptdesc_address(ptdesc));
	pagetable_free(ptdesc);
	KUNIT_EXPECT_EQ_MSG(test, FIELD_GET(TEST_POINDEX, pte), 7,
			    "linear-map entry %#llx", pte);

	plain = __get_free_page(GFP_KERNEL);
	KUNIT_ASSERT_NE(test, plain, 0);
	pte = linear_map_pte(plain);
	free_page(plain);
	KUNIT_EXPECT_EQ_MSG(test, FIELD_GET(TEST_POINDEX, pte), 0,
			    "linear-map entry %#llx", pte);
}

/*
 * A new mm has POIndex 7 marked allocated, so pkey_alloc() never returns
 * it, and yet not allocated to user space: pkey_mprotect() and
 * pkey_free() refuse it.
 */
static void user_cannot_get_poindex_7(struct kunit *test)
{
	struct mm_struct *mm = mm_alloc();

	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_EXPECT_TRUE(test, mm_pkey_allocation_map(mm) & BIT(7));
	KUNIT_EXPECT_FALSE(test, mm_pkey_is_allocated(mm, 7));
	KUNIT_EXPECT_EQ(test, mm_pkey_free(mm, 7), -EINVAL);
	KUNIT_EXPECT_TRUE(test, mm_pkey_is_allocated(mm, 0));
	mmput(mm);
}

static struct kunit_case kpkeys_arm64_cases[] = {
	KUNIT_CASE(por_el1_holds_each_level),
	KUNIT_CASE(unmanaged_fields_survive_a_switch),
	KUNIT_CASE(pgtable_page_has_poindex_7),
	KUNIT_CASE(user_cannot_get_poindex_7),
	{}
};

static struct kunit_suite kpkeys_arm64_suite = {
	.name = "kpkeys_arm64",
	.test_cases = kpkeys_arm64_cases,
};

kunit_test_suite(kpkeys_arm64_suite);

MODULE_DESCRIPTION("KUnit tests of the arm64 kpkeys backend (POE)");
MODULE_LICENSE("GPL");
