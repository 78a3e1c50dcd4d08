// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the powerpc kpkeys backend: what the hardware holds, read
 * with mfspr and from the hashed page table, against values written down
 * here from the architecture (Power ISA 3.1, AMR: two bits per key, key 0
 * in bits 0:1, IBM numbering, the first disabling stores and the second
 * loads; HPTE storage key: bits 2:3 and 52:54 of the second doubleword),
 * not from the macros the backend uses.
 */
#include <kunit/test.h>
#include <linux/kpkeys.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/pkeys.h>
#include <linux/sched/mm.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <asm/kup.h>
#include <asm/mmu.h>
#include <asm/reg.h>

/*
 * KUAP's blocked AMR: every key but 3 denied, except that key 4 (IBM bits
 * 8:9) may be loaded from (default level) or loaded and stored (page-table
 * level).
 */
#define TEST_AMR_DEFAULT	0xfcbfffffffffffffULL
#define TEST_AMR_PGTABLES	0xfc3fffffffffffffULL
#define TEST_AMR_KEY4		0x00c0000000000000ULL
#define TEST_AMR_KEY4_WD	0x0080000000000000ULL

static void require_backend(struct kunit *test)
{
	if (!arch_kpkeys_enabled())
		kunit_skip(test, "kpkeys unavailable: see the boot log");
}

/* The storage key of a bolted linear-map HPTE, decoded here. */
static int hpte_key(struct kunit *test, unsigned long addr)
{
	long r = mmu_hash_ops.hpte_bolted_key ?
		 mmu_hash_ops.hpte_bolted_key(addr, mmu_linear_psize,
					      mmu_kernel_ssize) : -EOPNOTSUPP;

	KUNIT_ASSERT_GE_MSG(test, r, 0, "no bolted HPTE for %#lx", addr);
	/* KEY_LO: bits 11:9 (IBM 52:54) are key bits 2:0; KEY_HI: 61:60. */
	return ((r >> 9) & 0x7) | (((r >> 60) & 0x3) << 3);
}

/* Each level is one AMR value, KUAP's bits untouched. */
static void amr_holds_each_level(struct kunit *test)
{
	struct kpkeys_saved saved;
	u64 def, pgt, back;

	require_backend(test);
	def = mfspr(SPRN_AMR);
	saved = kpkeys_set_level(KPKEYS_LVL_PGTABLES);
	pgt = mfspr(SPRN_AMR);
	kpkeys_restore_pkey_reg(saved);
	back = mfspr(SPRN_AMR);

	KUNIT_EXPECT_EQ(test, def, TEST_AMR_DEFAULT);
	KUNIT_EXPECT_EQ(test, pgt, TEST_AMR_PGTABLES);
	KUNIT_EXPECT_EQ(test, back, TEST_AMR_DEFAULT);
}

/*
 * A user access window keeps page tables read-only, and a level switched
 * inside one changes key 4 only: the window survives the switch and its
 * restore.
 */
static void kuap_window_survives_a_switch(struct kunit *test)
{
	struct kpkeys_saved saved;
	u64 win, pgt, back;

	require_backend(test);
	allow_user_access(NULL, KUAP_READ);
	win = mfspr(SPRN_AMR);
	saved = kpkeys_set_level(KPKEYS_LVL_PGTABLES);
	pgt = mfspr(SPRN_AMR);
	kpkeys_restore_pkey_reg(saved);
	back = mfspr(SPRN_AMR);
	prevent_user_access(KUAP_READ);

	KUNIT_EXPECT_NE_MSG(test, win, TEST_AMR_DEFAULT,
			    "no user access window was opened");
	KUNIT_EXPECT_EQ_MSG(test, win & TEST_AMR_KEY4, TEST_AMR_KEY4_WD,
			    "window AMR %#llx", win);
	KUNIT_EXPECT_EQ(test, pgt, win & ~TEST_AMR_KEY4);
	KUNIT_EXPECT_EQ(test, back, win);
	KUNIT_EXPECT_EQ(test, (u64)mfspr(SPRN_AMR), TEST_AMR_DEFAULT);
}

/*
 * A page-table page has key 4 in its bolted linear-map HPTE while in use,
 * an ordinary kernel page key 3 (KUAP's kernel key).
 */
static void pgtable_page_has_key_4(struct kunit *test)
{
	struct ptdesc *ptdesc;
	unsigned long plain;
	int key;

	require_backend(test);
	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test, "hardened page tables are off (see the boot log)");

	ptdesc = pagetable_alloc(GFP_KERNEL, 0);
	KUNIT_ASSERT_NOT_NULL(test, ptdesc);
	key = hpte_key(test, (unsigned long)ptdesc_address(ptdesc));
	pagetable_free(ptdesc);
	KUNIT_EXPECT_EQ(test, key, 4);

	plain = __get_free_page(GFP_KERNEL);
	KUNIT_ASSERT_NE(test, plain, 0);
	key = hpte_key(test, plain);
	free_page(plain);
	KUNIT_EXPECT_EQ(test, key, 3);
}

/*
 * Key 4 is not user space's: pkey_alloc() never hands it out, UAMOR does
 * not let user space change its AMR bits, and the AMR a task starts with
 * keeps page tables read-only in every user access window.
 */
static void user_cannot_get_key_4(struct kunit *test)
{
	struct mm_struct *mm = mm_alloc();
	int pkey, got = 0;

	require_backend(test);
	KUNIT_ASSERT_NOT_NULL(test, mm);
	while ((pkey = mm_pkey_alloc(mm)) >= 0) {
		KUNIT_EXPECT_NE(test, pkey, 4);
		got++;
	}
	mmput(mm);
	kunit_info(test, "%d pkeys allocated before running out\n", got);
	KUNIT_EXPECT_EQ(test, (u64)mfspr(SPRN_UAMOR) & TEST_AMR_KEY4, 0);
	KUNIT_EXPECT_EQ(test, default_amr & TEST_AMR_KEY4, TEST_AMR_KEY4_WD);
}

static long read_amr(void *arg)
{
	*(u64 *)arg = mfspr(SPRN_AMR);
	return 0;
}

/*
 * Every online CPU runs its tasks at the default level.  Read in task
 * context (a kworker bound to the CPU), not in an IPI: entry resets the
 * AMR whatever the CPU's tasks run with.
 */
static void every_cpu_at_default(struct kunit *test)
{
	u64 *amr;
	int cpu;

	require_backend(test);
	amr = kunit_kcalloc(test, nr_cpu_ids, sizeof(*amr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, amr);
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, read_amr, &amr[cpu]);
	for_each_online_cpu(cpu)
		KUNIT_EXPECT_EQ_MSG(test, amr[cpu], TEST_AMR_DEFAULT, "CPU %d", cpu);
}

static struct kunit_case kpkeys_powerpc_cases[] = {
	KUNIT_CASE(amr_holds_each_level),
	KUNIT_CASE(kuap_window_survives_a_switch),
	KUNIT_CASE(every_cpu_at_default),
	KUNIT_CASE(pgtable_page_has_key_4),
	KUNIT_CASE(user_cannot_get_key_4),
	{}
};

static struct kunit_suite kpkeys_powerpc_suite = {
	.name = "kpkeys_powerpc",
	.test_cases = kpkeys_powerpc_cases,
};

kunit_test_suite(kpkeys_powerpc_suite);

MODULE_DESCRIPTION("KUnit tests of the powerpc kpkeys backend");
MODULE_LICENSE("GPL");
