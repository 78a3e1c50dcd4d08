/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpkeys: the software checker's interface for the entry code and tests,
 * and the statistics' read side.  The inline paths of <linux/kpkeys.h>
 * only need the entry, leave and context checks, declared there; what
 * is here changes without rebuilding every user of <linux/pgtable.h>.
 */
#ifndef _LINUX_KPKEYS_CHECK_H
#define _LINUX_KPKEYS_CHECK_H

#include <linux/kpkeys.h>
#include <linux/percpu.h>

#ifdef CONFIG_KPKEYS_CHECK
void __kpkeys_check_user_return(void);
enum kpkeys_ctx kpkeys_check_current_ctx(void);
int kpkeys_check_reports(void);
void kpkeys_check_expect_reports(bool expect);

/* Called before every return to user space: the context must be the default. */
static __always_inline void kpkeys_check_user_return(void)
{
	__kpkeys_check_user_return();
}
#else
static __always_inline void kpkeys_check_user_return(void) {}
#endif

#ifdef CONFIG_KPKEYS_STATS
DECLARE_PER_CPU(unsigned long, kpkeys_stats[KPKEYS_NR_STATS]);
unsigned long kpkeys_stat_read(enum kpkeys_stat stat);
#else
static inline unsigned long kpkeys_stat_read(enum kpkeys_stat stat)
{
	return 0;
}
#endif

#endif /* _LINUX_KPKEYS_CHECK_H */
