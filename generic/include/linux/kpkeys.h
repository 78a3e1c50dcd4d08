/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys: kernel use of memory protection keys.
 *
 * Kernel data that only a few places may write (page tables, to start with)
 * is mapped with a dedicated protection key.  The pkey register (arm64
 * POR_EL1, x86 IA32_PKRS, powerpc AMR) makes that key read-only at the
 * default level; code that needs write access switches to a more
 * privileged level for as short a time as possible:
 *
 *	guard(kpkeys_hardened_pgtables)();
 *	WRITE_ONCE(*ptep, pte);
 *
 * See Documentation/core-api/kpkeys.rst.
 */
#ifndef _LINUX_KPKEYS_H
#define _LINUX_KPKEYS_H

#include <linux/bug.h>
#include <linux/cleanup.h>
#include <linux/compiler.h>
#include <linux/kpkeys_types.h>
#include <linux/types.h>

/*
 * Levels, from least to most privileged.  Every level gives read-write
 * access to the default key; a feature level adds write access to the key
 * of that feature.  An architecture maps each level to a pkey register
 * value in one place (arch_kpkeys_level_pkey_reg()).
 */
#define KPKEYS_LVL_DEFAULT	0
#define KPKEYS_LVL_PGTABLES	1

#define KPKEYS_LVL_MIN		KPKEYS_LVL_DEFAULT
#define KPKEYS_LVL_MAX		KPKEYS_LVL_PGTABLES
#define KPKEYS_NR_LEVELS	(KPKEYS_LVL_MAX + 1)

/*
 * "Nothing was written": returned by kpkeys_set_level() when the register
 * already held the requested value (or there is no pkey hardware), and
 * ignored by kpkeys_restore_pkey_reg().  No kpkeys level ever produces it:
 * x86 PKRS is 32 bits wide; all-ones in POR_EL1 is a reserved encoding for
 * every index; all-ones in AMR would deny access to key 0, which every
 * level keeps read-write.
 */
#define KPKEYS_PKEY_REG_INVAL	U64_MAX

#ifdef CONFIG_KPKEYS_CHECK
void kpkeys_check_switch(int level, struct kpkeys_saved *saved);
void kpkeys_check_restore(const struct kpkeys_saved *saved);
void kpkeys_check_level(int level);
void __kpkeys_check_user_return(void);
int kpkeys_check_current_level(void);
int kpkeys_check_reports(void);
void kpkeys_check_expect_reports(bool expect);

/* Called before every return to user space: the level must be the default. */
static __always_inline void kpkeys_check_user_return(void)
{
	__kpkeys_check_user_return();
}
#else
static inline void kpkeys_check_switch(int level, struct kpkeys_saved *saved) {}
static inline void kpkeys_check_restore(const struct kpkeys_saved *saved) {}
static inline void kpkeys_check_level(int level) {}
static __always_inline void kpkeys_check_user_return(void) {}
#endif

#ifdef CONFIG_ARCH_HAS_KPKEYS
#include <asm/kpkeys.h>
#endif
#include <asm-generic/kpkeys.h>

/* A saved state that restores nothing: no register write, no level change. */
static __always_inline struct kpkeys_saved kpkeys_saved_unchanged(void)
{
	return (struct kpkeys_saved){ .reg = KPKEYS_PKEY_REG_INVAL };
}

#ifdef CONFIG_KPKEYS

/**
 * kpkeys_set_level() - switch the pkey register to a kpkeys level
 * @level: %KPKEYS_LVL_*, a compile-time constant
 *
 * Always inlined, and @level must be a constant: no callable function that
 * sets an arbitrary level exists in the kernel image.
 *
 * Return: the state to hand to kpkeys_restore_pkey_reg(); its @reg is
 * %KPKEYS_PKEY_REG_INVAL when nothing was written.
 */
static __always_inline struct kpkeys_saved kpkeys_set_level(int level)
{
	struct kpkeys_saved saved = kpkeys_saved_unchanged();

	BUILD_BUG_ON_MSG(!__builtin_constant_p(level),
			 "a kpkeys level must be a compile-time constant");
	BUILD_BUG_ON_MSG(level < KPKEYS_LVL_MIN || level > KPKEYS_LVL_MAX,
			 "kpkeys level out of range");

	kpkeys_check_switch(level, &saved);
	if (arch_kpkeys_enabled())
		saved.reg = arch_kpkeys_set_level(level);
	return saved;
}

/**
 * kpkeys_restore_pkey_reg() - undo a kpkeys_set_level()
 * @saved: what the matching kpkeys_set_level() returned
 */
static __always_inline void kpkeys_restore_pkey_reg(struct kpkeys_saved saved)
{
	if (saved.reg != KPKEYS_PKEY_REG_INVAL)
		arch_kpkeys_restore_pkey_reg(saved.reg);
	kpkeys_check_restore(&saved);
}

#else /* !CONFIG_KPKEYS */

static __always_inline struct kpkeys_saved kpkeys_set_level(int level)
{
	return kpkeys_saved_unchanged();
}

static __always_inline void kpkeys_restore_pkey_reg(struct kpkeys_saved saved) {}

#endif /* CONFIG_KPKEYS */

/**
 * KPKEYS_GUARD() - define a scoped guard that runs at a kpkeys level
 * @_name: guard name, used as guard(_name)()
 * @_level: %KPKEYS_LVL_* constant
 *
 * The level is entered when the guard is declared and the previous state
 * restored when it goes out of scope.
 */
#define KPKEYS_GUARD(_name, _level)					\
	DEFINE_LOCK_GUARD_0(_name,					\
			    _T->saved = kpkeys_set_level(_level),	\
			    kpkeys_restore_pkey_reg(_T->saved),	\
			    struct kpkeys_saved saved)

/**
 * KPKEYS_GUARD_COND() - like KPKEYS_GUARD(), entered only if @_cond holds
 * @_name: guard name
 * @_level: %KPKEYS_LVL_* constant
 * @_cond: evaluated once, when the guard is declared
 */
#define KPKEYS_GUARD_COND(_name, _level, _cond)				\
	DEFINE_LOCK_GUARD_0(_name,					\
			    _T->saved = (_cond) ? kpkeys_set_level(_level) :	\
						  kpkeys_saved_unchanged(),	\
			    kpkeys_restore_pkey_reg(_T->saved),	\
			    struct kpkeys_saved saved)

#endif /* _LINUX_KPKEYS_H */
