// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the x86 kpkeys backend (PKS): IA32_PKRS read with RDMSR
 * against values written down here from the SDM (key k: AD at bit 2k, WD
 * at bit 2k + 1), not from the macros the backend uses, and against the
 * per-CPU copy the backend reads instead of the MSR.
 */
#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/kpkeys.h>
#include <linux/kpkeys_check.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/irq_vectors.h>
#include <asm/msr.h>
#include <asm/nmi.h>

/* PKRS bits 3:0: keys 0 (every kernel page) and 1 (page tables). */
#define TEST_PKRS_MASK		0xfULL
#define TEST_PKRS_DEFAULT	0x8ULL	/* key 1 WD */
#define TEST_PKRS_PGTABLES	0x0ULL

static void require_pks(struct kunit *test)
{
	if (!kpkeys_supported())
		kunit_skip(test,
			   "PKS is not in use: no CPU support, nopks, or kpkeys_hardened_pgtables=off");
}

static u64 pkrs_msr(void)
{
	return native_rdmsrq(MSR_IA32_PKRS);
}

static u64 pkrs_copy(void)
{
	return this_cpu_read(kpkeys_pkrs);
}

/* The MSR and its copy back to the default context, whatever they say. */
static void kpkeys_test_switch_default(void)
{
	u64 reg = (pkrs_msr() & ~TEST_PKRS_MASK) | TEST_PKRS_DEFAULT;

	this_cpu_write(kpkeys_pkrs, reg);
	native_wrmsrq(MSR_IA32_PKRS, reg);
}

/* Each context is one PKRS value, in the MSR and in its copy alike. */
static void pkrs_holds_each_context(struct kunit *test)
{
	struct kpkeys_state state;
	unsigned long flags;
	u64 def, def_copy, pgt, pgt_copy;

	require_pks(test);
	local_irq_save(flags);
	def = pkrs_msr();
	def_copy = pkrs_copy();
	state = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	pgt = pkrs_msr();
	pgt_copy = pkrs_copy();
	kpkeys_leave_context(&state);
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ(test, def & TEST_PKRS_MASK, TEST_PKRS_DEFAULT);
	KUNIT_EXPECT_EQ(test, pgt & TEST_PKRS_MASK, TEST_PKRS_PGTABLES);
	KUNIT_EXPECT_EQ(test, pgt & ~TEST_PKRS_MASK, def & ~TEST_PKRS_MASK);
	KUNIT_EXPECT_EQ_MSG(test, def_copy, def, "the PKRS copy disagrees with the MSR");
	KUNIT_EXPECT_EQ_MSG(test, pgt_copy, pgt, "the PKRS copy disagrees with the MSR");
	KUNIT_EXPECT_EQ(test, pkrs_msr(), def);
}

/*
 * Where kpkeys does not use PKS (no PKS, nopks,
 * kpkeys_hardened_pgtables=off), nothing switches IA32_PKRS: not
 * exception entry, not the scheduler, not before the boot CPU decided.
 * The MSR cannot show it (an entry's switch is undone by its exit, and a
 * kernel started by kexec finds whatever the previous one left), so the
 * register-write statistics, counting from boot, do.
 */
static void pkrs_untouched_when_pks_is_off(struct kunit *test)
{
	unsigned long writes;

	if (kpkeys_supported())
		kunit_skip(test, "PKS is in use");
	if (!IS_ENABLED(CONFIG_KPKEYS_STATS_DEFAULT_ON) || !kpkeys_stats_enabled())
		kunit_skip(test,
			   "the kpkeys statistics do not count from boot (needs CONFIG_KPKEYS_STATS_DEFAULT_ON, not kpkeys_stats=off)");
	writes = kpkeys_stat_read(KPKEYS_STAT_REG_WRITES) +
		 kpkeys_stat_read(KPKEYS_STAT_ENTRY_REG_WRITES) +
		 kpkeys_stat_read(KPKEYS_STAT_SCHED_REG_WRITES);
	KUNIT_EXPECT_EQ_MSG(test, writes, 0UL,
			    "kpkeys switched IA32_PKRS %lu times since boot, though PKS is not in use",
			    writes);
}

static struct {
	bool armed;
	bool ran;
	u64 msr;
} nmi_probe;

static int kpkeys_test_nmi(unsigned int cmd, struct pt_regs *regs)
{
	if (!READ_ONCE(nmi_probe.armed))
		return NMI_DONE;
	nmi_probe.msr = pkrs_msr();
	WRITE_ONCE(nmi_probe.ran, true);
	WRITE_ONCE(nmi_probe.armed, false);
	return NMI_HANDLED;
}

/*
 * An NMI sent to this CPU between the two writes of a switch to @to: the
 * copy already says @to, the MSR still holds what the switch replaces.
 * Interrupts off do not keep the NMI out.  What the MSR held in the
 * handler, and MSR and copy once it returned, are left in *@in, *@msr and
 * *@copy; then the switch's second write is made, as the interrupted
 * switch would make it.
 */
static bool nmi_between_copy_and_msr(struct kunit *test, u64 to,
				     u64 *in, u64 *msr, u64 *copy)
{
	u64 was = pkrs_msr();
	int i;

	memset(&nmi_probe, 0, sizeof(nmi_probe));
	this_cpu_write(kpkeys_pkrs, (was & ~TEST_PKRS_MASK) | to);
	WRITE_ONCE(nmi_probe.armed, true);
	__apic_send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
	for (i = 0; i < 1000 && !READ_ONCE(nmi_probe.ran); i++)
		udelay(10);
	WRITE_ONCE(nmi_probe.armed, false);
	*in = nmi_probe.msr;
	*msr = pkrs_msr();
	*copy = pkrs_copy();
	native_wrmsrq(MSR_IA32_PKRS, (was & ~TEST_PKRS_MASK) | to);
	return READ_ONCE(nmi_probe.ran);
}

static void require_nmi(struct kunit *test)
{
	require_pks(test);
	/* With it off, NMI entry trusts a copy that says "default". */
	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test, "hardened page tables are off");
	if (!apic)
		kunit_skip(test, "no local APIC to send an NMI with");
	KUNIT_ASSERT_EQ(test, register_nmi_handler(NMI_LOCAL, kpkeys_test_nmi, 0,
						   "kpkeys_test"), 0);
}

/*
 * The NMI lands in a leave of the page-table context: the copy says
 * "default", the MSR still opens page tables.  NMI entry must not trust
 * the copy: the handler runs with the default context in the MSR itself,
 * and the interrupted code gets back what the copy says, the default.
 */
static void nmi_in_a_leave_runs_at_default(struct kunit *test)
{
	struct kpkeys_state state;
	unsigned long flags;
	u64 in, msr, copy;
	bool ran;

	require_nmi(test);
	local_irq_save(flags);
	state = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	ran = nmi_between_copy_and_msr(test, TEST_PKRS_DEFAULT, &in, &msr, &copy);
	kpkeys_leave_context(&state);
	local_irq_restore(flags);
	unregister_nmi_handler(NMI_LOCAL, "kpkeys_test");

	KUNIT_ASSERT_TRUE_MSG(test, ran, "the NMI never came");
	KUNIT_EXPECT_EQ_MSG(test, in & TEST_PKRS_MASK, TEST_PKRS_DEFAULT,
			    "the NMI handler ran with the page-table context in IA32_PKRS");
	KUNIT_EXPECT_EQ(test, msr & TEST_PKRS_MASK, TEST_PKRS_DEFAULT);
	KUNIT_EXPECT_EQ(test, copy, msr);
	KUNIT_EXPECT_EQ(test, pkrs_msr() & TEST_PKRS_MASK, TEST_PKRS_DEFAULT);
	KUNIT_EXPECT_EQ(test, pkrs_msr(), pkrs_copy());
}

/*
 * The NMI lands in an entry to the page-table context: the copy says
 * "page tables", the MSR is still at the default.  The handler runs at the
 * default, and the interrupted code gets back what the copy says, page
 * tables: NMI exit restores the copy's bits, not the MSR's.
 */
static void nmi_in_an_enter_restores_the_copy(struct kunit *test)
{
	unsigned long flags;
	u64 in, msr, copy;
	bool ran;

	require_nmi(test);
	local_irq_save(flags);
	ran = nmi_between_copy_and_msr(test, TEST_PKRS_PGTABLES, &in, &msr, &copy);
	/* The entry is done: leave it as a guard would. */
	kpkeys_test_switch_default();
	local_irq_restore(flags);
	unregister_nmi_handler(NMI_LOCAL, "kpkeys_test");

	KUNIT_ASSERT_TRUE_MSG(test, ran, "the NMI never came");
	KUNIT_EXPECT_EQ_MSG(test, in & TEST_PKRS_MASK, TEST_PKRS_DEFAULT,
			    "the NMI handler ran with the page-table context in IA32_PKRS");
	KUNIT_EXPECT_EQ_MSG(test, msr & TEST_PKRS_MASK, TEST_PKRS_PGTABLES,
			    "NMI exit did not restore what the copy said");
	KUNIT_EXPECT_EQ(test, copy, msr);
	KUNIT_EXPECT_EQ(test, pkrs_msr() & TEST_PKRS_MASK, TEST_PKRS_DEFAULT);
	KUNIT_EXPECT_EQ(test, pkrs_msr(), pkrs_copy());
}

static struct kunit_case kpkeys_x86_cases[] = {
	KUNIT_CASE(pkrs_holds_each_context),
	KUNIT_CASE(nmi_in_a_leave_runs_at_default),
	KUNIT_CASE(nmi_in_an_enter_restores_the_copy),
	KUNIT_CASE(pkrs_untouched_when_pks_is_off),
	{}
};

static struct kunit_suite kpkeys_x86_suite = {
	.name = "kpkeys_x86",
	.test_cases = kpkeys_x86_cases,
};

kunit_test_suite(kpkeys_x86_suite);

MODULE_DESCRIPTION("KUnit tests of the x86 kpkeys backend (PKS)");
MODULE_LICENSE("GPL");
