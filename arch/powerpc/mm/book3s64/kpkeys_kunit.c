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
#include <linux/pgalloc.h>
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
 * 8:9) may be loaded from (default context) or loaded and stored (page-table
 * context).
 */
#define TEST_AMR_DEFAULT	0xfcbfffffffffffffULL
#define TEST_AMR_PGTABLES	0xfc3fffffffffffffULL
#define TEST_AMR_KEY4		0x00c0000000000000ULL
#define TEST_AMR_KEY4_WD	0x0080000000000000ULL

static void require_backend(struct kunit *test)
{
	if (!kpkeys_supported())
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

/* Each context is one AMR value, KUAP's bits untouched. */
static void amr_holds_each_context(struct kunit *test)
{
	struct kpkeys_state saved;
	u64 def, pgt, back;

	require_backend(test);
	def = mfspr(SPRN_AMR);
	saved = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	pgt = mfspr(SPRN_AMR);
	kpkeys_leave_context(&saved);
	back = mfspr(SPRN_AMR);

	KUNIT_EXPECT_EQ(test, def, TEST_AMR_DEFAULT);
	KUNIT_EXPECT_EQ(test, pgt, TEST_AMR_PGTABLES);
	KUNIT_EXPECT_EQ(test, back, TEST_AMR_DEFAULT);
}

/*
 * A user access window keeps page tables read-only, and a context switched
 * inside one changes key 4 only: the window survives the switch and its
 * restore.
 */
static void kuap_window_survives_a_switch(struct kunit *test)
{
	struct kpkeys_state saved;
	u64 win, pgt, back;

	require_backend(test);
	/* Read-write: no KUAP value of its own sets key 4's write bit */
	allow_user_access(NULL, KUAP_READ_WRITE);
	win = mfspr(SPRN_AMR);
	saved = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	pgt = mfspr(SPRN_AMR);
	kpkeys_leave_context(&saved);
	back = mfspr(SPRN_AMR);
	prevent_user_access(KUAP_READ_WRITE);

	KUNIT_EXPECT_NE_MSG(test, win, TEST_AMR_DEFAULT,
			    "no user access window was opened");
	KUNIT_EXPECT_EQ_MSG(test, win & TEST_AMR_KEY4, TEST_AMR_KEY4_WD,
			    "window AMR %#llx", win);
	KUNIT_EXPECT_EQ(test, pgt, win & ~TEST_AMR_KEY4);
	KUNIT_EXPECT_EQ(test, back, win);
	KUNIT_EXPECT_EQ(test, (u64)mfspr(SPRN_AMR), TEST_AMR_DEFAULT);
}

/*
 * Every kind of user access window keeps page tables read-only, even for
 * a thread whose AMR would open key 4 (UAMOR keeps user space from doing
 * that, but only where it was programmed): the window's key-4 pair is
 * the current context's, whatever the thread's AMR says.  The thread AMR is
 * faked for the test with a pt_regs of its own, interrupts off.
 */
static void kuap_windows_keep_pgtables_read_only(struct kunit *test)
{
	struct pt_regs *regs = current->thread.regs, fake = {};
	unsigned long flags;
	u64 win[3];

	require_backend(test);
	fake.amr = default_amr & ~TEST_AMR_KEY4;
	/* Nothing, not even a softirq on interrupt exit, sees the fake. */
	local_irq_save(flags);
	current->thread.regs = &fake;
	allow_user_access(NULL, KUAP_READ);
	win[0] = mfspr(SPRN_AMR);
	prevent_user_access(KUAP_READ);
	allow_user_access(NULL, KUAP_WRITE);
	win[1] = mfspr(SPRN_AMR);
	prevent_user_access(KUAP_WRITE);
	allow_user_access(NULL, KUAP_READ_WRITE);
	win[2] = mfspr(SPRN_AMR);
	prevent_user_access(KUAP_READ_WRITE);
	current->thread.regs = regs;
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ_MSG(test, win[0] & TEST_AMR_KEY4, TEST_AMR_KEY4_WD,
			    "read window AMR %#llx", win[0]);
	KUNIT_EXPECT_EQ_MSG(test, win[1] & TEST_AMR_KEY4, TEST_AMR_KEY4_WD,
			    "write window AMR %#llx", win[1]);
	KUNIT_EXPECT_EQ_MSG(test, win[2] & TEST_AMR_KEY4, TEST_AMR_KEY4_WD,
			    "read-write window AMR %#llx", win[2]);
	KUNIT_EXPECT_EQ(test, (u64)mfspr(SPRN_AMR), TEST_AMR_DEFAULT);
}

/*
 * A user access window opened in the page-table context keeps that context,
 * and so does its end, whichever way it ends, and so does a saved window
 * state restored after a switch: a tracepoint or a BPF program that reads
 * user memory (copy_from_user_nofault()) in the middle of a batched lazy
 * MMU section must not leave page tables read-only for the section's next
 * store, nor carry the context past the section's end.  That next store is
 * made, into a keyed page table, with copy_to_kernel_nofault(): it must
 * succeed, and the same store in the default context must fault.
 */
static void kuap_windows_keep_the_context(struct kunit *test)
{
	static const char * const kind[] = { "read", "write", "read-write" };
	struct ptdesc *ptdesc = NULL;
	struct kpkeys_state saved;
	u64 win[3], end[3], ret, rest, back;
	unsigned long flags, zero = 0;
	int i, st_pgt = 0, st_def = 0;

	require_backend(test);
	if (kpkeys_hardened_pgtables_enabled()) {
		ptdesc = pagetable_alloc(GFP_KERNEL, 0);
		KUNIT_ASSERT_NOT_NULL(test, ptdesc);
	}

	flags = prevent_user_access_return();	/* saved in the default context */
	saved = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	restore_user_access(flags);
	rest = mfspr(SPRN_AMR);
	allow_user_access(NULL, KUAP_READ);
	win[0] = mfspr(SPRN_AMR);
	prevent_user_access(KUAP_READ);
	end[0] = mfspr(SPRN_AMR);
	allow_user_access(NULL, KUAP_WRITE);
	win[1] = mfspr(SPRN_AMR);
	prevent_user_access(KUAP_WRITE);
	end[1] = mfspr(SPRN_AMR);
	allow_user_access(NULL, KUAP_READ_WRITE);
	win[2] = mfspr(SPRN_AMR);
	flags = prevent_user_access_return();
	ret = mfspr(SPRN_AMR);
	restore_user_access(flags);
	prevent_user_access(KUAP_READ_WRITE);
	end[2] = mfspr(SPRN_AMR);
	if (ptdesc)
		st_pgt = copy_to_kernel_nofault(ptdesc_address(ptdesc), &zero,
						sizeof(zero));
	kpkeys_leave_context(&saved);
	back = mfspr(SPRN_AMR);
	if (ptdesc) {
		st_def = copy_to_kernel_nofault(ptdesc_address(ptdesc), &zero,
						sizeof(zero));
		pagetable_free(ptdesc);
	}

	KUNIT_EXPECT_EQ_MSG(test, rest, TEST_AMR_PGTABLES,
			    "user_access_restore() of a state saved in the default context");
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ_MSG(test, win[i] & TEST_AMR_KEY4, 0,
				    "%s window in the page-table context: AMR %#llx",
				    kind[i], win[i]);
		KUNIT_EXPECT_EQ_MSG(test, end[i], TEST_AMR_PGTABLES,
				    "after a %s window", kind[i]);
	}
	KUNIT_EXPECT_EQ_MSG(test, ret, TEST_AMR_PGTABLES,
			    "user_access_save() in the page-table context");
	KUNIT_EXPECT_EQ(test, back, TEST_AMR_DEFAULT);
	if (ptdesc) {
		KUNIT_EXPECT_EQ_MSG(test, st_pgt, 0,
				    "page-table store after the windows faulted");
		KUNIT_EXPECT_EQ_MSG(test, st_def, -EFAULT,
				    "page-table store in the default context did not fault");
	} else {
		kunit_info(test, "hardened page tables off: no store made\n");
	}
}

/*
 * An access to user memory outside a window is KUAP's to report
 * (__bad_kuap_fault(): "Kernel attempted to ... user page"), in either
 * context; one inside a window of its kind is not.  The AMR values are the
 * ones the CPU held, read with mfspr.
 */
static void kuap_faults_diagnosed_in_either_context(struct kunit *test)
{
	static const char * const ctx_name[] = { "default", "page-table" };
	struct pt_regs regs = {};
	struct kpkeys_state saved;
	u64 amr[2], rd[2], wr[2];
	int i;

	require_backend(test);
	for (i = 0; i < 2; i++) {
		if (i)
			saved = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
		amr[i] = mfspr(SPRN_AMR);
		allow_user_access(NULL, KUAP_READ);
		rd[i] = mfspr(SPRN_AMR);
		prevent_user_access(KUAP_READ);
		allow_user_access(NULL, KUAP_WRITE);
		wr[i] = mfspr(SPRN_AMR);
		prevent_user_access(KUAP_WRITE);
		if (i)
			kpkeys_leave_context(&saved);
	}

	for (i = 0; i < 2; i++) {
		regs.amr = amr[i];
		KUNIT_EXPECT_TRUE_MSG(test, __bad_kuap_fault(&regs, 0, true),
				      "%s context, no window: store not reported (AMR %#llx)",
				      ctx_name[i], amr[i]);
		KUNIT_EXPECT_TRUE_MSG(test, __bad_kuap_fault(&regs, 0, false),
				      "%s context, no window: load not reported (AMR %#llx)",
				      ctx_name[i], amr[i]);
		regs.amr = rd[i];
		KUNIT_EXPECT_TRUE_MSG(test, __bad_kuap_fault(&regs, 0, true),
				      "%s context, read window: store not reported (AMR %#llx)",
				      ctx_name[i], rd[i]);
		KUNIT_EXPECT_FALSE_MSG(test, __bad_kuap_fault(&regs, 0, false),
				       "%s context, read window: load reported (AMR %#llx)",
				       ctx_name[i], rd[i]);
		regs.amr = wr[i];
		KUNIT_EXPECT_FALSE_MSG(test, __bad_kuap_fault(&regs, 0, true),
				       "%s context, write window: store reported (AMR %#llx)",
				       ctx_name[i], wr[i]);
		KUNIT_EXPECT_TRUE_MSG(test, __bad_kuap_fault(&regs, 0, false),
				      "%s context, write window: load not reported (AMR %#llx)",
				      ctx_name[i], wr[i]);
		/* What decides user_access_restore()'s uaccess flush */
		KUNIT_EXPECT_TRUE_MSG(test, kuap_amr_blocked(amr[i]),
				      "%s context: AMR %#llx not taken as blocked",
				      ctx_name[i], amr[i]);
		KUNIT_EXPECT_FALSE(test, kuap_amr_blocked(rd[i]));
		KUNIT_EXPECT_FALSE(test, kuap_amr_blocked(wr[i]));
	}
}

/*
 * The PGD and PUD tables that fill a page come from pagetable_alloc()
 * and are constructed like the others (PG_table, NR_PAGETABLE): the
 * radix PGD, and with 4K pages the hash PGD and the PUD.
 */
static void pgd_and_pud_pages_are_constructed(struct kunit *test)
{
	struct mm_struct *mm;
	bool checked = false;
	pud_t *pud;

	if (!IS_ENABLED(CONFIG_KPKEYS_HARDENED_PGTABLES))
		kunit_skip(test, "hardened page tables not built: PGDs from kmem caches");
	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	if (radix_enabled() || pgtable_cache_is_page(PGD_INDEX_SIZE)) {
		KUNIT_EXPECT_TRUE_MSG(test, PageTable(virt_to_page(mm->pgd)),
				      "the PGD page of a new mm is not a page table");
		checked = true;
	}
	if (pgtable_cache_is_page(PUD_CACHE_INDEX)) {
		pud = pud_alloc_one(mm, 0);
		KUNIT_EXPECT_NOT_NULL(test, pud);
		if (pud) {
			KUNIT_EXPECT_TRUE_MSG(test, PageTable(virt_to_page(pud)),
					      "a PUD page is not a page table");
			pud_free(mm, pud);
		}
		checked = true;
	}
	mmput(mm);
	if (!checked)
		kunit_skip(test, "PGD and PUD tables smaller than a page (64K pages)");
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

struct cpu_sprs {
	u64 amr, uamor;
};

static long read_sprs(void *arg)
{
	struct cpu_sprs *sprs = arg;

	sprs->amr = mfspr(SPRN_AMR);
	sprs->uamor = mfspr(SPRN_UAMOR);
	return 0;
}

/*
 * Every online CPU runs its tasks in the default context, and its UAMOR
 * keeps key 4 from user space.  Read in task context (a kworker bound to
 * the CPU), not in an IPI: entry resets the AMR whatever the CPU's tasks
 * run with.
 */
static void every_cpu_at_default(struct kunit *test)
{
	struct cpu_sprs *sprs;
	int cpu;

	require_backend(test);
	sprs = kunit_kcalloc(test, nr_cpu_ids, sizeof(*sprs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sprs);
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, read_sprs, &sprs[cpu]);
	for_each_online_cpu(cpu) {
		KUNIT_EXPECT_EQ_MSG(test, sprs[cpu].amr, TEST_AMR_DEFAULT, "CPU %d", cpu);
		KUNIT_EXPECT_EQ_MSG(test, sprs[cpu].uamor & TEST_AMR_KEY4, 0,
				    "CPU %d: UAMOR %#llx lets user space change key 4",
				    cpu, sprs[cpu].uamor);
	}
}

static struct kunit_case kpkeys_powerpc_cases[] = {
	KUNIT_CASE(amr_holds_each_context),
	KUNIT_CASE(kuap_window_survives_a_switch),
	KUNIT_CASE(kuap_windows_keep_pgtables_read_only),
	KUNIT_CASE(kuap_windows_keep_the_context),
	KUNIT_CASE(kuap_faults_diagnosed_in_either_context),
	KUNIT_CASE(pgd_and_pud_pages_are_constructed),
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
