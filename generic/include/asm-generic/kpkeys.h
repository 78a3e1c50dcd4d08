/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Defaults of the kpkeys arch contract; see "Porting kpkeys" in
 * Documentation/core-api/kpkeys.rst.
 *
 * An architecture that selects ARCH_HAS_KPKEYS provides, in <asm/kpkeys.h>:
 *
 *   KPKEYS_PKEY_DEFAULT, KPKEYS_PKEY_PGTABLES	its key numbers
 *   bool arch_kpkeys_enabled(void)		pkey hardware usable now
 *   u64 arch_kpkeys_read_pkey_reg(void)
 *   void arch_kpkeys_write_pkey_reg(u64 reg)	with the barriers it needs
 *   u64 arch_kpkeys_level_pkey_reg(int level)	the register value of a level,
 *						constant for a constant level
 *
 * and set_memory_pkey() in <asm/set_memory.h>.  Everything else (switching,
 * "nothing changed", restoring, checking) is generic and lives here and in
 * <linux/kpkeys.h>.
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

#ifndef arch_kpkeys_set_level
/* Write the register only when the level changes it. */
static __always_inline u64 arch_kpkeys_set_level(int level)
{
	u64 prev = arch_kpkeys_read_pkey_reg();
	u64 next = arch_kpkeys_level_pkey_reg(level);

	if (prev == next)
		return KPKEYS_PKEY_REG_INVAL;
	arch_kpkeys_write_pkey_reg(next);
	return prev;
}
#endif

#ifndef arch_kpkeys_restore_pkey_reg
static __always_inline void arch_kpkeys_restore_pkey_reg(u64 reg)
{
	arch_kpkeys_write_pkey_reg(reg);
}
#endif

#else /* !CONFIG_ARCH_HAS_KPKEYS */

static __always_inline bool arch_kpkeys_enabled(void)
{
	return false;
}

static __always_inline u64 arch_kpkeys_set_level(int level)
{
	return KPKEYS_PKEY_REG_INVAL;
}

static __always_inline void arch_kpkeys_restore_pkey_reg(u64 reg)
{
}

#endif /* CONFIG_ARCH_HAS_KPKEYS */

#endif /* __ASM_GENERIC_KPKEYS_H */
