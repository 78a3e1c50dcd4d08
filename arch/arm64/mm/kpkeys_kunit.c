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
#include <linux/smp.h>
#include <linux/workqueue.h>
#include <asm/fixmap.h>
#include <asm/sections.h>
#include <asm/sysreg.h>

/* POR_EL1 with fields 1-6 RWX (7): field 0 RWX, field 7 R (1) or RW (5). */
#define TEST_POR_EL1_DEFAULT	0x17777777ULL
#define TEST_POR_EL1_PGTABLES	0x57777777ULL
#define TEST_POINDEX		GENMASK_ULL(62, 60)

static u64 test_read_reg(void)
{
	return read_sysreg_s(SYS_POR_EL1);
}

static void test_write_reg(u64 val)
{
	write_sysreg_s(val, SYS_POR_EL1);
	isb();
}

static void require_backend(struct kunit *test)
{
	if (!kpkeys_supported())
		kunit_skip(test,
			   "kpkeys is not in use (no FEAT_S1POE, or kpkeys_hardened_pgtables=off)");
}

/*
 * Each context is one register value, and with POE TCR2_EL1.POE (bit 3) is
 * on, so that POR_EL1 applies.
 */
static void por_el1_holds_each_context(struct kunit *test)
{
	struct kpkeys_state saved;
	u64 def, pgt;

	require_backend(test);
	KUNIT_EXPECT_TRUE_MSG(test, read_sysreg_s(SYS_TCR2_EL1) & BIT(3),
			      "TCR2_EL1.POE is clear: POR_EL1 is not applied");

	def = test_read_reg();
	saved = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	pgt = test_read_reg();
	kpkeys_leave_context(&saved);

	KUNIT_EXPECT_EQ(test, def, TEST_POR_EL1_DEFAULT);
	KUNIT_EXPECT_EQ(test, pgt, TEST_POR_EL1_PGTABLES);
	KUNIT_EXPECT_EQ(test, test_read_reg(), TEST_POR_EL1_DEFAULT);
}

/*
 * Only the two managed fields change: a value planted in a field kpkeys
 * does not manage (index 3) survives a switch and its restore.
 */
static void unmanaged_fields_survive_a_switch(struct kunit *test)
{
	u64 planted = (TEST_POR_EL1_DEFAULT & ~(0xfULL << 12)) | (0x1ULL << 12);
	struct kpkeys_state saved;
	unsigned long flags;
	u64 in, out;

	require_backend(test);
	local_irq_save(flags);
	test_write_reg(planted);
	saved = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	in = test_read_reg();
	kpkeys_leave_context(&saved);
	out = test_read_reg();
	test_write_reg(TEST_POR_EL1_DEFAULT);
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
	u64 pte, poindex;

	require_backend(test);
	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test, "hardened page tables are off (see the boot log)");

	ptdesc = pagetable_alloc(GFP_KERNEL, 0);
	KUNIT_ASSERT_NOT_NULL(test, ptdesc);
	pte = linear_map_pte((unsigned long)ptdesc_address(ptdesc));
	pagetable_free(ptdesc);
	/* FIELD_GET() inside KUNIT_EXPECT_*() is too long a token for sparse. */
	poindex = FIELD_GET(TEST_POINDEX, pte);
	KUNIT_EXPECT_EQ_MSG(test, poindex, 7, "linear-map entry %#llx", pte);

	plain = __get_free_page(GFP_KERNEL);
	KUNIT_ASSERT_NE(test, plain, 0);
	pte = linear_map_pte(plain);
	free_page(plain);
	poindex = FIELD_GET(TEST_POINDEX, pte);
	KUNIT_EXPECT_EQ_MSG(test, poindex, 0, "linear-map entry %#llx", pte);
}

/*
 * Check the image alias of one table that init_mm reaches: a table in
 * the kernel image (the fixmap's bm_pud/bm_pmd/bm_pte, those built in
 * init_pg_dir) is written through that alias, so its entry there must
 * carry POIndex 7 as its linear-map entry does.  @table is a linear-map
 * address.  Returns 1 if the table is in the image.
 */
static int check_image_alias(struct kunit *test, const void *table,
			     const char *what, unsigned long addr)
{
	phys_addr_t pa = __pa((unsigned long)table & PAGE_MASK);
	unsigned long va;
	u64 pte, poindex;

	if (pa < __pa_symbol(_text) || pa >= __pa_symbol(_end))
		return 0;
	va = (unsigned long)__phys_to_kimg(pa);
	pte = linear_map_pte(va);
	poindex = FIELD_GET(TEST_POINDEX, pte);
	KUNIT_EXPECT_EQ_MSG(test, poindex, 7,
			    "%s table of %#lx at %#lx (image alias): entry %#llx",
			    what, addr, va, pte);
	return 1;
}

/*
 * Tables inside the kernel image are keyed in the image mapping too:
 * otherwise the fixmap's PTE table, written through its image address,
 * could map any page at any level.  The walker and pgtable_page_has_poindex_7
 * look at the linear alias only.  swapper_pg_dir is left out: it is in
 * the image's read-only data, written through the fixmap (FIX_PGDIR), and
 * the PGD level is the only one whose pointer is an image address.
 */
static void image_pgtables_keyed_in_image_alias(struct kunit *test)
{
	unsigned long addrs[] = { FIXADDR_TOT_START, (unsigned long)_stext,
				  (unsigned long)_sdata };
	bool fixmap_pte_in_image = false;
	int i, in_image = 0;

	require_backend(test);
	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test, "hardened page tables are off (see the boot log)");

	for (i = 0; i < ARRAY_SIZE(addrs); i++) {
		unsigned long addr = addrs[i];
		pgd_t *pgdp = pgd_offset_k(addr);
		p4d_t *p4dp;
		pud_t *pudp;
		pmd_t *pmdp;
		pte_t *ptep;

		if (pgd_none(pgdp_get(pgdp)))
			continue;
		p4dp = p4d_offset(pgdp, addr);
		if ((void *)p4dp != (void *)pgdp)
			in_image += check_image_alias(test, p4dp, "P4D", addr);
		if (p4d_none(p4dp_get(p4dp)))
			continue;
		pudp = pud_offset(p4dp, addr);
		if ((void *)pudp != (void *)p4dp)
			in_image += check_image_alias(test, pudp, "PUD", addr);
		if (pud_none(pudp_get(pudp)) || pud_leaf(pudp_get(pudp)))
			continue;
		pmdp = pmd_offset(pudp, addr);
		if ((void *)pmdp != (void *)pudp)
			in_image += check_image_alias(test, pmdp, "PMD", addr);
		if (pmd_none(pmdp_get(pmdp)) || pmd_leaf(pmdp_get(pmdp)))
			continue;
		ptep = pte_offset_kernel(pmdp, addr);
		if (check_image_alias(test, ptep, "PTE", addr)) {
			in_image++;
			/* bm_pte, in .pgtbl: the fixmap's own PTE table. */
			fixmap_pte_in_image |= addr == FIXADDR_TOT_START;
		}
	}
	KUNIT_EXPECT_TRUE_MSG(test, fixmap_pte_in_image,
			      "the fixmap's PTE table was not found in the kernel image");
	kunit_info(test, "%d tables in the kernel image checked\n", in_image);
}

/*
 * While kpkeys is armed, a new mm has POIndex 7 marked allocated, so
 * pkey_alloc() never returns it, and yet not allocated to user space:
 * pkey_mprotect() and pkey_free() refuse it.  Not armed (POE, but
 * kpkeys_hardened_pgtables=off), user space keeps POIndex 7.
 */
static void user_cannot_get_poindex_7(struct kunit *test)
{
	struct mm_struct *mm;

	if (!system_supports_poe())
		kunit_skip(test, "this CPU has no FEAT_S1POE: no user pkeys");
	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	if (!kpkeys_supported()) {
		KUNIT_EXPECT_FALSE_MSG(test, mm_pkey_allocation_map(mm) & BIT(7),
				       "POIndex 7 kept from user space with kpkeys not in use");
		mmput(mm);
		return;
	}
	KUNIT_EXPECT_TRUE(test, mm_pkey_allocation_map(mm) & BIT(7));
	KUNIT_EXPECT_FALSE(test, mm_pkey_is_allocated(mm, 7));
	KUNIT_EXPECT_EQ(test, mm_pkey_free(mm, 7), -EINVAL);
	KUNIT_EXPECT_TRUE(test, mm_pkey_is_allocated(mm, 0));
	mmput(mm);
}

struct kpkeys_cpu_regs {
	u64 reg, tcr2;
};

static long read_cpu_regs(void *arg)
{
	struct kpkeys_cpu_regs *regs = arg;

	regs->reg = test_read_reg();
	regs->tcr2 = read_sysreg_s(SYS_TCR2_EL1);
	return 0;
}

/*
 * Every online CPU runs with the default context and TCR2_EL1.POE set.
 * Read in task context (a kworker bound to the CPU), not in an IPI: IPI
 * entry would reset the managed field whatever the CPU's tasks run with.
 */
static void every_cpu_has_poe_at_default(struct kunit *test)
{
	struct kpkeys_cpu_regs *regs;
	int cpu;

	require_backend(test);
	regs = kunit_kcalloc(test, nr_cpu_ids, sizeof(*regs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, regs);
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, read_cpu_regs, &regs[cpu]);
	for_each_online_cpu(cpu) {
		KUNIT_EXPECT_EQ_MSG(test, regs[cpu].reg, TEST_POR_EL1_DEFAULT,
				    "CPU %d", cpu);
		KUNIT_EXPECT_TRUE_MSG(test, regs[cpu].tcr2 & BIT(3),
				      "CPU %d: TCR2_EL1.POE is clear", cpu);
	}
}

static struct kunit_case kpkeys_arm64_cases[] = {
	KUNIT_CASE(por_el1_holds_each_context),
	KUNIT_CASE(every_cpu_has_poe_at_default),
	KUNIT_CASE(unmanaged_fields_survive_a_switch),
	KUNIT_CASE(pgtable_page_has_poindex_7),
	KUNIT_CASE(image_pgtables_keyed_in_image_alias),
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
