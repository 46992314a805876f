#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds a kernel tree for snapbench's kernel arms (docs/kernel-arms.md),
# out of tree: build-kernel.sh SRC OUT
#   OUT/arch/x86/boot/bzImage   the image (--arm LABEL:kernel=...)
#   OUT/vmlinux                 beside it, for the report's build id
#   OUT/mod                     INSTALL_MOD_PATH (--arm ...,modules=OUT/mod)
# defconfig plus what the host VM and the probes need; fails naming an
# option that did not end up enabled (a dependency the tree lacks).
# The CI examples in this directory call it once per side (docs/ci.md).
set -eu

if [ $# -ne 2 ]; then
	echo "usage: build-kernel.sh SRC OUT" >&2
	exit 2
fi
src=$1
out=$2
jobs=$(nproc)

# What kernel-arms.md lists, what makes it selectable, and what the probes
# attach through (fentry, kprobes, tracepoints: docs/probes.md).
need="KVM KVM_AMD KVM_INTEL VIRTUALIZATION VIRTIO VIRTIO_MENU VIRTIO_PCI VIRTIO_CONSOLE
      NET_9P NET_9P_VIRTIO 9P_FS DEVTMPFS BPF_SYSCALL DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT
      DEBUG_INFO_BTF FTRACE FUNCTION_TRACER DYNAMIC_FTRACE KPROBES KPROBE_EVENTS BPF_EVENTS
      USERFAULTFD PVH"

mkdir -p "$out"
make -C "$src" O="$out" defconfig
for opt in $need; do
	"$src/scripts/config" --file "$out/.config" --enable "$opt"
done
make -C "$src" O="$out" olddefconfig
for opt in $need TRACEPOINTS; do # TRACEPOINTS: selected by the tracers, not set by hand
	case "$opt" in
	DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT | PVH) continue ;; # a choice, and a speed-up (docs/kernel-arms.md)
	esac
	if ! grep -Eq "^CONFIG_$opt=(y|m)$" "$out/.config"; then
		echo "build-kernel.sh: CONFIG_$opt is not enabled in $out/.config after olddefconfig;" \
			"enable what it depends on (make -C $src O=$out menuconfig)" >&2
		exit 1
	fi
done
make -C "$src" O="$out" -j"$jobs" bzImage modules
rm -rf "$out/mod"
make -C "$src" O="$out" INSTALL_MOD_PATH="$out/mod" modules_install
