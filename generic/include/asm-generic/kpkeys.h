/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kpkeys arch contract, and the generic code built on it; see "Porting
 * kpkeys" in Documentation/core-api/kpkeys.rst.
 *
 * An architecture that selects ARCH_HAS_KPKEYS provides, in <asm/kpkeys.h>:
 *
 *   KPKEYS_PKEY_DEFAULT, KPKEYS_PKEY_PGTABLES	its key numbers
 *   KPKEYS_PKEY_REG_MASK	the bits of the pkey register that hold the
 *				rights of the keys kpkeys manages; never all
 *				ones (see KPKEYS_PKEY_REG_INVAL)
 *   bool arch_kpkeys_enabled(void)		pkey hardware usable now
 *   u64 arch_kpkeys_read_pkey_reg(void)	the whole register, or a copy
 *						that only an NMI can find
 *						stale (see
 *						kpkeys_irqentry_nmi_enter())
 *   void arch_kpkeys_write_pkey_reg(u64 reg)	the whole register, with the
 *						barriers it needs, atomic with
 *						respect to interrupts and
 *						preemption (not NMIs)
 *   u64 arch_kpkeys_level_pkey_reg(int level)	the managed bits of a level
 *						(inside KPKEYS_PKEY_REG_MASK),
 *						constant for a constant level
 *
 * optionally arch_kpkeys_read_pkey_reg_hw() (the register itself, for
 * tests, where arch_kpkeys_read_pkey_reg() reads a copy) and
 * arch_kpkeys_enforced() (false for a mock backend), and
 * set_memory_pkey() and kernel_page_pkey() (the key in a kernel PTE, in
 * any context) in <asm/set_memory.h>.  All of them are noinstr-safe:
 * the entry code uses them.
 *
 * kpkeys only ever changes the bits in KPKEYS_PKEY_REG_MASK, with one
 * read-modify-write (kpkeys_switch_managed()); the other bits belong to
 * whoever else uses the register (powerpc KUAP in AMR, another PKS user on
 * x86).  They may change under kpkeys only if whoever changes them puts
 * them back before the interrupted code runs again, as interrupt entry and
 * exit do.
 */
#ifndef __ASM_GENERIC_KPKEYS_H
#define __ASM_GENERIC_KPKEYS_H

#ifndef KPKEYS_PKEY_DEFAULT
#define KPKEYS_PKEY_DEFAULT	0
#endif

#ifndef KPKEYS_PKEY_PGTABLES
#define KPKEYS_PKEY_PGTABLES	1
#endif

#ifdef CONFIG_ARCH_HAS_KPKEYS

#ifndef arch_kpkeys_read_pkey_reg_hw
#define arch_kpkeys_read_pkey_reg_hw arch_kpkeys_read_pkey_reg
#endif

/*
 * Does the hardware enforce the keys?  Only a mock backend, which writes
 * a scratch register in place of the pkey register to measure the cost
 * on CPUs without the feature (CONFIG_ARM64_KPKEYS_MOCK), says no while
 * arch_kpkeys_enabled() says yes.
 */
#ifndef arch_kpkeys_enforced
#define arch_kpkeys_enforced() arch_kpkeys_enabled()
#endif

/*
 * Give the managed bits of the pkey register the value @bits, leaving the
 * others alone.  Return the managed bits it replaced, or
 * %KPKEYS_PKEY_REG_INVAL if they already were @bits (nothing written).
 * The only read-compare-write of the pkey register in the kernel.
 */
static __always_inline u64 kpkeys_switch_managed(u64 bits)
{
	u64 reg = arch_kpkeys_read_pkey_reg();
	u64 prev = reg & KPKEYS_PKEY_REG_MASK;

	BUILD_BUG_ON(KPKEYS_PKEY_REG_MASK == U64_MAX);
	if (prev == bits)
		return KPKEYS_PKEY_REG_INVAL;
	arch_kpkeys_write_pkey_reg((reg & ~KPKEYS_PKEY_REG_MASK) | bits);
	return prev;
}

/* The managed bits, as the register (or its copy) says they are. */
static __always_inline u64 kpkeys_read_managed(void)
{
	return arch_kpkeys_read_pkey_reg() & KPKEYS_PKEY_REG_MASK;
}

/*
 * Write @bits into the managed bits whatever the register (or its copy)
 * says they are; return what it said.  For NMI-class entry, which cannot
 * trust a copy (see kpkeys_irqentry_nmi_enter()).
 */
static __always_inline u64 kpkeys_force_managed(u64 bits)
{
	u64 reg = arch_kpkeys_read_pkey_reg();

	arch_kpkeys_write_pkey_reg((reg & ~KPKEYS_PKEY_REG_MASK) | bits);
	return reg & KPKEYS_PKEY_REG_MASK;
}

/* Is @bits what some level puts in the managed bits? */
static __always_inline bool kpkeys_managed_valid(u64 bits)
{
	int level;

	for (level = KPKEYS_LVL_MIN; level <= KPKEYS_LVL_MAX; level++)
		if (bits == arch_kpkeys_level_pkey_reg(level))
			return true;
	return false;
}

#else /* !CONFIG_ARCH_HAS_KPKEYS */

#define KPKEYS_PKEY_REG_MASK	0ULL

static __always_inline bool arch_kpkeys_enabled(void)
{
	return false;
}

#define arch_kpkeys_enforced() false

static __always_inline u64 arch_kpkeys_level_pkey_reg(int level)
{
	return 0;
}

static __always_inline u64 kpkeys_switch_managed(u64 bits)
{
	return KPKEYS_PKEY_REG_INVAL;
}

static __always_inline u64 kpkeys_read_managed(void)
{
	return 0;
}

static __always_inline u64 kpkeys_force_managed(u64 bits)
{
	return bits;
}

static __always_inline bool kpkeys_managed_valid(u64 bits)
{
	return true;
}

#endif /* CONFIG_ARCH_HAS_KPKEYS */

#endif /* __ASM_GENERIC_KPKEYS_H */
