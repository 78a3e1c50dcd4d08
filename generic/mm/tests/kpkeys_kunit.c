// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the kpkeys level API: kpkeys_set_level(),
 * kpkeys_restore_pkey_reg() and the scoped guards.
 *
 * The level is observed through the pkey register where the hardware is in
 * use, and through the software checker (CONFIG_KPKEYS_CHECK) where it is
 * built; with neither there is nothing to observe and the cases skip.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kpkeys.h>
#include <linux/kthread.h>

MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

static bool kpkeys_test_cond;

KPKEYS_GUARD(kpkeys_test_pgtables, KPKEYS_LVL_PGTABLES);
KPKEYS_GUARD(kpkeys_test_default, KPKEYS_LVL_DEFAULT);
KPKEYS_GUARD_COND(kpkeys_test_pgtables_if, KPKEYS_LVL_PGTABLES,
		  kpkeys_test_cond);

static bool level_observable(void)
{
	return IS_ENABLED(CONFIG_KPKEYS_CHECK) || arch_kpkeys_enabled();
}

static void require_observable_level(struct kunit *test)
{
	if (!level_observable())
		kunit_skip(test,
			   "no pkey hardware in use and CONFIG_KPKEYS_CHECK=n: nothing can observe the level");
}

/* Is @level the current level, by every means available? */
static void expect_level(struct kunit *test, int level)
{
#ifdef CONFIG_KPKEYS_CHECK
	KUNIT_EXPECT_EQ(test, kpkeys_check_current_level(), level);
#endif
#ifdef CONFIG_ARCH_HAS_KPKEYS
	if (arch_kpkeys_enabled())
		KUNIT_EXPECT_EQ(test, arch_kpkeys_read_pkey_reg(),
				level == KPKEYS_LVL_DEFAULT ?
				arch_kpkeys_level_pkey_reg(KPKEYS_LVL_DEFAULT) :
				arch_kpkeys_level_pkey_reg(KPKEYS_LVL_PGTABLES));
#endif
}

static void set_level_then_restore_round_trips(struct kunit *test)
{
	struct kpkeys_saved saved;

	require_observable_level(test);
	expect_level(test, KPKEYS_LVL_DEFAULT);

	saved = kpkeys_set_level(KPKEYS_LVL_PGTABLES);
	expect_level(test, KPKEYS_LVL_PGTABLES);
	if (arch_kpkeys_enabled())
		KUNIT_EXPECT_NE(test, saved.reg, KPKEYS_PKEY_REG_INVAL);

	kpkeys_restore_pkey_reg(saved);
	expect_level(test, KPKEYS_LVL_DEFAULT);
}

static void set_level_to_current_level_writes_nothing(struct kunit *test)
{
	struct kpkeys_saved saved;

	require_observable_level(test);
	saved = kpkeys_set_level(KPKEYS_LVL_DEFAULT);
	KUNIT_EXPECT_EQ(test, saved.reg, KPKEYS_PKEY_REG_INVAL);
	expect_level(test, KPKEYS_LVL_DEFAULT);
	kpkeys_restore_pkey_reg(saved);
	expect_level(test, KPKEYS_LVL_DEFAULT);

	/* The same inside a privileged section. */
	scoped_guard(kpkeys_test_pgtables) {
		saved = kpkeys_set_level(KPKEYS_LVL_PGTABLES);
		KUNIT_EXPECT_EQ(test, saved.reg, KPKEYS_PKEY_REG_INVAL);
		kpkeys_restore_pkey_reg(saved);
		expect_level(test, KPKEYS_LVL_PGTABLES);
	}
	expect_level(test, KPKEYS_LVL_DEFAULT);
}

static void nested_guards_restore_each_level(struct kunit *test)
{
	require_observable_level(test);
	scoped_guard(kpkeys_test_pgtables) {
		expect_level(test, KPKEYS_LVL_PGTABLES);
		scoped_guard(kpkeys_test_default) {
			expect_level(test, KPKEYS_LVL_DEFAULT);
			scoped_guard(kpkeys_test_pgtables)
				expect_level(test, KPKEYS_LVL_PGTABLES);
			expect_level(test, KPKEYS_LVL_DEFAULT);
		}
		expect_level(test, KPKEYS_LVL_PGTABLES);
	}
	expect_level(test, KPKEYS_LVL_DEFAULT);
}

static int level_in_guarded_helper(bool leave_early)
{
	guard(kpkeys_test_pgtables)();

	if (leave_early)
		return 1;
	return 2;
}

static void guard_restores_level_on_every_scope_exit(struct kunit *test)
{
	require_observable_level(test);
	KUNIT_EXPECT_EQ(test, level_in_guarded_helper(true), 1);
	expect_level(test, KPKEYS_LVL_DEFAULT);
	KUNIT_EXPECT_EQ(test, level_in_guarded_helper(false), 2);
	expect_level(test, KPKEYS_LVL_DEFAULT);
}

static void cond_guard_switches_only_when_asked(struct kunit *test)
{
	require_observable_level(test);
	kpkeys_test_cond = false;
	scoped_guard(kpkeys_test_pgtables_if)
		expect_level(test, KPKEYS_LVL_DEFAULT);
	kpkeys_test_cond = true;
	scoped_guard(kpkeys_test_pgtables_if)
		expect_level(test, KPKEYS_LVL_PGTABLES);
	expect_level(test, KPKEYS_LVL_DEFAULT);
}

static struct kunit_case kpkeys_cases[] = {
	KUNIT_CASE(set_level_then_restore_round_trips),
	KUNIT_CASE(set_level_to_current_level_writes_nothing),
	KUNIT_CASE(nested_guards_restore_each_level),
	KUNIT_CASE(guard_restores_level_on_every_scope_exit),
	KUNIT_CASE(cond_guard_switches_only_when_asked),
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

static void write_at_default_level_is_reported(struct kunit *test)
{
	int before = kpkeys_check_reports();

	kpkeys_check_expect_reports(true);
	kpkeys_check_level(KPKEYS_LVL_PGTABLES);
	kpkeys_check_expect_reports(false);
	reported_once(test, before);
}

static void write_inside_guard_is_not_reported(struct kunit *test)
{
	int before = kpkeys_check_reports();

	scoped_guard(kpkeys_test_pgtables)
		kpkeys_check_level(KPKEYS_LVL_PGTABLES);
	KUNIT_EXPECT_EQ(test, kpkeys_check_reports(), before);
}

static void restore_out_of_order_is_reported(struct kunit *test)
{
	struct kpkeys_saved outer, inner;
	int before = kpkeys_check_reports();

	outer = kpkeys_set_level(KPKEYS_LVL_PGTABLES);
	inner = kpkeys_set_level(KPKEYS_LVL_DEFAULT);
	kpkeys_check_expect_reports(true);
	kpkeys_restore_pkey_reg(outer);
	kpkeys_check_expect_reports(false);
	reported_once(test, before);
	/* @outer held the default level: everything is back to it. */
	expect_level(test, KPKEYS_LVL_DEFAULT);
	(void)inner;
}

struct kpkeys_irq_probe {
	struct hrtimer timer;
	int level;
	bool in_hardirq;
	bool fired;
};

static enum hrtimer_restart kpkeys_irq_probe_fn(struct hrtimer *timer)
{
	struct kpkeys_irq_probe *probe =
		container_of(timer, struct kpkeys_irq_probe, timer);

	probe->level = kpkeys_check_current_level();
	probe->in_hardirq = in_hardirq();
	/* Publish level and in_hardirq before the flag the test polls. */
	smp_store_release(&probe->fired, true);
	return HRTIMER_NORESTART;
}

static void interrupt_runs_at_default_level(struct kunit *test)
{
	struct kpkeys_irq_probe probe = { .level = -1 };
	unsigned long timeout = jiffies + 5 * HZ;

	hrtimer_setup_on_stack(&probe.timer, kpkeys_irq_probe_fn,
			       CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	scoped_guard(kpkeys_test_pgtables) {
		hrtimer_start(&probe.timer, us_to_ktime(100), HRTIMER_MODE_REL_PINNED_HARD);
		/* Busy-wait: the interrupt must hit this privileged section. */
		while (!smp_load_acquire(&probe.fired) && time_before(jiffies, timeout))
			cpu_relax();
		expect_level(test, KPKEYS_LVL_PGTABLES);
	}
	hrtimer_cancel(&probe.timer);
	destroy_hrtimer_on_stack(&probe.timer);

	KUNIT_ASSERT_TRUE_MSG(test, probe.fired, "timer interrupt never came");
	KUNIT_EXPECT_TRUE(test, probe.in_hardirq);
	KUNIT_EXPECT_EQ(test, probe.level, KPKEYS_LVL_DEFAULT);
}

struct kpkeys_task_probe {
	struct completion done;
	int level;
};

static int kpkeys_task_probe_fn(void *data)
{
	struct kpkeys_task_probe *probe = data;

	probe->level = kpkeys_check_current_level();
	complete(&probe->done);
	return 0;
}

static void sleeping_task_keeps_its_level(struct kunit *test)
{
	struct kpkeys_task_probe probe = { .level = -1 };
	struct task_struct *task;

	init_completion(&probe.done);
	scoped_guard(kpkeys_test_pgtables) {
		task = kthread_run(kpkeys_task_probe_fn, &probe, "kpkeys_probe");
		KUNIT_ASSERT_FALSE(test, IS_ERR(task));
		/* Sleeps: other tasks run on this CPU meanwhile. */
		wait_for_completion(&probe.done);
		usleep_range(1000, 2000);
		expect_level(test, KPKEYS_LVL_PGTABLES);
	}
	expect_level(test, KPKEYS_LVL_DEFAULT);
	KUNIT_EXPECT_EQ(test, probe.level, KPKEYS_LVL_DEFAULT);
}

static struct kunit_case kpkeys_check_cases[] = {
	KUNIT_CASE(write_at_default_level_is_reported),
	KUNIT_CASE(write_inside_guard_is_not_reported),
	KUNIT_CASE(restore_out_of_order_is_reported),
	KUNIT_CASE(interrupt_runs_at_default_level),
	KUNIT_CASE(sleeping_task_keeps_its_level),
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

MODULE_DESCRIPTION("KUnit tests of the kpkeys level API and checker");
MODULE_LICENSE("GPL");
