// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys software level checker (CONFIG_KPKEYS_CHECK).
 *
 * The checker keeps the current kpkeys level in software, next to whatever
 * the pkey register holds: per task in task context, and per CPU for each
 * interrupt context (softirq, hardirq, NMI), so an interrupt starts at the
 * default level whatever the code it interrupted was doing.  It works with
 * and without pkey hardware, which makes it the first step of a port: wire
 * up the generic pieces, boot with the checker on, fix every report, then
 * write the register backend.
 *
 * It reports, once per call site, with a stack trace:
 *  - a restore that does not match the innermost switch;
 *  - a page-table write (kpkeys_check_level() in a batched section,
 *    kpkeys_check_pgtable_write() at every store) at the wrong level;
 *  - a return to user space at a level other than the default.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kpkeys_entry.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <kunit/visibility.h>

#include "kpkeys.h"

/* Softirq, hardirq and NMI: interrupt_context_level() 1 to 3. */
#define KPKEYS_CHECK_IRQ_CONTEXTS	3
#define KPKEYS_CHECK_MAX_SITES		64

static DEFINE_PER_CPU(struct kpkeys_check_state,
		      kpkeys_check_irq_state[KPKEYS_CHECK_IRQ_CONTEXTS]);

static atomic_t kpkeys_check_nr_reports = ATOMIC_INIT(0);
static bool kpkeys_check_expecting;

/* Call sites already reported; a report per site is enough. */
static unsigned long kpkeys_check_sites[KPKEYS_CHECK_MAX_SITES];

static __always_inline struct kpkeys_check_state *kpkeys_check_state(void)
{
	unsigned char ctx = interrupt_context_level();

	if (!ctx)
		return &current->kpkeys_check;
	return this_cpu_ptr(&kpkeys_check_irq_state[ctx - 1]);
}

/* Lockless: reports can come from NMI context. */
static bool kpkeys_check_first_report(unsigned long ip)
{
	int i;

	for (i = 0; i < KPKEYS_CHECK_MAX_SITES; i++) {
		unsigned long site = READ_ONCE(kpkeys_check_sites[i]);

		if (!site) {
			site = cmpxchg(&kpkeys_check_sites[i], 0, ip);
			if (!site)
				return true;	/* this call site is new */
		}
		if (site == ip)
			return false;
	}
	return true;	/* table full: keep reporting */
}

/*
 * Not WARN(): a test that provokes a report on purpose marks it "expected
 * by a test", and the test harness fails on any other "kpkeys_check:" line.
 */
static void kpkeys_check_report(const char *what, unsigned long ip,
				const char *unit, int got, int expected)
{
	atomic_inc(&kpkeys_check_nr_reports);
	if (!kpkeys_check_first_report(ip))
		return;
	pr_warn("kpkeys_check: %s at %pS: %s %d, expected %d%s\n", what,
		(void *)ip, unit, got, expected,
		READ_ONCE(kpkeys_check_expecting) ? " (expected by a test)" : "");
	dump_stack();
}

void kpkeys_check_switch(int level, struct kpkeys_saved *saved)
{
	struct kpkeys_check_state *state = kpkeys_check_state();

	saved->level = state->level;
	saved->depth = ++state->depth;
	state->level = level;
}
EXPORT_SYMBOL_GPL(kpkeys_check_switch);

void kpkeys_check_restore(const struct kpkeys_saved *saved)
{
	struct kpkeys_check_state *state = kpkeys_check_state();

	if (!saved->depth)	/* kpkeys_saved_unchanged() */
		return;
	if (saved->depth != state->depth)
		kpkeys_check_report("kpkeys restore out of order", _RET_IP_,
				    "nesting depth", state->depth, saved->depth);
	state->level = saved->level;
	state->depth = saved->depth - 1;
}
EXPORT_SYMBOL_GPL(kpkeys_check_restore);

/**
 * kpkeys_check_level() - report if the current level is not @level
 * @level: the level the caller must run at
 *
 * Called where kpkeys-protected data is written without a switch of its own
 * (a page-table write inside a batched section, for example).
 */
void kpkeys_check_level(int level)
{
	struct kpkeys_check_state *state = kpkeys_check_state();

	if (state->level != level)
		kpkeys_check_report("write at the wrong kpkeys level", _RET_IP_,
				    "level", state->level, level);
}
EXPORT_SYMBOL_GPL(kpkeys_check_level);

#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
/*
 * kpkeys_check_pgtable_write(): the store is made at the level of the
 * innermost switch of this context.  The keyed test is only made on a
 * mismatch (tables that are not keyed, early ones, may be written at any
 * level), so the common case costs a call, one load and a compare.
 */
void __kpkeys_check_pgtable_write(const void *table)
{
	int level = kpkeys_check_state()->level;

	if (likely(level == KPKEYS_LVL_PGTABLES))
		return;
	if (!kpkeys_pgtable_keyed(table))
		return;
	kpkeys_check_report("page-table write outside a kpkeys guard", _RET_IP_,
			    "level", level, KPKEYS_LVL_PGTABLES);
}
EXPORT_SYMBOL_GPL(__kpkeys_check_pgtable_write);
#endif

void __kpkeys_check_user_return(void)
{
	struct kpkeys_check_state *state = &current->kpkeys_check;

	if (unlikely(state->level != KPKEYS_LVL_DEFAULT)) {
		kpkeys_check_report("return to user space at a kpkeys level",
				    _RET_IP_, "level", state->level,
				    KPKEYS_LVL_DEFAULT);
		state->level = KPKEYS_LVL_DEFAULT;
		state->depth = 0;
	}
}

/*
 * Exception entry and exit (see <linux/kpkeys_entry.h>): the handler starts
 * at the default level, like the hardware, whatever the interrupted
 * context was doing; the interrupted context gets its level back on exit.
 * Before context tracking and RCU: noinstr.
 */
noinstr void kpkeys_check_irqentry_enter(struct kpkeys_check_state *save)
{
	struct kpkeys_check_state *state = kpkeys_check_state();

	*save = *state;
	state->level = KPKEYS_LVL_DEFAULT;
}

noinstr void kpkeys_check_irqentry_exit(const struct kpkeys_check_state *save)
{
	*kpkeys_check_state() = *save;
}

/**
 * kpkeys_check_current_level() - the level the checker tracks right now
 *
 * Return: the %KPKEYS_LVL_* the current context is at, for the checker.
 */
int kpkeys_check_current_level(void)
{
	return kpkeys_check_state()->level;
}
EXPORT_SYMBOL_GPL(kpkeys_check_current_level);

/* For KUnit: count reports, and mark the ones a test provokes. */
int kpkeys_check_reports(void)
{
	return atomic_read(&kpkeys_check_nr_reports);
}
EXPORT_SYMBOL_IF_KUNIT(kpkeys_check_reports);

void kpkeys_check_expect_reports(bool expect)
{
	WRITE_ONCE(kpkeys_check_expecting, expect);
}
EXPORT_SYMBOL_IF_KUNIT(kpkeys_check_expect_reports);

static int __init kpkeys_check_debugfs_init(void)
{
	debugfs_create_atomic_t("check_reports", 0444, kpkeys_debugfs_dir(),
				&kpkeys_check_nr_reports);
	return 0;
}
late_initcall(kpkeys_check_debugfs_init);

static int __init kpkeys_check_announce(void)
{
	pr_info("kpkeys: software level checker enabled (CONFIG_KPKEYS_CHECK), pkey hardware %s\n",
		arch_kpkeys_enabled() ? "in use" : "not in use");
	return 0;
}
early_initcall(kpkeys_check_announce);
