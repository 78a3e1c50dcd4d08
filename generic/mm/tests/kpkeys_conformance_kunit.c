// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys_conformance: what every kpkeys backend must do, checked on the
 * hardware (the pkey register read back with RDMSR, MRS or mfspr, the key
 * in the kernel PTE or HPTE, a store that faults), one case per part of
 * the arch contract of <asm-generic/kpkeys.h>.  It is the first suite a
 * porter runs: each case starts with a "hook:" line naming the arch hook,
 * or the generic code built on it, that a failure points at.
 *
 * Cases that need the pkey register skip only where no backend is in use
 * (no hardware, or a boot parameter turned it off), those that need a
 * write to fault only where the backend does not enforce keys (a mock),
 * and those that need hardened page tables or batching where the boot
 * turned them off, each saying why.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kpkeys.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/set_memory.h>
#include <linux/uaccess.h>

KPKEYS_GUARD(kpkeys_conf_pgtables, KPKEYS_LVL_PGTABLES);

#define CONF_WRITES	16

static void conf_hook(struct kunit *test, const char *hook)
{
	kunit_info(test, "hook: %s\n", hook);
}

static void require_register(struct kunit *test)
{
	if (!arch_kpkeys_enabled())
		kunit_skip(test,
			   "no kpkeys backend in use (see the kpkeys lines of the boot log)");
}

/* This CPU's count of register writes by the level API, 0 without stats. */
static unsigned long conf_reg_writes(void)
{
#ifdef CONFIG_KPKEYS_STATS
	return this_cpu_read(kpkeys_stats[KPKEYS_STAT_REG_WRITES]);
#else
	return 0;
#endif
}

/* The managed bits of the register itself, not a cached copy. */
static u64 hw_managed(void)
{
	return arch_kpkeys_read_pkey_reg_hw() & KPKEYS_PKEY_REG_MASK;
}

/*
 * A level's encoding lies inside KPKEYS_PKEY_REG_MASK, the two levels
 * differ, and each one is what the register holds once it is set; a
 * restore puts back the whole register as it was.
 */
static void level_encoding_round_trips(struct kunit *test)
{
	u64 def = arch_kpkeys_level_pkey_reg(KPKEYS_LVL_DEFAULT);
	u64 pgt = arch_kpkeys_level_pkey_reg(KPKEYS_LVL_PGTABLES);
	struct kpkeys_saved saved;
	u64 before, at, after;

	conf_hook(test, "arch_kpkeys_level_pkey_reg(), _write_pkey_reg(), _read_pkey_reg_hw()");
	KUNIT_EXPECT_EQ(test, def & ~KPKEYS_PKEY_REG_MASK, 0);
	KUNIT_EXPECT_EQ(test, pgt & ~KPKEYS_PKEY_REG_MASK, 0);
	KUNIT_EXPECT_NE(test, def, pgt);
	KUNIT_EXPECT_FALSE(test, kpkeys_managed_valid(KPKEYS_PKEY_REG_INVAL));
	require_register(test);

	before = arch_kpkeys_read_pkey_reg_hw();
	saved = kpkeys_set_level(KPKEYS_LVL_PGTABLES);
	at = hw_managed();
	kpkeys_restore_pkey_reg(saved);
	after = arch_kpkeys_read_pkey_reg_hw();

	KUNIT_EXPECT_EQ_MSG(test, before & KPKEYS_PKEY_REG_MASK, def,
			    "not at the default level to start with (register %#llx)", before);
	KUNIT_EXPECT_EQ_MSG(test, at, pgt, "the page-table level did not reach the register");
	KUNIT_EXPECT_EQ_MSG(test, after, before, "the restore did not put the register back");
	KUNIT_EXPECT_EQ(test, (u64)arch_kpkeys_read_pkey_reg(), after);
}

/*
 * Setting the level the register already holds changes nothing: no
 * register write, and a saved state whose restore writes nothing either.
 */
static void unchanged_level_writes_nothing(struct kunit *test)
{
	struct kpkeys_saved saved;
	unsigned long writes, flags;
	u64 before, after;

	conf_hook(test,
		  "kpkeys_set_level(), kpkeys_restore_pkey_reg(): the \"nothing changed\" path");
	require_register(test);

	/* Interrupts off: no handler's own switch lands in the count. */
	local_irq_save(flags);
	before = arch_kpkeys_read_pkey_reg_hw();
	writes = conf_reg_writes();
	saved = kpkeys_set_level(KPKEYS_LVL_DEFAULT);
	kpkeys_restore_pkey_reg(saved);
	writes = conf_reg_writes() - writes;
	after = arch_kpkeys_read_pkey_reg_hw();
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ(test, after, before);

	KUNIT_EXPECT_EQ(test, saved.reg, KPKEYS_PKEY_REG_INVAL);
	KUNIT_EXPECT_EQ_MSG(test, writes, 0, "register writes for no change of level");
	if (!IS_ENABLED(CONFIG_KPKEYS_STATS))
		kunit_info(test, "CONFIG_KPKEYS_STATS=n: register writes not counted\n");
}

/*
 * The unmanaged bits of the register, with a pattern kpkeys never writes
 * (from the architecture, not from the backend): the write-disable bits
 * of PKS keys 2-15; POR_EL1 field 3 (a user POIndex) as RW; the AMR pair
 * of key 1, which Linux reserves and no page carries, cleared.  False
 * where no pattern is known; *@planted == @reg where it changes nothing.
 */
static bool unmanaged_pattern(u64 reg, u64 *planted)
{
#if defined(CONFIG_X86)
	*planted = reg | 0xaaaaaaa0ULL;
#elif defined(CONFIG_ARM64)
	*planted = (reg & ~0xf000ULL) | 0x5000ULL;
#elif defined(CONFIG_PPC64)
	*planted = reg & ~0x3000000000000000ULL;
#else
	return false;
#endif
	return !((*planted ^ reg) & KPKEYS_PKEY_REG_MASK);
}

/*
 * A switch to each level and back changes the managed bits only: bits
 * that belong to another user of the register (KUAP in the AMR, other
 * PKS keys, user POIndexes) survive it, however they are set.
 */
static void unmanaged_bits_survive_a_switch(struct kunit *test)
{
	struct kpkeys_saved saved;
	u64 orig, planted = 0, at = 0, back = 0;
	unsigned long flags;
	bool known;

	conf_hook(test, "arch_kpkeys_write_pkey_reg() through kpkeys_switch_managed()");
	require_register(test);

	local_irq_save(flags);
	orig = arch_kpkeys_read_pkey_reg_hw();
	known = unmanaged_pattern(orig, &planted);
	if (known && planted != orig) {
		arch_kpkeys_write_pkey_reg(planted);
		saved = kpkeys_set_level(KPKEYS_LVL_PGTABLES);
		at = arch_kpkeys_read_pkey_reg_hw();
		kpkeys_restore_pkey_reg(saved);
		back = arch_kpkeys_read_pkey_reg_hw();
		arch_kpkeys_write_pkey_reg(orig);
	}
	local_irq_restore(flags);

	if (!known)
		kunit_skip(test,
			   "no unmanaged-bit pattern for this arch: add one to unmanaged_pattern()");
	if (planted == orig)
		kunit_skip(test, "the register holds the pattern already (%#llx)",
			   orig);
	KUNIT_EXPECT_EQ_MSG(test, at & ~KPKEYS_PKEY_REG_MASK, planted & ~KPKEYS_PKEY_REG_MASK,
			    "at the page-table level (register %#llx, planted %#llx)", at, planted);
	KUNIT_EXPECT_EQ(test, at & KPKEYS_PKEY_REG_MASK,
			arch_kpkeys_level_pkey_reg(KPKEYS_LVL_PGTABLES));
	KUNIT_EXPECT_EQ_MSG(test, back, planted, "after the restore");
	KUNIT_EXPECT_EQ(test, (u64)arch_kpkeys_read_pkey_reg_hw(), orig);
}

/*
 * A page-table page carries the page-table key in the kernel PTE (or
 * HPTE) that maps it, an ordinary page the default key; a store into the
 * page-table page faults at the default level and succeeds at the
 * page-table level.
 */
static void pgtable_page_keyed_and_enforced(struct kunit *test)
{
	struct ptdesc *ptdesc;
	unsigned long plain, zero = 0;
	int key, plain_key, at_default, at_level, read;
	void *table;

	conf_hook(test, "set_memory_pkey(), kernel_page_pkey(), the arch's kernel fault fixup");
	require_register(test);
	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test, "hardened page tables are off (see the boot log)");

	ptdesc = pagetable_alloc(GFP_KERNEL, 0);
	KUNIT_ASSERT_NOT_NULL(test, ptdesc);
	table = ptdesc_address(ptdesc);
	plain = __get_free_page(GFP_KERNEL);
	key = kernel_page_pkey((unsigned long)table);
	plain_key = plain ? kernel_page_pkey(plain) : -ENOMEM;
	read = copy_from_kernel_nofault(&zero, table, sizeof(zero));
	at_default = copy_to_kernel_nofault(table, &zero, sizeof(zero));
	scoped_guard(kpkeys_conf_pgtables)
		at_level = copy_to_kernel_nofault(table, &zero, sizeof(zero));
	pagetable_free(ptdesc);
	free_page(plain);

	KUNIT_EXPECT_EQ_MSG(test, key, KPKEYS_PKEY_PGTABLES, "the key of a page-table page");
	KUNIT_EXPECT_EQ_MSG(test, plain_key, KPKEYS_PKEY_DEFAULT, "the key of an ordinary page");
	KUNIT_EXPECT_EQ_MSG(test, read, 0, "a load at the default level faulted");
	KUNIT_EXPECT_EQ_MSG(test, at_level, 0, "a store at the page-table level faulted");
	if (arch_kpkeys_enforced())
		KUNIT_EXPECT_EQ_MSG(test, at_default, -EFAULT,
				    "a store at the default level did not fault");
	else
		kunit_info(test, "this backend does not enforce keys: the default-level store is not judged\n");
}

struct conf_irq_probe {
	struct hrtimer timer;
	struct task_struct *task;
	u64 reg;
	bool fired;
};

static enum hrtimer_restart conf_irq_probe_fn(struct hrtimer *timer)
{
	struct conf_irq_probe *probe = container_of(timer, struct conf_irq_probe, timer);

	probe->reg = hw_managed();
	probe->task = current;
	/* Publish reg and task before the flag the test polls. */
	smp_store_release(&probe->fired, true);
	return HRTIMER_NORESTART;
}

/*
 * An interrupt taken at the page-table level runs at the default level,
 * and the interrupted code gets its level back.
 */
static void interrupt_runs_at_default(struct kunit *test)
{
	struct conf_irq_probe probe = {};
	unsigned long timeout = jiffies + 5 * HZ;
	u64 after = 0;

	conf_hook(test,
		  "kpkeys_irqentry_enter(), kpkeys_irqentry_exit() (and the arch's entry code)");
	require_register(test);

	hrtimer_setup_on_stack(&probe.timer, conf_irq_probe_fn, CLOCK_MONOTONIC,
			       HRTIMER_MODE_REL_PINNED_HARD);
	/* Preemption off: the interrupt must hit this task, in this section. */
	preempt_disable();
	scoped_guard(kpkeys_conf_pgtables) {
		hrtimer_start(&probe.timer, us_to_ktime(100), HRTIMER_MODE_REL_PINNED_HARD);
		/* Busy-wait, so that the interrupt hits this section; pairs with the handler. */
		while (!smp_load_acquire(&probe.fired) && time_before(jiffies, timeout))
			cpu_relax();
		after = hw_managed();
	}
	preempt_enable();
	hrtimer_cancel(&probe.timer);
	destroy_hrtimer_on_stack(&probe.timer);

	KUNIT_ASSERT_TRUE_MSG(test, probe.fired, "the timer interrupt never came");
	KUNIT_EXPECT_PTR_EQ_MSG(test, probe.task, current,
				"the interrupt hit another task, not the section");
	KUNIT_EXPECT_EQ_MSG(test, probe.reg, arch_kpkeys_level_pkey_reg(KPKEYS_LVL_DEFAULT),
			    "the interrupt handler ran at another level");
	KUNIT_EXPECT_EQ_MSG(test, after, arch_kpkeys_level_pkey_reg(KPKEYS_LVL_PGTABLES),
			    "the interrupted code lost its level");
}

struct conf_task_probe {
	struct completion done;
	u64 reg;
};

static int conf_task_probe_fn(void *data)
{
	struct conf_task_probe *probe = data;

	probe->reg = hw_managed();
	complete(&probe->done);
	return 0;
}

/*
 * A task that sleeps at the page-table level wakes up at it, and the task
 * that runs on its CPU meanwhile runs at the default level.
 */
static void sleeping_task_keeps_its_level(struct kunit *test)
{
	struct conf_task_probe probe = {};
	struct task_struct *task;
	u64 after = 0;

	conf_hook(test, "kpkeys_sched_switch()");
	require_register(test);

	init_completion(&probe.done);
	task = kthread_create(conf_task_probe_fn, &probe, "kpkeys_conf");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	migrate_disable();
	kthread_bind(task, smp_processor_id());
	scoped_guard(kpkeys_conf_pgtables) {
		wake_up_process(task);
		wait_for_completion(&probe.done);
		usleep_range(1000, 2000);
		after = hw_managed();
	}
	migrate_enable();

	KUNIT_EXPECT_EQ_MSG(test, after, arch_kpkeys_level_pkey_reg(KPKEYS_LVL_PGTABLES),
			    "the sleeper woke up at another level");
	KUNIT_EXPECT_EQ_MSG(test, probe.reg, arch_kpkeys_level_pkey_reg(KPKEYS_LVL_DEFAULT),
			    "the task that ran meanwhile got the sleeper's level");
	KUNIT_EXPECT_EQ(test, hw_managed(), arch_kpkeys_level_pkey_reg(KPKEYS_LVL_DEFAULT));
}

/* One page-table guard, as a writer takes it. */
static void conf_one_guard(void)
{
	guard(kpkeys_hardened_pgtables)();
}

/*
 * In a lazy MMU section, N page-table guards cost one switch pair: two
 * register writes, where the same guards outside a section cost 2N.
 */
static void batching_collapses_writes(struct kunit *test)
{
	unsigned long in_section, outside, flags;
	u64 inside = 0;
	int i;

	conf_hook(test,
		  "kpkeys_lazy_mmu_enter(), kpkeys_lazy_mmu_leave() (lazy_mmu_mode_enable())");
	require_register(test);
	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test, "hardened page tables are off (see the boot log)");
	if (!static_branch_unlikely(&kpkeys_pgtables_batching_key))
		kunit_skip(test, IS_ENABLED(CONFIG_ARCH_HAS_LAZY_MMU_MODE) ?
			   "batching is off (kpkeys_hardened_pgtables=nobatch)" :
			   "this architecture has no lazy MMU mode to batch in");
	if (!IS_ENABLED(CONFIG_KPKEYS_STATS))
		kunit_skip(test, "CONFIG_KPKEYS_STATS=n: register writes are not counted");

	/* Interrupts off: no handler's own switch lands in the counts. */
	local_irq_save(flags);
	outside = conf_reg_writes();
	for (i = 0; i < CONF_WRITES; i++)
		conf_one_guard();
	outside = conf_reg_writes() - outside;
	in_section = conf_reg_writes();
	lazy_mmu_mode_enable();
	for (i = 0; i < CONF_WRITES; i++)
		conf_one_guard();
	/* The section is still at the page-table level for its next write. */
	inside = hw_managed();
	lazy_mmu_mode_disable();
	in_section = conf_reg_writes() - in_section;
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ(test, outside, 2 * CONF_WRITES);
	KUNIT_EXPECT_EQ_MSG(test, in_section, 2, "register writes for %d guards in one section",
			    CONF_WRITES);
	KUNIT_EXPECT_EQ_MSG(test, inside, arch_kpkeys_level_pkey_reg(KPKEYS_LVL_PGTABLES),
			    "the section left the page-table level before its end");
	KUNIT_EXPECT_EQ(test, hw_managed(), arch_kpkeys_level_pkey_reg(KPKEYS_LVL_DEFAULT));
}

static struct kunit_case kpkeys_conformance_cases[] = {
	KUNIT_CASE(level_encoding_round_trips),
	KUNIT_CASE(unchanged_level_writes_nothing),
	KUNIT_CASE(unmanaged_bits_survive_a_switch),
	KUNIT_CASE(pgtable_page_keyed_and_enforced),
	KUNIT_CASE(interrupt_runs_at_default),
	KUNIT_CASE(sleeping_task_keeps_its_level),
	KUNIT_CASE(batching_collapses_writes),
	{}
};

static struct kunit_suite kpkeys_conformance_suite = {
	.name = "kpkeys_conformance",
	.test_cases = kpkeys_conformance_cases,
};

kunit_test_suite(kpkeys_conformance_suite);

MODULE_DESCRIPTION("kpkeys conformance: what every backend must do, on the hardware");
MODULE_LICENSE("GPL");
