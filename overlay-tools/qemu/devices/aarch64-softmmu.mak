# The project's qemu-system-aarch64 (overlay-tools/build-qemu.sh): the
# virt machine only, the one the arm64 guests boot.
CONFIG_ARM_VIRT=y
