# SPDX-License-Identifier: GPL-2.0
#
# ppc64le PowerNV (POWER9) booted with the hash MMU: skiboot provides the
# storage-keys property, so memory keys, KUAP and KUEP are all active.
# Use with kunit.py run --qemu_config=<this file>.

from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='powerpc',
			   kconfig='''
CONFIG_PPC64=y
CONFIG_PPC_BOOK3S_64=y
CONFIG_CPU_LITTLE_ENDIAN=y
CONFIG_PPC_POWERNV=y
CONFIG_HVC_OPAL=y
CONFIG_PPC_64S_HASH_MMU=y
CONFIG_PPC_MEM_KEYS=y
CONFIG_PPC_KUAP=y
CONFIG_PPC_KUEP=y''',
			   qemu_arch='ppc64',
			   kernel_path='vmlinux',
			   kernel_command_line='console=hvc0 disable_radix',
			   extra_qemu_params=['-machine', 'powernv9',
					      '-device', 'ipmi-bmc-sim,id=bmc0',
					      '-device', 'isa-ipmi-bt,bmc=bmc0,irq=10'])
