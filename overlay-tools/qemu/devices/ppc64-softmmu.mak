# The project's qemu-system-ppc64 (overlay-tools/build-qemu.sh): the
# powernv machines only (powernv9: hash MMU with storage keys, as the
# powerpc guests boot it, with the BMC simulator and its BT interface).
CONFIG_POWERNV=y
# POWERNV selects the PCA955x GPIO expanders, which depend on an I2C bus
# that nothing else selects without the default devices.
CONFIG_I2C=y
# The ISA IPMI BT interface needs the AML builder of the IPMI device, which
# is only linked with ACPI.
CONFIG_ACPI=y
