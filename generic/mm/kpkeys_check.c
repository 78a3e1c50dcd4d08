// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys software context checker (CONFIG_KPKEYS_CHECK).
 *
 * The checker keeps the current kpkeys context in software, next to
 * whatever the pkey register holds: per task in task context, and per CPU
 * for each interrupt context (softirq, hardirq, NMI), so an interrupt
 * starts in the default context whatever the code it interrupted was
 * doing.  It works with
 * and without pkey hardware, which makes it the first step of a port: wire
 * up the generic pieces, boot with the checker on, fix every report, then
 * write the register backend.
 *
 * It reports, once per call site, with a stack trace:
 *  - a leave that does not match the innermost entry;
 *  - a page-table write (kpkeys_check_ctx() in a batched section,
 *    kpkeys_check_pgtable_write() at every store) in the wrong context;
 *  - a return to user space in a context other than the default.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kpkeys_entry.h>
#include <linux/kprobes.h>
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
	unsigned char irq = interrupt_context_level();

	if (!irq)
		return &current->kpkeys_check;
	return this_cpu_ptr(&kpkeys_check_irq_state[irq - 1]);
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

static const char *const kpkeys_ctx_names[KPKEYS_NR_CTX] = {
	[KPKEYS_CTX_DEFAULT]	= "default",
	[KPKEYS_CTX_PGTABLES]	= "pgtables",
};

static const char *kpkeys_ctx_name(unsigned int ctx)
{
	return ctx < KPKEYS_NR_CTX ? kpkeys_ctx_names[ctx] : "invalid";
}

/*
 * Not WARN(): a test that provokes a report on purpose marks it "expected
 * by a test", and the test harness fails on any other "kpkeys_check:" line.
 */
static bool kpkeys_check_report_site(unsigned long ip)
{
	atomic_inc(&kpkeys_check_nr_reports);
	return kpkeys_check_first_report(ip);
}

static const char *kpkeys_check_expected_note(void)
{
	return READ_ONCE(kpkeys_check_expecting) ? " (expected by a test)" : "";
}

static void kpkeys_check_report_ctx(const char *what, unsigned long ip,
				    unsigned int got, unsigned int expected)
{
	if (!kpkeys_check_report_site(ip))
		return;
	pr_warn("kpkeys_check: %s at %pS: context %s, expected %s%s\n", what,
		(void *)ip, kpkeys_ctx_name(got), kpkeys_ctx_name(expected),
		kpkeys_check_expected_note());
	dump_stack();
}

static void kpkeys_check_report_depth(unsigned long ip, int got, int expected)
{
	if (!kpkeys_check_report_site(ip))
		return;
	pr_warn("kpkeys_check: kpkeys leave out of order at %pS: nesting depth %d, expected %d%s\n",
		(void *)ip, got, expected, kpkeys_check_expected_note());
	dump_stack();
}

void kpkeys_check_enter(enum kpkeys_ctx ctx, struct kpkeys_state *entered)
{
	struct kpkeys_check_state *state = kpkeys_check_state();

	entered->check.ctx = state->ctx;
	entered->check.depth = ++state->depth;
	state->ctx = ctx;
}
EXPORT_SYMBOL_GPL(kpkeys_check_enter);

void kpkeys_check_leave(const struct kpkeys_state *entered)
{
	struct kpkeys_check_state *state = kpkeys_check_state();

	if (!entered->check.depth)	/* KPKEYS_STATE_UNCHANGED */
		return;
	if (entered->check.depth != state->depth)
		kpkeys_check_report_depth(_RET_IP_, state->depth,
					  entered->check.depth);
	state->ctx = entered->check.ctx;
	state->depth = entered->check.depth - 1;
}
EXPORT_SYMBOL_GPL(kpkeys_check_leave);

/**
 * kpkeys_check_ctx() - report if the current context is not @ctx
 * @ctx: the context the caller must run in
 *
 * Called where kpkeys-protected data is written without an entry of its
 * own (a page-table write inside a batched section, for example).
 */
notrace void kpkeys_check_ctx(enum kpkeys_ctx ctx)
{
	struct kpkeys_check_state *state = kpkeys_check_state();

	if (state->ctx != ctx)
		kpkeys_check_report_ctx("write in the wrong kpkeys context",
					_RET_IP_, state->ctx, ctx);
}
EXPORT_SYMBOL_GPL(kpkeys_check_ctx);
NOKPROBE_SYMBOL(kpkeys_check_ctx);

#ifdef CONFIG_KPKEYS_HARDENED_PGTABLES
/*
 * kpkeys_check_pgtable_write(): the store is made in the context of the
 * innermost entry of this execution context.  The keyed test is only made
 * on a mismatch (tables that are not keyed, early ones, may be written in
 * any context), so the common case costs a call, one load and a compare.
 */
notrace void __kpkeys_check_pgtable_write(const void *table)
{
	unsigned int ctx = kpkeys_check_state()->ctx;

	if (likely(ctx == KPKEYS_CTX_PGTABLES))
		return;
	if (!kpkeys_pgtable_keyed(table))
		return;
	kpkeys_check_report_ctx("page-table write outside a kpkeys guard",
				_RET_IP_, ctx, KPKEYS_CTX_PGTABLES);
}
EXPORT_SYMBOL_GPL(__kpkeys_check_pgtable_write);
NOKPROBE_SYMBOL(__kpkeys_check_pgtable_write);
#endif

void __kpkeys_check_user_return(void)
{
	struct kpkeys_check_state *state = &current->kpkeys_check;

	if (unlikely(state->ctx != KPKEYS_CTX_DEFAULT)) {
		kpkeys_check_report_ctx("return to user space in a kpkeys context",
					_RET_IP_, state->ctx, KPKEYS_CTX_DEFAULT);
		state->ctx = KPKEYS_CTX_DEFAULT;
		state->depth = 0;
	}
}

/*
 * Exception entry and exit (see <linux/kpkeys_entry.h>): the handler starts
 * in the default context, like the hardware, whatever the interrupted
 * code was doing; the interrupted code gets its context back on exit.
 * Before context tracking and RCU: noinstr.
 */
noinstr void kpkeys_check_irqentry_enter(struct kpkeys_check_state *save)
{
	struct kpkeys_check_state *state = kpkeys_check_state();

	*save = *state;
	state->ctx = KPKEYS_CTX_DEFAULT;
}

noinstr void kpkeys_check_irqentry_exit(const struct kpkeys_check_state *save)
{
	*kpkeys_check_state() = *save;
}

/**
 * kpkeys_check_current_ctx() - the context the checker tracks right now
 *
 * Return: the &enum kpkeys_ctx the running code is in, for the checker.
 */
enum kpkeys_ctx kpkeys_check_current_ctx(void)
{
	return kpkeys_check_state()->ctx;
}
EXPORT_SYMBOL_GPL(kpkeys_check_current_ctx);

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
	pr_info("kpkeys: software context checker enabled (CONFIG_KPKEYS_CHECK), pkey hardware %s\n",
		kpkeys_supported() ? "in use" : "not in use");
	return 0;
}
early_initcall(kpkeys_check_announce);
