// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the kpkeys context API: kpkeys_enter_context(),
 * kpkeys_leave_context() and the scoped guards.
 *
 * The context is observed through the pkey register where the hardware is
 * in use, and through the software checker (CONFIG_KPKEYS_CHECK) where it is
 * built; with neither there is nothing to observe and the cases skip.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/kpkeys_check.h>
#include <linux/kpkeys_entry.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/pgtable.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kpkeys_test.h"

MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

static bool kpkeys_test_cond;

KPKEYS_GUARD(kpkeys_test_pgtables, KPKEYS_CTX_PGTABLES);
KPKEYS_GUARD(kpkeys_test_default, KPKEYS_CTX_DEFAULT);
KPKEYS_GUARD_COND(kpkeys_test_pgtables_if, KPKEYS_CTX_PGTABLES,
		  kpkeys_test_cond);

static bool ctx_observable(void)
{
	return IS_ENABLED(CONFIG_KPKEYS_CHECK) || kpkeys_supported();
}

static void require_observable_ctx(struct kunit *test)
{
	if (!ctx_observable())
		kunit_skip(test,
			   "no pkey hardware in use and CONFIG_KPKEYS_CHECK=n: nothing can observe the context");
}

/* Is @ctx the current context, by every means available? */
static void expect_ctx(struct kunit *test, int ctx)
{
#ifdef CONFIG_KPKEYS_CHECK
	KUNIT_EXPECT_EQ(test, kpkeys_check_current_ctx(), ctx);
#endif
	if (kpkeys_supported())
		KUNIT_EXPECT_EQ(test, kpkeys_test_hw_bits(),
				ctx == KPKEYS_CTX_DEFAULT ?
				kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT) :
				kpkeys_test_ctx_bits(KPKEYS_CTX_PGTABLES));
}

/*
 * The managed bits of the pkey register itself (RDMSR, MRS, mfspr; not a
 * cached copy) where the hardware is in use, else "not observable".
 */
static __maybe_unused u64 observed_reg(void)
{
#ifdef CONFIG_ARCH_HAS_KPKEYS
	if (kpkeys_supported())
		return kpkeys_test_hw_bits();
#endif
	return U64_MAX;
}

static __maybe_unused void expect_default_reg(struct kunit *test, u64 reg)
{
#ifdef CONFIG_ARCH_HAS_KPKEYS
	if (kpkeys_supported())
		KUNIT_EXPECT_EQ(test, reg,
				kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT));
#endif
}

static void enter_then_leave_round_trips(struct kunit *test)
{
	struct kpkeys_state saved;

	require_observable_ctx(test);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);

	saved = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	expect_ctx(test, KPKEYS_CTX_PGTABLES);
	if (kpkeys_supported())
		KUNIT_EXPECT_TRUE(test, arch_kpkeys_state_written(saved.arch_state));

	kpkeys_leave_context(&saved);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

static void entering_the_current_context_writes_nothing(struct kunit *test)
{
	struct kpkeys_state saved;

	require_observable_ctx(test);
	saved = kpkeys_enter_context(KPKEYS_CTX_DEFAULT);
	KUNIT_EXPECT_FALSE(test, arch_kpkeys_state_written(saved.arch_state));
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
	kpkeys_leave_context(&saved);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);

	/* The same inside a privileged section. */
	scoped_guard(kpkeys_test_pgtables) {
		saved = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
		KUNIT_EXPECT_FALSE(test, arch_kpkeys_state_written(saved.arch_state));
		kpkeys_leave_context(&saved);
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	}
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

static void nested_guards_restore_each_context(struct kunit *test)
{
	require_observable_ctx(test);
	scoped_guard(kpkeys_test_pgtables) {
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
		scoped_guard(kpkeys_test_default) {
			expect_ctx(test, KPKEYS_CTX_DEFAULT);
			scoped_guard(kpkeys_test_pgtables)
				expect_ctx(test, KPKEYS_CTX_PGTABLES);
			expect_ctx(test, KPKEYS_CTX_DEFAULT);
		}
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	}
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

static int ctx_in_guarded_helper(bool leave_early)
{
	guard(kpkeys_test_pgtables)();

	if (leave_early)
		return 1;
	return 2;
}

static void guard_leaves_context_on_every_scope_exit(struct kunit *test)
{
	require_observable_ctx(test);
	KUNIT_EXPECT_EQ(test, ctx_in_guarded_helper(true), 1);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
	KUNIT_EXPECT_EQ(test, ctx_in_guarded_helper(false), 2);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

static void cond_guard_switches_only_when_asked(struct kunit *test)
{
	require_observable_ctx(test);
	kpkeys_test_cond = false;
	scoped_guard(kpkeys_test_pgtables_if)
		expect_ctx(test, KPKEYS_CTX_DEFAULT);
	kpkeys_test_cond = true;
	scoped_guard(kpkeys_test_pgtables_if)
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

/*
 * Softirqs run from local_bh_enable() borrow the task of whoever enables
 * bottom halves, in whatever kpkeys context that code is: they must run
 * in the default context all the same.
 */
struct kpkeys_softirq_probe {
	struct tasklet_struct tasklet;
	struct task_struct *task;
	u64 reg;
	bool in_softirq;
	bool batched;
	bool ran;
};

static void kpkeys_softirq_probe_fn(struct tasklet_struct *t)
{
	struct kpkeys_softirq_probe *probe =
		container_of(t, struct kpkeys_softirq_probe, tasklet);

	probe->batched = kpkeys_pgtables_batched();
	probe->reg = observed_reg();
	probe->in_softirq = in_serving_softirq();
	probe->task = current;
	probe->ran = true;
}

static void softirq_from_bh_enable_runs_at_default(struct kunit *test)
{
	struct kpkeys_softirq_probe probe = {};

	if (!kpkeys_supported())
		kunit_skip(test,
			   "no pkey hardware in use: the checker already gives softirqs their own default context");

	tasklet_setup(&probe.tasklet, kpkeys_softirq_probe_fn);
	scoped_guard(kpkeys_test_pgtables) {
		local_bh_disable();
		tasklet_schedule(&probe.tasklet);
		/* Runs the tasklet here, in this task's context. */
		local_bh_enable();
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	}
	tasklet_kill(&probe.tasklet);

	KUNIT_ASSERT_TRUE(test, probe.ran);
	KUNIT_ASSERT_PTR_EQ_MSG(test, probe.task, current,
				"the tasklet ran in another task (ksoftirqd?), not from local_bh_enable()");
	kunit_info(test, "the tasklet ran %s\n", probe.in_softirq ?
		   "as a softirq" : "not as a softirq");
	KUNIT_EXPECT_EQ_MSG(test, probe.reg,
			    kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT),
			    "a softirq run from local_bh_enable() ran in the caller's context");
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

#if defined(CONFIG_ARCH_HAS_KPKEYS) && defined(CONFIG_HOTPLUG_CPU)
struct kpkeys_cpu_probe {
	u64 hw, copy;
};

static void kpkeys_cpu_probe_fn(void *arg)
{
	struct kpkeys_cpu_probe *probe = arg;

	probe->hw = observed_reg();
	probe->copy = kpkeys_test_copy_bits();
}

/*
 * A CPU brought up again (x86: cr4_init(), then setup_pks()) runs at the
 * default context, and its register and its copy agree.
 */
static void cpu_comes_up_at_default(struct kunit *test)
{
	struct kpkeys_cpu_probe probe;
	int cpu, ret;

	if (!kpkeys_supported())
		kunit_skip(test, "no pkey hardware in use");
	cpu = cpumask_last(cpu_online_mask);
	if (cpu == 0)
		kunit_skip(test, "one CPU online: none to take down and bring up");
	ret = remove_cpu(cpu);
	if (ret)
		kunit_skip(test, "cannot take CPU %d offline: %d", cpu, ret);
	ret = add_cpu(cpu);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "CPU %d did not come back", cpu);
	ret = smp_call_function_single(cpu, kpkeys_cpu_probe_fn, &probe, 1);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ_MSG(test, probe.hw,
			    kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT),
			    "CPU %d came up in another context", cpu);
	KUNIT_EXPECT_EQ_MSG(test, probe.copy, probe.hw,
			    "CPU %d: the register copy disagrees with the register", cpu);
}
#else
static void cpu_comes_up_at_default(struct kunit *test)
{
	kunit_skip(test, "needs pkey hardware support and CONFIG_HOTPLUG_CPU");
}
#endif

/*
 * Batching: a lazy MMU section switches once for all the writes in it, at
 * the first one, and not at all if it has none.
 */

#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
/*
 * The current task's batching state.  Without a lazy MMU mode there is
 * none (and require_batching() skips every case that uses it).
 */
static struct kpkeys_lazy_mmu *task_lazy(void)
{
#ifdef CONFIG_ARCH_HAS_LAZY_MMU_MODE
	return &current->lazy_mmu_state.kpkeys;
#else
	static struct kpkeys_lazy_mmu unused;

	return &unused;
#endif
}

static void require_batching(struct kunit *test)
{
	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test,
			   "hardened page tables are off (see the kpkeys lines of the boot log)");
	if (!static_branch_unlikely(&kpkeys_pgtables_batching_key))
		kunit_skip(test, IS_ENABLED(CONFIG_ARCH_HAS_LAZY_MMU_MODE) ?
			   "batching is off (kpkeys_hardened_pgtables=nobatch)" :
			   "this architecture has no lazy MMU mode to batch in");
}

/* Skips the case, saying why, when nothing counts. */
static void require_stats(struct kunit *test)
{
	if (!kpkeys_stats_enabled())
		kunit_skip(test, "nothing counts: CONFIG_KPKEYS_STATS=n or kpkeys_stats=off");
}

static unsigned long cpu_stat(enum kpkeys_stat stat)
{
#ifdef CONFIG_KPKEYS_STATS
	return this_cpu_read(kpkeys_stats[stat]);
#else
	return 0;
#endif
}

/*
 * With hardened page tables off, kpkeys' only user, NMI-class entry and
 * exit write no register: the NMI watchdog and perf sampling would pay a
 * register write each, and the benchmark's "off" column would count them.
 */
static void nmi_entry_when_off_writes_nothing(struct kunit *test)
{
	struct kpkeys_irqentry_state state;
	unsigned long flags, writes;

	if (!kpkeys_supported())
		kunit_skip(test, "no pkey hardware in use: no register to write");
	if (kpkeys_hardened_pgtables_enabled())
		kunit_skip(test,
			   "hardened page tables are on: NMI entry forces the default context");
	require_stats(test);

	local_irq_save(flags);
	writes = cpu_stat(KPKEYS_STAT_ENTRY_REG_WRITES);
	kpkeys_irqentry_nmi_enter(&state);
	kpkeys_irqentry_exit(&state);
	writes = cpu_stat(KPKEYS_STAT_ENTRY_REG_WRITES) - writes;
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ(test, writes, 0);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

/* The first page-table write of the current section: it enters the context. */
static void lazy_section_first_write(void)
{
	guard(kpkeys_hardened_pgtables)();
}

#define KPKEYS_TEST_WRITES	16

static void lazy_section_switches_once(struct kunit *test)
{
	unsigned long switches, skipped;
	int i;

	require_batching(test);
	require_stats(test);

	/* This CPU's counters: nothing else may count here meanwhile. */
	preempt_disable();
	switches = cpu_stat(KPKEYS_STAT_PGTABLES_SWITCHES);
	skipped = cpu_stat(KPKEYS_STAT_PGTABLES_SKIPPED);
	lazy_mmu_mode_enable();
	for (i = 0; i < KPKEYS_TEST_WRITES; i++) {
		guard(kpkeys_hardened_pgtables)();
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	}
	lazy_mmu_mode_disable();
	switches = cpu_stat(KPKEYS_STAT_PGTABLES_SWITCHES) - switches;
	skipped = cpu_stat(KPKEYS_STAT_PGTABLES_SKIPPED) - skipped;
	preempt_enable();

	expect_ctx(test, KPKEYS_CTX_DEFAULT);
	/* The first write switches, for the section; the others are batched. */
	KUNIT_EXPECT_EQ(test, switches, 1);
	KUNIT_EXPECT_EQ(test, skipped, KPKEYS_TEST_WRITES - 1);
}

/*
 * Code under local_bh_disable() inside a section runs in the section's
 * task and is batched like the rest of it: its first page-table write
 * makes the section active, with no warning.
 */
static void lazy_section_first_write_with_bh_disabled(struct kunit *test)
{
	bool batched;

	require_batching(test);

	lazy_mmu_mode_enable();
	local_bh_disable();
	scoped_guard(kpkeys_hardened_pgtables)
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	batched = kpkeys_pgtables_batched();
	local_bh_enable();
	lazy_mmu_mode_disable();

	KUNIT_EXPECT_TRUE_MSG(test, batched,
			      "the section's first write with bottom halves off did not batch it");
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

/*
 * A softirq run from local_bh_enable() inside a batched section is not
 * batched: the guard only reads the task's state, and softirq processing
 * clears it (kpkeys_softirq_enter()) as exception entry does.  Its
 * page-table writes then switch for themselves, in the default context
 * the softirq runs at; batched, they would write in the default context.
 */
static void softirq_in_lazy_section_is_not_batched(struct kunit *test)
{
	struct kpkeys_softirq_probe probe = { .batched = true };

	require_batching(test);

	tasklet_setup(&probe.tasklet, kpkeys_softirq_probe_fn);
	migrate_disable();
	lazy_mmu_mode_enable();
	lazy_section_first_write();
	local_bh_disable();
	tasklet_schedule(&probe.tasklet);
	/* Runs the tasklet here, in this task's context. */
	local_bh_enable();
	KUNIT_EXPECT_TRUE(test, kpkeys_pgtables_batched());
	expect_ctx(test, KPKEYS_CTX_PGTABLES);
	lazy_mmu_mode_disable();
	migrate_enable();
	tasklet_kill(&probe.tasklet);

	KUNIT_ASSERT_TRUE(test, probe.ran);
	KUNIT_ASSERT_PTR_EQ_MSG(test, probe.task, current,
				"the tasklet ran in another task (ksoftirqd?), not from local_bh_enable()");
	KUNIT_ASSERT_TRUE_MSG(test, probe.in_softirq,
			      "the tasklet did not run as a softirq");
	KUNIT_EXPECT_FALSE_MSG(test, probe.batched,
			       "a softirq run inside a batched section was batched");
	expect_default_reg(test, probe.reg);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

/*
 * A pending section outside lazy MMU mode (the state is in task_struct,
 * writable memory: one forged byte) must not make the next guard enter
 * the page-table context for a section that never ends: that guard
 * switches and restores for itself, and says so.
 */
static void forged_pending_section_is_not_batched(struct kunit *test)
{
	struct kpkeys_lazy_mmu *lazy = task_lazy();
	bool batching;
	u8 state;

	require_batching(test);
	pr_warn(KPKEYS_TEST_WARNING_EXPECTED "\n");
	preempt_disable();
	lazy->batching = KPKEYS_BATCH_PENDING;
	lazy_section_first_write();
	state = lazy->batching;
	batching = kpkeys_pgtables_batched();
	/* Without the check, undo the section the guard opened. */
	if (state != KPKEYS_BATCH_NONE)
		kpkeys_lazy_mmu_leave(lazy);
	preempt_enable();

	KUNIT_EXPECT_EQ_MSG(test, state, KPKEYS_BATCH_NONE,
			    "the guard took the forged state for a section");
	KUNIT_EXPECT_FALSE(test, batching);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

/*
 * kpkeys_lazy_mmu_enter() writes no register: the section's first write
 * enters the context (__kpkeys_hardened_pgtables_enter()), and a section
 * without one writes nothing.  Before, entering a section switched, and
 * a section with a single write cost more than the write alone.
 */
static void lazy_section_switches_at_first_write(struct kunit *test)
{
	unsigned long switches, writes;

	require_batching(test);
	require_stats(test);

	/*
	 * The switches to the page-table context are counted with or without
	 * pkey hardware; the register writes only with it.
	 */
	preempt_disable();
	switches = cpu_stat(KPKEYS_STAT_PGTABLES_SWITCHES);
	writes = cpu_stat(KPKEYS_STAT_REG_WRITES);
	lazy_mmu_mode_enable();
	KUNIT_EXPECT_FALSE(test, kpkeys_pgtables_batched());
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
	lazy_mmu_mode_disable();
	KUNIT_EXPECT_EQ_MSG(test, cpu_stat(KPKEYS_STAT_PGTABLES_SWITCHES), switches,
			    "a section without page-table writes switched");
	KUNIT_EXPECT_EQ_MSG(test, cpu_stat(KPKEYS_STAT_REG_WRITES), writes,
			    "a section without page-table writes wrote the register");

	lazy_mmu_mode_enable();
	scoped_guard(kpkeys_hardened_pgtables)
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	/* The guard's scope is over; the section keeps the context. */
	KUNIT_EXPECT_TRUE(test, kpkeys_pgtables_batched());
	expect_ctx(test, KPKEYS_CTX_PGTABLES);
	lazy_mmu_mode_disable();
	KUNIT_EXPECT_EQ(test, cpu_stat(KPKEYS_STAT_PGTABLES_SWITCHES) - switches, 1);
	preempt_enable();

	KUNIT_EXPECT_FALSE(test, kpkeys_pgtables_batched());
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

static void lazy_section_nesting_and_pause(struct kunit *test)
{
	require_batching(test);

	preempt_disable();
	lazy_mmu_mode_enable();
	lazy_section_first_write();
	KUNIT_EXPECT_TRUE(test, kpkeys_pgtables_batched());
	expect_ctx(test, KPKEYS_CTX_PGTABLES);

	lazy_mmu_mode_enable();
	lazy_mmu_mode_disable();
	/* A nested disable leaves the outer section batched. */
	KUNIT_EXPECT_TRUE(test, kpkeys_pgtables_batched());
	expect_ctx(test, KPKEYS_CTX_PGTABLES);

	lazy_mmu_mode_pause();
	KUNIT_EXPECT_FALSE(test, kpkeys_pgtables_batched());
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
	scoped_guard(kpkeys_hardened_pgtables)
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	/* Enable and disable while paused change nothing. */
	lazy_mmu_mode_enable();
	KUNIT_EXPECT_FALSE(test, kpkeys_pgtables_batched());
	lazy_mmu_mode_disable();
	lazy_mmu_mode_resume();

	/* Resumed, the section switches again at its next write. */
	KUNIT_EXPECT_FALSE(test, kpkeys_pgtables_batched());
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
	lazy_section_first_write();
	KUNIT_EXPECT_TRUE(test, kpkeys_pgtables_batched());
	expect_ctx(test, KPKEYS_CTX_PGTABLES);
	lazy_mmu_mode_disable();
	preempt_enable();

	KUNIT_EXPECT_FALSE(test, kpkeys_pgtables_batched());
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

struct kpkeys_batch_probe {
	struct hrtimer timer;
	u64 reg;
	bool batched;
	int ctx;
	bool fired;
};

static enum hrtimer_restart kpkeys_batch_probe_fn(struct hrtimer *timer)
{
	struct kpkeys_batch_probe *probe =
		container_of(timer, struct kpkeys_batch_probe, timer);

	probe->batched = kpkeys_pgtables_batched();
	probe->reg = observed_reg();
	scoped_guard(kpkeys_hardened_pgtables) {
#ifdef CONFIG_KPKEYS_CHECK
		probe->ctx = kpkeys_check_current_ctx();
#endif
	}
	/* Publish batched and ctx before the flag the test polls. */
	smp_store_release(&probe->fired, true);
	return HRTIMER_NORESTART;
}

/*
 * A timer interrupt in a lazy section, before its first write (@written
 * false) or after it: the handler is not batched, and its guard enters
 * and leaves the context for itself, without taking over the section.
 */
static void interrupt_in_lazy_section(struct kunit *test, bool written)
{
	struct kpkeys_batch_probe probe = { .batched = true, .ctx = -1 };
	unsigned long timeout = jiffies + 5 * HZ;

	require_batching(test);

	hrtimer_setup_on_stack(&probe.timer, kpkeys_batch_probe_fn,
			       CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	preempt_disable();
	lazy_mmu_mode_enable();
	if (written)
		lazy_section_first_write();
	hrtimer_start(&probe.timer, us_to_ktime(100),
		      HRTIMER_MODE_REL_PINNED_HARD);
	/* Pairs with the release in the timer callback. */
	while (!smp_load_acquire(&probe.fired) && time_before(jiffies, timeout))
		cpu_relax();
	KUNIT_EXPECT_EQ(test, kpkeys_pgtables_batched(), written);
	expect_ctx(test, written ? KPKEYS_CTX_PGTABLES : KPKEYS_CTX_DEFAULT);
	if (!written) {
		/* Still the section's first write. */
		lazy_section_first_write();
		KUNIT_EXPECT_TRUE(test, kpkeys_pgtables_batched());
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	}
	lazy_mmu_mode_disable();
	preempt_enable();
	hrtimer_cancel(&probe.timer);
	destroy_hrtimer_on_stack(&probe.timer);

	KUNIT_ASSERT_TRUE_MSG(test, probe.fired, "timer interrupt never came");
	KUNIT_EXPECT_FALSE(test, probe.batched);
	expect_default_reg(test, probe.reg);
	if (IS_ENABLED(CONFIG_KPKEYS_CHECK))
		KUNIT_EXPECT_EQ(test, probe.ctx, KPKEYS_CTX_PGTABLES);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

static void interrupt_in_lazy_section_is_not_batched(struct kunit *test)
{
	interrupt_in_lazy_section(test, true);
}

static void interrupt_before_first_write_leaves_section_pending(struct kunit *test)
{
	interrupt_in_lazy_section(test, false);
}

struct kpkeys_batch_task {
	struct completion done;
	u64 reg;
	bool batched;
};

static int kpkeys_batch_task_fn(void *data)
{
	struct kpkeys_batch_task *other = data;

	other->batched = kpkeys_pgtables_batched();
	other->reg = observed_reg();
	complete(&other->done);
	return 0;
}

static void sleeping_in_lazy_section_keeps_batching(struct kunit *test)
{
	struct kpkeys_batch_task other = { .batched = true };
	struct task_struct *task;

	require_batching(test);
	if (IS_ENABLED(CONFIG_PPC_BOOK3S_64))
		kunit_skip(test,
			   "powerpc book3s64 lazy MMU sections disable preemption");

	init_completion(&other.done);
	task = kthread_create(kpkeys_batch_task_fn, &other, "kpkeys_batch");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));

	/* Make the other task run on this CPU while this one sleeps. */
	migrate_disable();
	kthread_bind(task, smp_processor_id());
	lazy_mmu_mode_enable();
	lazy_section_first_write();
	wake_up_process(task);
	wait_for_completion(&other.done);
	KUNIT_EXPECT_TRUE(test, kpkeys_pgtables_batched());
	expect_ctx(test, KPKEYS_CTX_PGTABLES);
	lazy_mmu_mode_disable();
	migrate_enable();

	KUNIT_EXPECT_FALSE(test, other.batched);
	expect_default_reg(test, other.reg);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

/*
 * A task that migrates inside a batched section keeps batching on the CPU
 * it moves to, in the page-table context in the register there
 * (kpkeys_sched_switch() on both CPUs), and a task that runs on the CPU it
 * left finds the default context in that CPU's register.
 */
static void migrating_in_lazy_section_keeps_batching(struct kunit *test)
{
	struct kpkeys_batch_task other = { .batched = true };
	struct task_struct *task;
	cpumask_var_t allowed;
	int from, to;
	bool batched;

	require_batching(test);
	if (IS_ENABLED(CONFIG_PPC_BOOK3S_64))
		kunit_skip(test,
			   "powerpc book3s64 lazy MMU sections disable preemption");
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs, has %u", num_online_cpus());
	KUNIT_ASSERT_TRUE(test, alloc_cpumask_var(&allowed, GFP_KERNEL));
	cpumask_copy(allowed, current->cpus_ptr);
	init_completion(&other.done);
	task = kthread_create(kpkeys_batch_task_fn, &other, "kpkeys_batch");
	if (IS_ERR(task)) {
		free_cpumask_var(allowed);
		KUNIT_FAIL(test, "kthread_create: %ld", PTR_ERR(task));
		return;
	}

	from = raw_smp_processor_id();
	to = cpumask_any_but(cpu_online_mask, from);
	kthread_bind(task, from);
	KUNIT_EXPECT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(from)), 0);
	lazy_mmu_mode_enable();
	lazy_section_first_write();
	/* Moves this task to @to before it returns. */
	KUNIT_EXPECT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(to)), 0);
	wake_up_process(task);
	wait_for_completion(&other.done);
	preempt_disable();
	KUNIT_EXPECT_EQ(test, smp_processor_id(), to);
	batched = kpkeys_pgtables_batched();
	expect_ctx(test, KPKEYS_CTX_PGTABLES);
	preempt_enable();
	lazy_mmu_mode_disable();
	set_cpus_allowed_ptr(current, allowed);
	free_cpumask_var(allowed);

	KUNIT_EXPECT_TRUE_MSG(test, batched,
			      "the section stopped batching on the CPU the task moved to");
	KUNIT_EXPECT_FALSE(test, other.batched);
	/* The register of the CPU the section left. */
	expect_default_reg(test, other.reg);
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
}

/*
 * A kernel page fault taken inside a batched section: entry gives the
 * handler the default context, so the handler's page-table writes must
 * switch for themselves instead of counting as batched.  Before entry left
 * batching, the PTE write of the fault below was "batched" in the default
 * context: a PKS fault (oops) on x86, and no switch counted in software.
 */
static void exception_in_lazy_section(struct kunit *test, bool written)
{
	unsigned long switches, skipped, addr;
	int reports __maybe_unused = 0;
	int ret;
	char c = 1;

	require_batching(test);
	require_stats(test);
	if (IS_ENABLED(CONFIG_PPC_BOOK3S_64))
		kunit_skip(test,
			   "powerpc book3s64 lazy MMU sections disable preemption: no sleeping fault inside");

	addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "kunit_vm_mmap() failed");
#ifdef CONFIG_KPKEYS_CHECK
	reports = kpkeys_check_reports();
#endif

	/* This CPU's counters; the fault may sleep, but stays here. */
	migrate_disable();
	lazy_mmu_mode_enable();
	if (written)
		lazy_section_first_write();
	switches = cpu_stat(KPKEYS_STAT_PGTABLES_SWITCHES);
	skipped = cpu_stat(KPKEYS_STAT_PGTABLES_SKIPPED);
	/* Not yet faulted in: the #PF handler installs the PTE. */
	ret = copy_to_user((void __user *)addr, &c, 1);
	switches = cpu_stat(KPKEYS_STAT_PGTABLES_SWITCHES) - switches;
	skipped = cpu_stat(KPKEYS_STAT_PGTABLES_SKIPPED) - skipped;
	/*
	 * A pending section stays pending: the handler's writes switched for
	 * themselves and did not enter the context for the section.  #PF is not
	 * in_interrupt(): only entry clearing the task's state keeps it so.
	 */
	KUNIT_EXPECT_EQ(test, kpkeys_pgtables_batched(), written);
	expect_ctx(test, written ? KPKEYS_CTX_PGTABLES : KPKEYS_CTX_DEFAULT);
	if (!written) {
		lazy_section_first_write();
		KUNIT_EXPECT_TRUE(test, kpkeys_pgtables_batched());
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	}
	lazy_mmu_mode_disable();
	migrate_enable();

	KUNIT_EXPECT_EQ(test, ret, 0);
	kunit_info(test, "fault in a lazy section: %lu switches, %lu skipped\n",
		   switches, skipped);
	KUNIT_EXPECT_GE_MSG(test, switches, 1,
			    "the fault's page-table writes counted as batched");
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
#ifdef CONFIG_KPKEYS_CHECK
	KUNIT_EXPECT_EQ(test, kpkeys_check_reports(), reports);
#endif
}

static void exception_in_lazy_section_is_not_batched(struct kunit *test)
{
	exception_in_lazy_section(test, true);
}

static void exception_before_first_write_leaves_section_pending(struct kunit *test)
{
	exception_in_lazy_section(test, false);
}

/*
 * Exception exit gives the interrupted code its register and batching
 * state exactly as entry found them, whatever the handler left.  The
 * timer callback below leaves the page-table context and the batching
 * state of an active section behind, as a handler in task context
 * that resumed the interrupted task's lazy MMU section (KASAN's vmalloc
 * shadow pauses and resumes) would.  Before exit restored unconditionally,
 * the interrupted code ran on in the page-table context, "batched".
 */
struct kpkeys_leak_probe {
	struct hrtimer timer;
	bool fired;
};

static enum hrtimer_restart kpkeys_leak_probe_fn(struct hrtimer *timer)
{
	struct kpkeys_leak_probe *probe =
		container_of(timer, struct kpkeys_leak_probe, timer);

	/*
	 * The register only, not through kpkeys_enter_context(): the checker's
	 * state of hardirq context is this CPU's, and a context left there
	 * would be the next interrupt's.
	 */
	if (kpkeys_supported())		/* not restored */
		kpkeys_test_force_ctx(KPKEYS_CTX_PGTABLES);
	task_lazy()->batching = KPKEYS_BATCH_ACTIVE;
	/* Pairs with the acquire in the test: the callback is done. */
	smp_store_release(&probe->fired, true);
	return HRTIMER_NORESTART;
}

static void interrupt_exit_restores_context_and_batching(struct kunit *test)
{
	struct kpkeys_leak_probe probe = {};
	unsigned long timeout = jiffies + 5 * HZ;
	u8 batching;
	bool batched;

	require_batching(test);

	hrtimer_setup_on_stack(&probe.timer, kpkeys_leak_probe_fn,
			       CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	preempt_disable();
	hrtimer_start(&probe.timer, us_to_ktime(100),
		      HRTIMER_MODE_REL_PINNED_HARD);
	/* Pairs with the release in the timer callback. */
	while (!smp_load_acquire(&probe.fired) && time_before(jiffies, timeout))
		cpu_relax();
	batched = kpkeys_pgtables_batched();
	batching = task_lazy()->batching;
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
	/* Clean up whatever the exit left, for the cases that follow. */
	task_lazy()->batching = KPKEYS_BATCH_NONE;
	if (kpkeys_supported())
		kpkeys_test_force_ctx(KPKEYS_CTX_DEFAULT);
	preempt_enable();
	hrtimer_cancel(&probe.timer);
	destroy_hrtimer_on_stack(&probe.timer);

	KUNIT_ASSERT_TRUE_MSG(test, probe.fired, "timer interrupt never came");
	KUNIT_EXPECT_FALSE_MSG(test, batched,
			       "the interrupted code was left batched");
	KUNIT_EXPECT_EQ_MSG(test, batching, KPKEYS_BATCH_NONE,
			    "the interrupted task was left in a lazy MMU section");
}
#endif /* CONFIG_KPKEYS_HARDENED_PGTABLES */

static struct kunit_case kpkeys_cases[] = {
	KUNIT_CASE(enter_then_leave_round_trips),
	KUNIT_CASE(entering_the_current_context_writes_nothing),
	KUNIT_CASE(nested_guards_restore_each_context),
	KUNIT_CASE(guard_leaves_context_on_every_scope_exit),
	KUNIT_CASE(cond_guard_switches_only_when_asked),
	KUNIT_CASE(softirq_from_bh_enable_runs_at_default),
	KUNIT_CASE(cpu_comes_up_at_default),
#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
	KUNIT_CASE(lazy_section_switches_once),
	KUNIT_CASE(lazy_section_first_write_with_bh_disabled),
	KUNIT_CASE(lazy_section_switches_at_first_write),
	KUNIT_CASE(forged_pending_section_is_not_batched),
	KUNIT_CASE(nmi_entry_when_off_writes_nothing),
	KUNIT_CASE(lazy_section_nesting_and_pause),
	KUNIT_CASE(interrupt_in_lazy_section_is_not_batched),
	KUNIT_CASE(interrupt_before_first_write_leaves_section_pending),
	KUNIT_CASE(softirq_in_lazy_section_is_not_batched),
	KUNIT_CASE(sleeping_in_lazy_section_keeps_batching),
	KUNIT_CASE(migrating_in_lazy_section_keeps_batching),
	KUNIT_CASE(exception_in_lazy_section_is_not_batched),
	KUNIT_CASE(exception_before_first_write_leaves_section_pending),
	KUNIT_CASE(interrupt_exit_restores_context_and_batching),
#endif
	{}
};

static struct kunit_suite kpkeys_suite = {
	.name = "kpkeys",
	.test_cases = kpkeys_cases,
};

#ifdef CONFIG_KPKEYS_CHECK

static void reported_once(struct kunit *test, int before)
{
	KUNIT_EXPECT_EQ(test, kpkeys_check_reports(), before + 1);
}

static void write_in_default_context_is_reported(struct kunit *test)
{
	int before = kpkeys_check_reports();

	kpkeys_check_expect_reports(true);
	kpkeys_check_ctx(KPKEYS_CTX_PGTABLES);
	kpkeys_check_expect_reports(false);
	reported_once(test, before);
}

static void write_inside_guard_is_not_reported(struct kunit *test)
{
	int before = kpkeys_check_reports();

	scoped_guard(kpkeys_test_pgtables)
		kpkeys_check_ctx(KPKEYS_CTX_PGTABLES);
	KUNIT_EXPECT_EQ(test, kpkeys_check_reports(), before);
}

static void restore_out_of_order_is_reported(struct kunit *test)
{
	struct kpkeys_state outer, inner;
	int before = kpkeys_check_reports();

	outer = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	inner = kpkeys_enter_context(KPKEYS_CTX_DEFAULT);
	kpkeys_check_expect_reports(true);
	kpkeys_leave_context(&outer);
	kpkeys_check_expect_reports(false);
	reported_once(test, before);
	/* @outer held the default context: everything is back to it. */
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
	(void)inner;
}

struct kpkeys_irq_probe {
	struct hrtimer timer;
	u64 reg;
	int ctx;
	bool in_hardirq;
	bool fired;
};

static enum hrtimer_restart kpkeys_irq_probe_fn(struct hrtimer *timer)
{
	struct kpkeys_irq_probe *probe =
		container_of(timer, struct kpkeys_irq_probe, timer);

	probe->ctx = kpkeys_check_current_ctx();
	probe->reg = observed_reg();
	probe->in_hardirq = in_hardirq();
	/* Publish ctx and in_hardirq before the flag the test polls. */
	smp_store_release(&probe->fired, true);
	return HRTIMER_NORESTART;
}

static void interrupt_runs_in_default_context(struct kunit *test)
{
	struct kpkeys_irq_probe probe = { .ctx = -1 };
	unsigned long timeout = jiffies + 5 * HZ;

	hrtimer_setup_on_stack(&probe.timer, kpkeys_irq_probe_fn,
			       CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	scoped_guard(kpkeys_test_pgtables) {
		hrtimer_start(&probe.timer, us_to_ktime(100), HRTIMER_MODE_REL_PINNED_HARD);
		/* Busy-wait: the interrupt must hit this privileged section. */
		while (!smp_load_acquire(&probe.fired) && time_before(jiffies, timeout))
			cpu_relax();
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	}
	hrtimer_cancel(&probe.timer);
	destroy_hrtimer_on_stack(&probe.timer);

	KUNIT_ASSERT_TRUE_MSG(test, probe.fired, "timer interrupt never came");
	KUNIT_EXPECT_TRUE(test, probe.in_hardirq);
	KUNIT_EXPECT_EQ(test, probe.ctx, KPKEYS_CTX_DEFAULT);
	expect_default_reg(test, probe.reg);
}

struct kpkeys_task_probe {
	struct completion done;
	u64 reg;
	int ctx;
};

static int kpkeys_task_probe_fn(void *data)
{
	struct kpkeys_task_probe *probe = data;

	probe->ctx = kpkeys_check_current_ctx();
	probe->reg = observed_reg();
	complete(&probe->done);
	return 0;
}

static void sleeping_task_keeps_its_context(struct kunit *test)
{
	struct kpkeys_task_probe probe = { .ctx = -1 };
	struct task_struct *task;

	init_completion(&probe.done);
	task = kthread_create(kpkeys_task_probe_fn, &probe, "kpkeys_probe");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	/* Both on this CPU: the probe runs because this task sleeps. */
	migrate_disable();
	kthread_bind(task, smp_processor_id());
	scoped_guard(kpkeys_test_pgtables) {
		wake_up_process(task);
		wait_for_completion(&probe.done);
		usleep_range(1000, 2000);
		expect_ctx(test, KPKEYS_CTX_PGTABLES);
	}
	migrate_enable();
	expect_ctx(test, KPKEYS_CTX_DEFAULT);
	KUNIT_EXPECT_EQ(test, probe.ctx, KPKEYS_CTX_DEFAULT);
	expect_default_reg(test, probe.reg);
}

static struct kunit_case kpkeys_check_cases[] = {
	KUNIT_CASE(write_in_default_context_is_reported),
	KUNIT_CASE(write_inside_guard_is_not_reported),
	KUNIT_CASE(restore_out_of_order_is_reported),
	KUNIT_CASE(interrupt_runs_in_default_context),
	KUNIT_CASE(sleeping_task_keeps_its_context),
	{}
};

static struct kunit_suite kpkeys_check_suite = {
	.name = "kpkeys_check",
	.test_cases = kpkeys_check_cases,
};

kunit_test_suites(&kpkeys_suite, &kpkeys_check_suite);
#else
kunit_test_suites(&kpkeys_suite);
#endif

MODULE_DESCRIPTION("KUnit tests of the kpkeys context API and checker");
MODULE_LICENSE("GPL");
