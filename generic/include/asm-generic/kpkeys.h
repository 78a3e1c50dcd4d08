/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys for backends whose state is some bits of one register.
 *
 * The arch contract (see Documentation/core-api/kpkeys-porting.rst) is,
 * in <asm/kpkeys_types.h>:
 *
 *   struct arch_kpkeys_state		opaque to generic code
 *
 * and in <asm/kpkeys.h>, all static __always_inline and noinstr-safe (the
 * entry code uses them):
 *
 *   KPKEYS_PKEY_DEFAULT, KPKEYS_PKEY_PGTABLES	the key numbers
 *   bool arch_kpkeys_supported(void)		kpkeys hardware in use
 *   struct arch_kpkeys_state arch_kpkeys_ctx_state(enum kpkeys_ctx ctx)
 *		the rights of a context, a constant for a constant @ctx
 *   struct arch_kpkeys_state arch_kpkeys_read(void)
 *		the rights in place now
 *   struct arch_kpkeys_state arch_kpkeys_switch(struct arch_kpkeys_state to)
 *		put @to in place, leaving alone whatever else the register
 *		holds, with the barriers that make the next access see it;
 *		return what it replaced, or a state that says nothing was
 *		written if @to was already in place.  An interrupt or a
 *		context switch in the middle must find, and leave, the
 *		register as this CPU's code expects it: entry, exit and the
 *		scheduler put back exactly what they found
 *   bool arch_kpkeys_state_written(struct arch_kpkeys_state s)
 *		false for a state that says nothing was written, and for
 *		zeroed memory; true for every state read or switched from
 *   bool arch_kpkeys_state_equal(struct arch_kpkeys_state a, b)
 *   arch_kpkeys_switch_nmi()			optional, see below
 *
 * and set_memory_pkey() and kernel_page_pkey() in <asm/set_memory.h>.
 *
 * A backend whose state is the kpkeys bits of one register defines, and
 * then includes this header for the rest of the contract:
 *
 *   struct arch_kpkeys_state { unsigned long reg; };
 *   ARCH_KPKEYS_REG_MASK	the bits of the register kpkeys manages
 *   ARCH_KPKEYS_STATE_MARK	bits outside the mask set in every state read
 *				or switched from, so that none is zero; 0 if
 *				no context has all of its managed bits clear
 *   unsigned long __arch_kpkeys_ctx_reg(enum kpkeys_ctx ctx)
 *				the managed bits of a context
 *   unsigned long __arch_kpkeys_reg_read(void)
 *				the register, or a copy that only an NMI can
 *				find stale (then also defining
 *				ARCH_KPKEYS_REG_COPY and
 *				__arch_kpkeys_reg_read_hw(), the register)
 *   void __arch_kpkeys_reg_write(unsigned long reg)
 *				the whole register (and copy), with barriers;
 *				a register and its copy are written with
 *				interrupts off
 *
 * kpkeys only ever changes the bits in ARCH_KPKEYS_REG_MASK, with a
 * read-modify-write; the other bits belong to whoever else uses the
 * register (powerpc KUAP in the AMR, another PKS user on x86).  They must
 * be the same on every CPU, since a task may read them on one CPU and
 * write them on another, and may change under kpkeys only if whoever
 * changes them puts them back before the interrupted code runs again, as
 * interrupt entry and exit do.
 */
#ifndef __ASM_GENERIC_KPKEYS_H
#define __ASM_GENERIC_KPKEYS_H

#include <linux/build_bug.h>

#define ARCH_KPKEYS_STATE_UNCHANGED	((struct arch_kpkeys_state){ .reg = 0 })

static_assert(!(ARCH_KPKEYS_STATE_MARK & ARCH_KPKEYS_REG_MASK));

static __always_inline struct arch_kpkeys_state __kpkeys_reg_state(unsigned long bits)
{
	return (struct arch_kpkeys_state){ .reg = bits | ARCH_KPKEYS_STATE_MARK };
}

static __always_inline struct arch_kpkeys_state arch_kpkeys_ctx_state(enum kpkeys_ctx ctx)
{
	return __kpkeys_reg_state(__arch_kpkeys_ctx_reg(ctx));
}

static __always_inline struct arch_kpkeys_state arch_kpkeys_read(void)
{
	return __kpkeys_reg_state(__arch_kpkeys_reg_read() & ARCH_KPKEYS_REG_MASK);
}

static __always_inline bool arch_kpkeys_state_written(struct arch_kpkeys_state s)
{
	return s.reg != 0;
}

static __always_inline bool arch_kpkeys_state_equal(struct arch_kpkeys_state a,
						    struct arch_kpkeys_state b)
{
	return a.reg == b.reg;
}

/* Nothing is written when the managed bits already are @to's. */
static __always_inline struct arch_kpkeys_state arch_kpkeys_switch(struct arch_kpkeys_state to)
{
	unsigned long reg = __arch_kpkeys_reg_read();
	unsigned long prev = reg & ARCH_KPKEYS_REG_MASK;
	unsigned long bits = to.reg & ARCH_KPKEYS_REG_MASK;

	if (prev == bits)
		return ARCH_KPKEYS_STATE_UNCHANGED;
	__arch_kpkeys_reg_write((reg & ~ARCH_KPKEYS_REG_MASK) | bits);
	return __kpkeys_reg_state(prev);
}

#ifdef ARCH_KPKEYS_REG_COPY
/*
 * NMI-class entry cannot trust a copy: an NMI can land between the
 * interrupted write of the copy and that of the register.  @to is written
 * whatever the copy says, and the copy's bits are returned, nothing
 * written if they were @to's.  Either order of the interrupted writes then
 * ends with copy and register agreeing.
 */
static __always_inline struct arch_kpkeys_state arch_kpkeys_switch_nmi(struct arch_kpkeys_state to)
{
	unsigned long reg = __arch_kpkeys_reg_read();
	unsigned long prev = reg & ARCH_KPKEYS_REG_MASK;
	unsigned long bits = to.reg & ARCH_KPKEYS_REG_MASK;

	__arch_kpkeys_reg_write((reg & ~ARCH_KPKEYS_REG_MASK) | bits);
	return prev == bits ? ARCH_KPKEYS_STATE_UNCHANGED : __kpkeys_reg_state(prev);
}

#define arch_kpkeys_switch_nmi arch_kpkeys_switch_nmi
#else
#define __arch_kpkeys_reg_read_hw __arch_kpkeys_reg_read
#endif

#endif /* __ASM_GENERIC_KPKEYS_H */
