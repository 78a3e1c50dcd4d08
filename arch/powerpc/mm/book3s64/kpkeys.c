// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpkeys on book3s64: the hash MMU's storage keys, switched in the AMR
 * (see <asm/kpkeys.h>), and the storage keys of linear-map pages.
 *
 * The linear map is not in Linux page tables under the hash MMU: it is
 * bolted HPTEs, inserted at boot, normally with 16M pages.  A key applies
 * to a whole HPTE, so kpkeys asks for a linear map of base pages (4K, or
 * 64K with 64K base pages), as debug_pagealloc and KFENCE do, and changes
 * the key of one page's bolted entry in place (hpte_updatebolted_key).
 */
#define pr_fmt(fmt) "kpkeys: " fmt

#include <linux/export.h>
#include <linux/init.h>
#include <linux/kpkeys.h>
#include <linux/memblock.h>
#include <linux/pkeys.h>
#include <linux/printk.h>
#include <linux/set_memory.h>
#include <linux/string.h>
#include <asm/firmware.h>
#include <asm/kup.h>
#include <asm/mmu.h>

#include "internal.h"

bool kpkeys_ppc_enabled __ro_after_init;
/* Read by every user access window (<asm/book3s/64/kup.h>), modules too. */
EXPORT_SYMBOL(kpkeys_ppc_enabled);

/* The linear map has a bolted entry per base page, for set_memory_pkey(). */
static bool kpkeys_ppc_linear_by_pages __ro_after_init;

/**
 * kpkeys_ppc_linear_map_by_pages() - should the linear map use base pages?
 *
 * Called by htab_init_page_sizes(), after kpkeys_ppc_setup().  Yes if
 * hardened page tables may run: a bolted entry per page costs HPT slots
 * (one per page of memory) and TLB reach, not memory.  With
 * kpkeys_hardened_pgtables=off, or where kpkeys is unavailable, the large
 * pages stay.  Not under a hypervisor: only the bare-metal HPTE code can
 * change the key of a bolted entry so far.
 *
 * Return: true if the linear map is to be bolted with base pages.
 */
bool __init kpkeys_ppc_linear_map_by_pages(void)
{
	const char *why = NULL;

	if (!kpkeys_requested())
		why = "kpkeys_hardened_pgtables=off";
	else if (!kpkeys_ppc_enabled)
		return false;
	else if (firmware_has_feature(FW_FEATURE_LPAR))
		why = "under a hypervisor: no HPTE call to change a bolted key yet";
	if (why) {
		pr_info("linear map: large pages, page-table pages cannot be keyed (%s)\n",
			why);
		return false;
	}
	kpkeys_ppc_linear_by_pages = true;
	pr_info("linear map: %llu MiB with one bolted HPTE per %luK page, so that page-table pages can be keyed one at a time\n",
		memblock_phys_mem_size() >> 20, PAGE_SIZE >> 10);
	return true;
}

/**
 * kpkeys_ppc_setup() - decide, once, whether kpkeys can use the AMR
 *
 * Called by early_setup() on the boot CPU, once KUAP has been set up.
 */
void __init kpkeys_ppc_setup(void)
{
	if (early_radix_enabled()) {
		pr_info("unavailable: the radix MMU has no storage keys for kernel pages (boot with disable_radix for the hash MMU)\n");
		return;
	}
	if (!early_mmu_has_feature(MMU_FTR_PKEY)) {
		pr_info("unavailable: the hash MMU has no storage keys here (no ibm,processor-storage-keys, or not enough keys)\n");
		return;
	}
	if (!early_mmu_has_feature(MMU_FTR_KUAP)) {
		pr_warn("unavailable: KUAP is off (nosmap): kpkeys relies on KUAP to reset the AMR on kernel entry\n");
		return;
	}
	if (num_pkey <= KPKEYS_PKEY_PGTABLES) {
		pr_warn("unavailable: %d storage keys, the page-table key is %d\n",
			num_pkey, KPKEYS_PKEY_PGTABLES);
		return;
	}
	if (!kpkeys_requested()) {
		pr_info("not used (kpkeys_hardened_pgtables=off)\n");
		return;
	}
	WRITE_ONCE(kpkeys_ppc_enabled, true);
	pr_info("hash storage key %d for page tables: AMR %#018lx in the default context, %#018lx in the page-table context\n",
		KPKEYS_PKEY_PGTABLES, AMR_KUAP_BLOCKED,
		(AMR_KUAP_BLOCKED & ~AMR_KPKEYS_MASK) | AMR_KPKEYS_CTX_PGTABLES);
}

static unsigned long kpkeys_pkey_to_hpte_key(int pkey)
{
	return ((pkey & 0x01) ? HPTE_R_KEY_BIT0 : 0) |
	       ((pkey & 0x02) ? HPTE_R_KEY_BIT1 : 0) |
	       ((pkey & 0x04) ? HPTE_R_KEY_BIT2 : 0) |
	       ((pkey & 0x08) ? HPTE_R_KEY_BIT3 : 0) |
	       ((pkey & 0x10) ? HPTE_R_KEY_BIT4 : 0);
}

static int kpkeys_hpte_key_to_pkey(unsigned long key)
{
	return ((key & HPTE_R_KEY_BIT0) ? 0x01 : 0) |
	       ((key & HPTE_R_KEY_BIT1) ? 0x02 : 0) |
	       ((key & HPTE_R_KEY_BIT2) ? 0x04 : 0) |
	       ((key & HPTE_R_KEY_BIT3) ? 0x08 : 0) |
	       ((key & HPTE_R_KEY_BIT4) ? 0x10 : 0);
}

static bool kpkeys_is_linear(unsigned long addr)
{
	return get_region_id(addr) == LINEAR_MAP_REGION_ID &&
	       addr < (unsigned long)__va(memblock_end_of_DRAM());
}

/**
 * set_memory_pkey() - give linear-map pages a storage key
 * @addr: start, a page-aligned linear-map address
 * @numpages: number of pages
 * @pkey: the key: KPKEYS_PKEY_PGTABLES, or KPKEYS_PKEY_DEFAULT (3, the
 *	key of every kernel page under KUAP) to give a page back
 *
 * Each page's bolted HPTE gets the key in place and is flushed from every
 * TLB (tlbie): no unmapped window, so a CPU that reads the page meanwhile
 * sees it.  Process context, or any context that may disable interrupts.
 *
 * Return: 0; -EINVAL for an address outside the linear map or a bad key;
 * -EOPNOTSUPP if the linear map has large pages or no HPTE code to change
 * a key (nothing changed, said once); -ENOENT if a page has no bolted
 * entry (the pages before it were changed).
 */
int set_memory_pkey(unsigned long addr, int numpages, int pkey)
{
	unsigned long key = kpkeys_pkey_to_hpte_key(pkey);
	int psize = mmu_linear_psize;
	int i, ret;

	/* Without keys (radix, software-only hardened page tables): nothing. */
	if (!kpkeys_supported() || !numpages)
		return 0;
	if (WARN_ON_ONCE(pkey < 0 || pkey >= num_pkey))
		return -EINVAL;
	if (WARN_ON_ONCE(!PAGE_ALIGNED(addr) || !kpkeys_is_linear(addr)))
		return -EINVAL;
	if (!kpkeys_ppc_linear_by_pages ||
	    mmu_psize_defs[psize].shift != PAGE_SHIFT ||
	    !mmu_hash_ops.hpte_updatebolted_key) {
		pr_warn_once("cannot key linear-map pages: %s\n",
			     !mmu_hash_ops.hpte_updatebolted_key ?
			     "no way to change the key of a bolted HPTE under this hypervisor" :
			     "the linear map uses large pages (hardened page tables were off at boot: not built, or kpkeys_hardened_pgtables=off)");
		return -EOPNOTSUPP;
	}
	for (i = 0; i < numpages; i++, addr += PAGE_SIZE) {
		ret = mmu_hash_ops.hpte_updatebolted_key(key, addr, psize,
							 mmu_kernel_ssize);
		if (ret) {
			pr_warn("no bolted HPTE maps %#lx: its key stays\n",
				addr);
			return ret;
		}
	}
	return 0;
}

/**
 * kernel_page_pkey() - the storage key of a linear-map page, from its HPTE
 * @addr: a linear-map address
 *
 * Return: the key in the bolted HPTE that maps @addr (3 for an ordinary
 * kernel page under KUAP), -ENOENT if there is none, -EOPNOTSUPP for an
 * address outside the linear map (vmalloc and I/O HPTEs are not bolted:
 * they come and go with hash faults) or without the HPTE code to read it.
 */
int kernel_page_pkey(unsigned long addr)
{
	long key;

	if (!kpkeys_is_linear(addr) || !mmu_hash_ops.hpte_bolted_key)
		return -EOPNOTSUPP;
	key = mmu_hash_ops.hpte_bolted_key(addr & PAGE_MASK, mmu_linear_psize,
					   mmu_kernel_ssize);
	if (key < 0)
		return key;
	return kpkeys_hpte_key_to_pkey(key);
}
