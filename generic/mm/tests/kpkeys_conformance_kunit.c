// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys_conformance: what every kpkeys backend must do, checked on the
 * hardware (the pkey register read back with RDMSR, MRS or mfspr, the key
 * in the kernel PTE or HPTE, a store that faults), one case per part of
 * the arch contract of <asm-generic/kpkeys.h>.  It is the first suite a
 * porter runs: each case starts with a "hook:" line naming the arch hook,
 * or the generic code built on it, that a failure points at.
 *
 * Cases skip, each saying why, where no backend is in use (no hardware,
 * or a boot parameter turned it off), where hardened page tables or
 * batching are off, where nothing counts (CONFIG_KPKEYS_STATS=n or
 * kpkeys_stats=off), where the arch has no entry yet in conf_facts, or
 * where another CPU printed the WARNING line the exception case reads the
 * register from (after three tries).
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/console.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kpkeys.h>
#include <linux/kpkeys_entry.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/panic.h>
#include <linux/pgtable.h>
#include <linux/sched/task.h>
#include <linux/set_memory.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kpkeys_test.h"
#include "kpkeys_test_paths.h"

KPKEYS_GUARD(kpkeys_conf_pgtables, KPKEYS_CTX_PGTABLES);

#define CONF_WRITES	16

static void conf_hook(struct kunit *test, const char *hook)
{
	kunit_info(test, "hook: %s\n", hook);
}

static void require_register(struct kunit *test)
{
	if (!kpkeys_supported())
		kunit_skip(test,
			   "no kpkeys backend in use (see the kpkeys lines of the boot log)");
}

/* This CPU's count of register writes by the context API, 0 without stats. */
static unsigned long conf_reg_writes(void)
{
#ifdef CONFIG_KPKEYS_STATS
	return this_cpu_read(kpkeys_stats[KPKEYS_STAT_REG_WRITES]);
#else
	return 0;
#endif
}

#define CONF_NONE	U64_MAX

/* Does some context put @bits in the register's kpkeys bits? */
static bool conf_bits_valid(u64 bits)
{
	return kpkeys_arch_state_valid((struct arch_kpkeys_state){
		.reg = bits | ARCH_KPKEYS_STATE_MARK });
}

/* The managed bits of the register itself, not a cached copy. */
static u64 hw_managed(void)
{
	return kpkeys_test_hw_bits();
}

/*
 * What the architecture manuals say, not what the backend says: a port
 * adds its architecture here, and a backend whose macros encode the wrong
 * permission fails context_encoding_round_trips, not only a fault test.
 *   @ctx:	the managed bits of each context;
 *   @plant_clear, @plant_set: a pattern in bits kpkeys never writes, that
 *		nothing on the CPU depends on while a case runs (see
 *		conf_plant_live() for the cases that keep it across tasks);
 *   @forged:	managed bits that no context produces and that leave the
 *		default key usable, should a broken check load them.
 */
struct conf_arch_facts {
	u64 ctx[KPKEYS_NR_CTX];
	u64 plant_clear, plant_set;
	u64 forged;
};

#if defined(CONFIG_X86)
/* IA32_PKRS: key k has AD at bit 2k and WD at bit 2k + 1. */
static const struct conf_arch_facts conf_facts = {
	.ctx = { [KPKEYS_CTX_DEFAULT] = 0x8, [KPKEYS_CTX_PGTABLES] = 0x0 },	/* key 1 WD */
	.plant_set = 0xaaaaaaa0,	/* WD of keys 2-15, which no page carries */
	.forged = 0xc,			/* key 1 AD and WD */
};

#define CONF_HAVE_FACTS 1
#elif defined(CONFIG_ARM64)
/* POR_EL1: a 4-bit field per POIndex; 0x1 R, 0x5 RW, 0x7 RWX. */
static const struct conf_arch_facts conf_facts = {
	.ctx = {
		[KPKEYS_CTX_DEFAULT] = 0x10000007,	/* POIndex 0 RWX, 7 R */
		[KPKEYS_CTX_PGTABLES] = 0x50000007,	/* POIndex 0 RWX, 7 RW */
	},
	.plant_clear = 0xf000, .plant_set = 0x5000,	/* POIndex 3 (user) RW */
	.forged = 0x70000007,			/* POIndex 7 RWX */
};

#define CONF_HAVE_FACTS 1
#elif defined(CONFIG_PPC64)
/* AMR: key k's pair at bits 63 - 2k (WD) and 62 - 2k (RD). */
static const struct conf_arch_facts conf_facts = {
	.ctx = {
		[KPKEYS_CTX_DEFAULT] = 0x0080000000000000ULL,	/* key 4 WD */
		[KPKEYS_CTX_PGTABLES] = 0x0,
	},
	.plant_clear = 0x3000000000000000ULL,	/* key 1, reserved, opened */
	.forged = 0x00c0000000000000ULL,	/* key 4 RD and WD */
};

#define CONF_HAVE_FACTS 1
#else
static const struct conf_arch_facts conf_facts;

#define CONF_HAVE_FACTS 0
#endif

/*
 * A context's encoding lies inside ARCH_KPKEYS_REG_MASK, is what the
 * architecture manual says, the two contexts differ, and each one is what
 * the register holds once it is set; a restore puts back the whole
 * register as it was.
 */
static void context_encoding_round_trips(struct kunit *test)
{
	u64 def = kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT);
	u64 pgt = kpkeys_test_ctx_bits(KPKEYS_CTX_PGTABLES);
	struct kpkeys_state saved;
	u64 before, at, after;

	conf_hook(test,
		  "arch_kpkeys_ctx_state(), arch_kpkeys_switch(), __arch_kpkeys_reg_read_hw()");
	KUNIT_EXPECT_EQ(test, def & ~ARCH_KPKEYS_REG_MASK, 0);
	KUNIT_EXPECT_EQ(test, pgt & ~ARCH_KPKEYS_REG_MASK, 0);
	KUNIT_EXPECT_NE(test, def, pgt);
	KUNIT_EXPECT_FALSE(test, kpkeys_arch_state_valid(ARCH_KPKEYS_STATE_UNCHANGED));
	if (CONF_HAVE_FACTS) {
		KUNIT_EXPECT_EQ_MSG(test, def, conf_facts.ctx[KPKEYS_CTX_DEFAULT],
				    "the default context's encoding");
		KUNIT_EXPECT_EQ_MSG(test, pgt, conf_facts.ctx[KPKEYS_CTX_PGTABLES],
				    "the page-table context's encoding");
	} else {
		kunit_info(test, "no encoding from the manual for this arch: add it to conf_facts\n");
	}
	require_register(test);

	before = (u64)__arch_kpkeys_reg_read_hw();
	saved = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	at = hw_managed();
	kpkeys_leave_context(&saved);
	after = (u64)__arch_kpkeys_reg_read_hw();

	KUNIT_EXPECT_EQ_MSG(test, before & ARCH_KPKEYS_REG_MASK, def,
			    "not in the default context to start with (register %#llx)", before);
	KUNIT_EXPECT_EQ_MSG(test, at, pgt, "the page-table context did not reach the register");
	KUNIT_EXPECT_EQ_MSG(test, after, before, "the restore did not put the register back");
	KUNIT_EXPECT_EQ(test, (u64)__arch_kpkeys_reg_read(), after);
}

/*
 * Setting the context the register already holds changes nothing: no
 * register write, and a saved state whose restore writes nothing either;
 * (u64)__arch_kpkeys_reg_read(), which may read a per-CPU copy (x86), then
 * agrees with the register.
 */
static void unchanged_context_writes_nothing(struct kunit *test)
{
	struct kpkeys_state saved;
	unsigned long writes, flags;
	u64 before, after, cached;

	conf_hook(test,
		  "kpkeys_enter_context(), kpkeys_leave_context(): the \"nothing written\" path");
	require_register(test);

	/* Interrupts off: no handler's own switch lands in the count. */
	local_irq_save(flags);
	before = (u64)__arch_kpkeys_reg_read_hw();
	writes = conf_reg_writes();
	saved = kpkeys_enter_context(KPKEYS_CTX_DEFAULT);
	kpkeys_leave_context(&saved);
	writes = conf_reg_writes() - writes;
	after = (u64)__arch_kpkeys_reg_read_hw();
	cached = (u64)__arch_kpkeys_reg_read();
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ(test, after, before);
	KUNIT_EXPECT_EQ_MSG(test, cached, after,
			    "(u64)__arch_kpkeys_reg_read() disagrees with the register");

	KUNIT_EXPECT_FALSE(test, arch_kpkeys_state_written(saved.arch_state));
	if (kpkeys_stats_enabled())
		KUNIT_EXPECT_EQ_MSG(test, writes, 0, "register writes for no change of context");
	else
		kunit_info(test, "nothing counts: CONFIG_KPKEYS_STATS=n or kpkeys_stats=off\n");
}

/* A value of the managed bits that no context encodes. */
static u64 conf_no_context(void)
{
	u64 candidates[] = {
		conf_facts.forged,
		ARCH_KPKEYS_REG_MASK,
		ARCH_KPKEYS_REG_MASK & (ARCH_KPKEYS_REG_MASK - 1),
		0,
	};
	int i;

	for (i = CONF_HAVE_FACTS ? 0 : 1; i < ARRAY_SIZE(candidates); i++)
		if (!conf_bits_valid(candidates[i]))
			return candidates[i];
	return CONF_NONE;
}

/*
 * "Nothing written" is the zeroed state: every context's state, and what
 * every switch replaced, says "written"; a zeroed state, in memory that
 * was cleared or forged, loads nothing when left to, whatever context is
 * in place.
 */
static void zeroed_state_loads_nothing(struct kunit *test)
{
	struct kpkeys_state state, zeroed;
	unsigned int ctx;
	unsigned long flags;
	u64 before, after;

	conf_hook(test, "arch_kpkeys_state_written(), ARCH_KPKEYS_STATE_MARK");
	for (ctx = 0; ctx < KPKEYS_NR_CTX; ctx++)
		KUNIT_EXPECT_TRUE_MSG(test,
				      arch_kpkeys_state_written(arch_kpkeys_ctx_state(ctx)),
				      "context %u's state says nothing was written", ctx);
	KUNIT_EXPECT_FALSE(test, arch_kpkeys_state_written(ARCH_KPKEYS_STATE_UNCHANGED));
	require_register(test);

	memset(&zeroed, 0, sizeof(zeroed));
	local_irq_save(flags);
	state = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	before = hw_managed();
	kpkeys_leave_context(&zeroed);
	after = hw_managed();
	kpkeys_leave_context(&state);
	local_irq_restore(flags);

	KUNIT_EXPECT_TRUE(test, arch_kpkeys_state_written(state.arch_state));
	KUNIT_EXPECT_EQ(test, before, kpkeys_test_ctx_bits(KPKEYS_CTX_PGTABLES));
	KUNIT_EXPECT_EQ_MSG(test, after, before, "a zeroed state changed the register");
	KUNIT_EXPECT_EQ(test, hw_managed(), kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT));
}

/*
 * A saved state lives in writable memory (the stack): a restore of a
 * value that no context produces must not load it, but the default context,
 * with a warning.
 */
static void forged_saved_value_restores_default(struct kunit *test)
{
	struct kpkeys_state saved;
	u64 forged = conf_no_context();
	unsigned long flags;
	u64 after;

	conf_hook(test, "kpkeys_arch_state_valid(), kpkeys_leave_invalid()");
	require_register(test);
	KUNIT_ASSERT_NE_MSG(test, forged, CONF_NONE,
			    "every candidate value is a context: extend conf_no_context()");

	pr_warn(KPKEYS_TEST_WARNING_EXPECTED "\n");
	local_irq_save(flags);
	saved = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	/* What a stack overwrite would do: the saved default becomes @forged. */
	saved.arch_state.reg = (saved.arch_state.reg & ~ARCH_KPKEYS_REG_MASK) | forged;
	kpkeys_leave_context(&saved);
	after = hw_managed();
	/* Had the check let @forged through, no page table is read with it. */
	kpkeys_test_force_ctx(KPKEYS_CTX_DEFAULT);
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ_MSG(test, after, kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT),
			    "the restore of %#llx left the register's managed bits at another value",
			    forged);
}

/*
 * The register with conf_facts' pattern in its unmanaged bits.  False
 * where no pattern is known; *@planted == @reg where it changes nothing.
 */
static bool unmanaged_pattern(u64 reg, u64 *planted)
{
	*planted = (reg & ~conf_facts.plant_clear) | conf_facts.plant_set;
	if (!CONF_HAVE_FACTS)
		return false;
	return !((*planted ^ reg) & ARCH_KPKEYS_REG_MASK);
}

/*
 * May the pattern stay in the register while interrupts are taken and
 * other tasks run on this CPU?  Not on powerpc: outside key 4, the kernel
 * AMR is KUAP's, AMR_KUAP_BLOCKED whenever no user access window is open,
 * which CONFIG_PPC_KUAP_DEBUG asserts at every context switch and
 * interrupt replay; the kernel AMR is not kept per task either.  There
 * the interrupt and context-switch cases check that KUAP's own bits come
 * back unchanged, with nothing planted.
 */
static bool conf_plant_live(void)
{
	return !IS_ENABLED(CONFIG_PPC64);
}

static void require_pattern(struct kunit *test)
{
	u64 reg = (u64)__arch_kpkeys_reg_read_hw(), planted;

	if (!unmanaged_pattern(reg, &planted))
		kunit_skip(test,
			   "no unmanaged-bit pattern for this arch: add one to conf_facts");
	if (planted == reg)
		kunit_skip(test, "the register holds the pattern already (%#llx)", reg);
}

/*
 * Plant the unmanaged-bit pattern in this CPU's register (migration is
 * disabled: the test must stay where the pattern is).
 */
static void conf_plant(u64 *orig, u64 *planted)
{
	unsigned long flags;

	local_irq_save(flags);
	*orig = (u64)__arch_kpkeys_reg_read_hw();
	unmanaged_pattern(*orig, planted);
	__arch_kpkeys_reg_write(*planted);
	local_irq_restore(flags);
}

/* conf_plant() where conf_plant_live(), else the register as it is. */
static void conf_plant_for_live(struct kunit *test, u64 *orig, u64 *planted)
{
	if (conf_plant_live()) {
		conf_plant(orig, planted);
	} else {
		*orig = *planted = (u64)__arch_kpkeys_reg_read_hw();
		kunit_info(test,
			   "nothing planted on this arch (see conf_plant_live()): the unmanaged bits %#llx must come back\n",
			   *orig & ~ARCH_KPKEYS_REG_MASK);
	}
}

static void conf_unplant(u64 orig)
{
	unsigned long flags;

	local_irq_save(flags);
	__arch_kpkeys_reg_write(orig);
	local_irq_restore(flags);
}

/* @reg holds the page-table context and, around it, the planted bits. */
static void expect_planted_in_context(struct kunit *test, u64 reg, u64 planted,
				      const char *when)
{
	KUNIT_EXPECT_EQ_MSG(test, reg & ~ARCH_KPKEYS_REG_MASK, planted & ~ARCH_KPKEYS_REG_MASK,
			    "%s: unmanaged bits lost (register %#llx, planted %#llx)",
			    when, reg, planted);
	KUNIT_EXPECT_EQ_MSG(test, reg & ARCH_KPKEYS_REG_MASK,
			    kpkeys_test_ctx_bits(KPKEYS_CTX_PGTABLES),
			    "%s: not in the page-table context", when);
}

/*
 * A switch to each context and back changes the managed bits only: bits
 * that belong to another user of the register (KUAP in the AMR, other
 * PKS keys, user POIndexes) survive it, however they are set.
 */
static void unmanaged_bits_survive_a_switch(struct kunit *test)
{
	struct kpkeys_state saved;
	u64 orig, planted, at, back;
	unsigned long flags;

	conf_hook(test, "__arch_kpkeys_reg_write() through arch_kpkeys_switch()");
	require_register(test);
	require_pattern(test);

	migrate_disable();
	conf_plant(&orig, &planted);
	local_irq_save(flags);
	saved = kpkeys_enter_context(KPKEYS_CTX_PGTABLES);
	at = (u64)__arch_kpkeys_reg_read_hw();
	kpkeys_leave_context(&saved);
	back = (u64)__arch_kpkeys_reg_read_hw();
	local_irq_restore(flags);
	conf_unplant(orig);
	migrate_enable();

	expect_planted_in_context(test, at, planted, "in the page-table context");
	KUNIT_EXPECT_EQ_MSG(test, back, planted, "after the restore");
	KUNIT_EXPECT_EQ(test, (u64)(u64)__arch_kpkeys_reg_read_hw(), orig);
}

/*
 * A page-table page carries the page-table key in the kernel PTE (or
 * HPTE) that maps it, an ordinary page the default key; a store into the
 * page-table page faults in the default context and succeeds at the
 * page-table context.
 */
static void pgtable_page_keyed_and_enforced(struct kunit *test)
{
	struct ptdesc *ptdesc;
	unsigned long plain, zero = 0;
	int key, plain_key, at_default, at_pgtables, read;
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
		at_pgtables = copy_to_kernel_nofault(table, &zero, sizeof(zero));
	pagetable_free(ptdesc);
	free_page(plain);

	KUNIT_EXPECT_EQ_MSG(test, key, KPKEYS_PKEY_PGTABLES, "the key of a page-table page");
	KUNIT_EXPECT_EQ_MSG(test, plain_key, KPKEYS_PKEY_DEFAULT, "the key of an ordinary page");
	KUNIT_EXPECT_EQ_MSG(test, read, 0, "a load in the default context faulted");
	KUNIT_EXPECT_EQ_MSG(test, at_pgtables, 0, "a store in the page-table context faulted");
	KUNIT_EXPECT_EQ_MSG(test, at_default, -EFAULT,
			    "a store in the default context did not fault");
}

/* One path of kpkeys_test_each_tree(): keyed at every level, and enforced. */
static void conf_path_keyed_and_enforced(struct kunit *test,
					 const struct kpkeys_test_path *path,
					 const char *what)
{
	kpkeys_test_expect_path_keyed(test, path, what);
	kpkeys_test_expect_path_enforced(test, path, what);
}

/*
 * Every level of a tree, not one page: the tables on the way to a vmalloc
 * page, a linear-map page and a user page carry the page-table key in the
 * kernel PTE (or HPTE) that maps them, and a store into each one faults
 * in the default context.  A page-sized level the arch allocates its own
 * way (its pgd_alloc(), say) fails here if it misses the key.  Tables
 * smaller than a page come from kmem caches, which kpkeys does not key:
 * they are listed in the log, not judged.
 */
static void every_table_level_keyed_and_enforced(struct kunit *test)
{
	conf_hook(test,
		  "the arch's pgd_alloc() and p?d_alloc_one(), through pagetable_alloc() and set_memory_pkey()");
	require_register(test);
	if (!kpkeys_hardened_pgtables_enabled())
		kunit_skip(test, "hardened page tables are off (see the boot log)");

	kpkeys_test_each_tree(test, conf_path_keyed_and_enforced);
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
 * Take a timer interrupt in a page-table-context section of this task;
 * *@after is the whole register when the section resumes.
 */
static void conf_interrupt_in_context(struct conf_irq_probe *probe, u64 *after)
{
	unsigned long timeout = jiffies + 5 * HZ;

	hrtimer_setup_on_stack(&probe->timer, conf_irq_probe_fn, CLOCK_MONOTONIC,
			       HRTIMER_MODE_REL_PINNED_HARD);
	/* Preemption off: the interrupt must hit this task, in this section. */
	preempt_disable();
	scoped_guard(kpkeys_conf_pgtables) {
		hrtimer_start(&probe->timer, us_to_ktime(100), HRTIMER_MODE_REL_PINNED_HARD);
		/* Busy-wait, so that the interrupt hits this section; pairs with the handler. */
		while (!smp_load_acquire(&probe->fired) && time_before(jiffies, timeout))
			cpu_relax();
		*after = (u64)__arch_kpkeys_reg_read_hw();
	}
	preempt_enable();
	hrtimer_cancel(&probe->timer);
	destroy_hrtimer_on_stack(&probe->timer);
}

static void expect_interrupt_at_default(struct kunit *test, const struct conf_irq_probe *probe)
{
	KUNIT_ASSERT_TRUE_MSG(test, probe->fired, "the timer interrupt never came");
	KUNIT_EXPECT_PTR_EQ_MSG(test, probe->task, current,
				"the interrupt hit another task, not the section");
	KUNIT_EXPECT_EQ_MSG(test, probe->reg, kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT),
			    "the interrupt handler ran in another context");
}

/*
 * An interrupt taken in the page-table context runs in the default context,
 * and the interrupted code gets its context back.
 */
static void interrupt_runs_at_default(struct kunit *test)
{
	struct conf_irq_probe probe = {};
	u64 after = 0;

	conf_hook(test,
		  "kpkeys_irqentry_enter(), kpkeys_irqentry_exit() (and the arch's entry code)");
	require_register(test);

	conf_interrupt_in_context(&probe, &after);

	expect_interrupt_at_default(test, &probe);
	KUNIT_EXPECT_EQ_MSG(test, after & ARCH_KPKEYS_REG_MASK,
			    kpkeys_test_ctx_bits(KPKEYS_CTX_PGTABLES),
			    "the interrupted code lost its context");
}

/*
 * The same interrupt with the unmanaged bits planted: entry and exit
 * switch the managed bits only, and the interrupted code gets the
 * planted bits back with its context.
 */
static void unmanaged_bits_survive_an_interrupt(struct kunit *test)
{
	struct conf_irq_probe probe = {};
	u64 orig, planted, after = 0;

	conf_hook(test,
		  "kpkeys_irqentry_enter(), kpkeys_irqentry_exit() (and the arch's entry code)");
	require_register(test);
	require_pattern(test);

	migrate_disable();
	conf_plant_for_live(test, &orig, &planted);
	conf_interrupt_in_context(&probe, &after);
	conf_unplant(orig);
	migrate_enable();

	expect_interrupt_at_default(test, &probe);
	expect_planted_in_context(test, after, planted, "after the interrupt");
}

/*
 * An exception taken in the page-table context runs in the default context:
 * a WARN() traps (x86 #UD, arm64 BRK, powerpc program check), and the
 * console sees the "WARNING: " line while the trap handler prints it,
 * so the register is read there.
 */
static struct {
	struct task_struct *task;
	bool armed;
	bool seen;
	u64 reg;
} conf_warn_probe;

/*
 * This WARN's own line (it names the function that warns), written while
 * @armed, by the task that warns, from task context: what the console
 * writes late, in a later printk() of the same task outside the trap, or
 * early, another CPU's WARNING flushed by the printk() that precedes the
 * trap on arm64 and powerpc (still in the page-table context), or from an
 * interrupt, says nothing about the trap handler.
 */
static void conf_warn_probe_write(struct console *con, const char *s, unsigned int n)
{
	if (READ_ONCE(conf_warn_probe.task) != current || !READ_ONCE(conf_warn_probe.armed) ||
	    !in_task() || conf_warn_probe.seen || !strnstr(s, "WARNING: ", n) ||
	    !strnstr(s, "exception_runs_at_default", n))
		return;
	conf_warn_probe.reg = hw_managed();
	conf_warn_probe.seen = true;
}

static struct console conf_warn_console = {
	.name	= "kpkeysconf",
	.write	= conf_warn_probe_write,
	.flags	= CON_ENABLED,
	.index	= -1,
};

static void exception_runs_at_default(struct kunit *test)
{
	u64 after = 0;
	int try;

	conf_hook(test,
		  "kpkeys_irqentry_enter() from the arch's trap entry (x86 handle_bug(), arm64 arm64_enter_el1_dbg(), powerpc irqentry_enter())");
	require_register(test);
	if (panic_on_warn)
		kunit_skip(test, "panic_on_warn is set: the WARN would panic");

	conf_warn_probe.seen = false;
	/* unregister_console() clears it: a second run (debugfs) needs it again. */
	conf_warn_console.flags = CON_ENABLED;
	register_console(&conf_warn_console);
	WRITE_ONCE(conf_warn_probe.task, current);
	/* Another CPU may print the line: try again, up to three times. */
	for (try = 0; try < 3 && !conf_warn_probe.seen; try++) {
		pr_warn(KPKEYS_TEST_WARNING_EXPECTED "\n");
		scoped_guard(kpkeys_conf_pgtables) {
			WRITE_ONCE(conf_warn_probe.armed, true);
			WARN(1, "kpkeys_conformance: a WARN in the page-table context\n");
			WRITE_ONCE(conf_warn_probe.armed, false);
			after = hw_managed();
		}
	}
	WRITE_ONCE(conf_warn_probe.task, NULL);
	unregister_console(&conf_warn_console);

	if (!conf_warn_probe.seen)
		kunit_skip(test,
			   "this WARN's WARNING line was not written from its trap three times (another CPU flushed the console, or no kallsyms to name the function)");
	KUNIT_EXPECT_EQ_MSG(test, conf_warn_probe.reg,
			    kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT),
			    "the trap handler ran in the context of the code that warned");
	KUNIT_EXPECT_EQ_MSG(test, after, kpkeys_test_ctx_bits(KPKEYS_CTX_PGTABLES),
			    "the code that warned lost its context");
}

struct conf_task_probe {
	struct completion done;
	u64 reg;
};

static int conf_task_probe_fn(void *data)
{
	struct conf_task_probe *probe = data;

	probe->reg = (u64)__arch_kpkeys_reg_read_hw();
	complete(&probe->done);
	return 0;
}

/*
 * Sleep in the page-table context while another task runs on this CPU,
 * then, if @idle, while the CPU idles; *@after is the whole register when
 * this task is back.  False if no task could be created.
 */
static bool conf_sleep_in_context(struct conf_task_probe *probe, bool idle, u64 *after)
{
	struct task_struct *task;

	init_completion(&probe->done);
	task = kthread_create(conf_task_probe_fn, probe, "kpkeys_conf");
	if (IS_ERR(task))
		return false;
	migrate_disable();
	kthread_bind(task, smp_processor_id());
	scoped_guard(kpkeys_conf_pgtables) {
		wake_up_process(task);
		wait_for_completion(&probe->done);
		if (idle)
			usleep_range(1000, 2000);
		*after = (u64)__arch_kpkeys_reg_read_hw();
	}
	migrate_enable();
	return true;
}

/*
 * A task that sleeps in the page-table context wakes up at it, and the task
 * that runs on its CPU meanwhile runs in the default context.
 */
static void sleeping_task_keeps_its_context(struct kunit *test)
{
	struct conf_task_probe probe = {};
	u64 after = 0;

	conf_hook(test, "kpkeys_sched_switch()");
	require_register(test);

	KUNIT_ASSERT_TRUE_MSG(test, conf_sleep_in_context(&probe, true, &after),
			      "kthread_create() failed");

	KUNIT_EXPECT_EQ_MSG(test, after & ARCH_KPKEYS_REG_MASK,
			    kpkeys_test_ctx_bits(KPKEYS_CTX_PGTABLES),
			    "the sleeper woke up in another context");
	KUNIT_EXPECT_EQ_MSG(test, probe.reg & ARCH_KPKEYS_REG_MASK,
			    kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT),
			    "the task that ran meanwhile got the sleeper's context");
	KUNIT_EXPECT_EQ(test, hw_managed(), kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT));
}

/*
 * The same sleep with the unmanaged bits planted: a context switch loads
 * the next task's context only, and the sleeper wakes up with its planted
 * bits as well as its context.
 */
static void unmanaged_bits_survive_a_context_switch(struct kunit *test)
{
	struct conf_task_probe probe = {};
	u64 orig, planted, after = 0;
	bool slept;

	conf_hook(test, "kpkeys_sched_switch()");
	require_register(test);
	require_pattern(test);

	migrate_disable();
	conf_plant_for_live(test, &orig, &planted);
	/*
	 * No idle: a deep idle state may lose the register (arm64's
	 * cpu_do_suspend() does not save POR_EL1, and the CPU comes back at
	 * the default context), which kpkeys allows but the pattern would not
	 * survive.
	 */
	slept = conf_sleep_in_context(&probe, false, &after);
	conf_unplant(orig);
	migrate_enable();

	KUNIT_ASSERT_TRUE_MSG(test, slept, "kthread_create() failed");
	KUNIT_EXPECT_EQ_MSG(test, probe.reg & ARCH_KPKEYS_REG_MASK,
			    kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT),
			    "the task that ran meanwhile got the sleeper's context");
	expect_planted_in_context(test, after, planted, "after the sleep");
}

/* A child of kernel_thread() must not return: there is no user mode to return to. */
static int conf_child_fn(void *data)
{
	conf_task_probe_fn(data);
	do_exit(0);
}

/*
 * A task forked in the page-table context starts in the default context.  The
 * parent is switched out in the context first, so that the task_struct the
 * child copies holds the page-table context: without kpkeys_fork(), the
 * child's first switch-in would load it.
 */
static void new_task_starts_at_default(struct kunit *test)
{
	struct conf_task_probe *probe;
	unsigned long left;
	pid_t pid;

	conf_hook(test, "kpkeys_fork() (copy_process())");
	require_register(test);

	/* Not on the stack: a child that runs after a timeout must not write there. */
	probe = kzalloc_obj(*probe);
	KUNIT_ASSERT_NOT_NULL(test, probe);
	init_completion(&probe->done);
	scoped_guard(kpkeys_conf_pgtables) {
		schedule_timeout_uninterruptible(1);
		/* A child of this task, not of kthreadd as kthread_create() gives. */
		pid = kernel_thread(conf_child_fn, probe, "kpkeys_conf_child", SIGCHLD);
	}
	if (pid <= 0)
		kfree(probe);
	KUNIT_ASSERT_GT_MSG(test, pid, 0, "kernel_thread() failed");
	left = wait_for_completion_timeout(&probe->done, 5 * HZ);
	/* On a timeout the child may still run: the probe is left to it. */
	KUNIT_ASSERT_NE_MSG(test, left, 0, "the child never ran");

	KUNIT_EXPECT_EQ_MSG(test, probe->reg & ARCH_KPKEYS_REG_MASK,
			    kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT),
			    "a task forked in the page-table context started at it");
	kfree(probe);
}

/*
 * User space never runs in another context: the last step of the return to
 * user mode puts the default context in the register, whatever kernel code
 * left there.  The context is switched in the register only (no guard), as
 * code that switched and never restored would leave it.  This calls the
 * hook itself; that every arch's return path reaches it is what generic
 * entry (exit_to_user_mode_prepare()) provides, and is not exercised here.
 */
static void return_to_user_is_at_default(struct kunit *test)
{
	unsigned long flags;
	u64 after;

	conf_hook(test, "kpkeys_exit_to_user_mode(), called directly");
	require_register(test);

	local_irq_save(flags);
	kpkeys_test_force_ctx(KPKEYS_CTX_PGTABLES);
	kpkeys_exit_to_user_mode();
	after = hw_managed();
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ_MSG(test, after, kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT),
			    "the return to user mode kept the page-table context");
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
	if (!kpkeys_stats_enabled())
		kunit_skip(test, "nothing counts: CONFIG_KPKEYS_STATS=n or kpkeys_stats=off");

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
	/* The section is still in the page-table context for its next write. */
	inside = hw_managed();
	lazy_mmu_mode_disable();
	in_section = conf_reg_writes() - in_section;
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ(test, outside, 2 * CONF_WRITES);
	KUNIT_EXPECT_EQ_MSG(test, in_section, 2, "register writes for %d guards in one section",
			    CONF_WRITES);
	KUNIT_EXPECT_EQ_MSG(test, inside, kpkeys_test_ctx_bits(KPKEYS_CTX_PGTABLES),
			    "the section left the page-table context before its end");
	KUNIT_EXPECT_EQ(test, hw_managed(), kpkeys_test_ctx_bits(KPKEYS_CTX_DEFAULT));
}

static struct kunit_case kpkeys_conformance_cases[] = {
	KUNIT_CASE(context_encoding_round_trips),
	KUNIT_CASE(unchanged_context_writes_nothing),
	KUNIT_CASE(zeroed_state_loads_nothing),
	KUNIT_CASE(forged_saved_value_restores_default),
	KUNIT_CASE(unmanaged_bits_survive_a_switch),
	KUNIT_CASE(unmanaged_bits_survive_an_interrupt),
	KUNIT_CASE(unmanaged_bits_survive_a_context_switch),
	KUNIT_CASE(pgtable_page_keyed_and_enforced),
	KUNIT_CASE(every_table_level_keyed_and_enforced),
	KUNIT_CASE(interrupt_runs_at_default),
	KUNIT_CASE(exception_runs_at_default),
	KUNIT_CASE(sleeping_task_keeps_its_context),
	KUNIT_CASE(new_task_starts_at_default),
	KUNIT_CASE(return_to_user_is_at_default),
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
