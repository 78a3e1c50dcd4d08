/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the kpkeys KUnit suites share: the register and context helpers,
 * and the line a test prints before a WARNING it provokes, for checkers
 * of the console log that treat any WARNING as a failure.
 */
#ifndef _MM_TESTS_KPKEYS_TEST_H
#define _MM_TESTS_KPKEYS_TEST_H

#include <linux/kpkeys.h>

#define KPKEYS_TEST_WARNING_EXPECTED "kpkeys-test: the next WARNING is expected"

/*
 * The kpkeys bits of the pkey register itself (RDMSR, MRS, mfspr; not a
 * per-CPU copy), of its copy, and of a context, for the backends built on
 * <asm-generic/kpkeys.h>.  All three are 0 without a backend.
 */
static inline unsigned long kpkeys_test_hw_bits(void)
{
#ifdef CONFIG_ARCH_HAS_KPKEYS
	return __arch_kpkeys_reg_read_hw() & ARCH_KPKEYS_REG_MASK;
#else
	return 0;
#endif
}

static inline unsigned long kpkeys_test_copy_bits(void)
{
#ifdef CONFIG_ARCH_HAS_KPKEYS
	return __arch_kpkeys_reg_read() & ARCH_KPKEYS_REG_MASK;
#else
	return 0;
#endif
}

static inline unsigned long kpkeys_test_ctx_bits(enum kpkeys_ctx ctx)
{
#ifdef CONFIG_ARCH_HAS_KPKEYS
	return __arch_kpkeys_ctx_reg(ctx);
#else
	return 0;
#endif
}

/* Put @ctx's rights in the register only, behind the checker's back. */
static inline void kpkeys_test_force_ctx(enum kpkeys_ctx ctx)
{
	if (kpkeys_supported())
		arch_kpkeys_switch(arch_kpkeys_ctx_state(ctx));
}

/* What a state holds in the register's kpkeys bits; 0 if nothing was written. */
static inline unsigned long kpkeys_test_state_bits(struct arch_kpkeys_state s)
{
#ifdef CONFIG_ARCH_HAS_KPKEYS
	if (arch_kpkeys_state_written(s))
		return s.reg & ARCH_KPKEYS_REG_MASK;
#endif
	return 0;
}

#endif /* _MM_TESTS_KPKEYS_TEST_H */
