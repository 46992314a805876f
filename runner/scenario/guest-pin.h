/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Long-term pinning of a QEMU's guest RAM, as an assigned device's DMA
 * mapping pins it (seed 002: NUMA-balancing invalidations of pinned guest
 * memory). The guest RAM must be a memfd (vm.backing "memfd": QEMU's
 * memory-backend-memfd); the runner opens it through /proc/PID/fd, maps it
 * shared and registers the mapping as io_uring fixed buffers, which
 * pin_user_pages() every page with FOLL_LONGTERM, the same pin VFIO takes,
 * so folio_maybe_dma_pinned() is true for each of them. The pages stay
 * pinned until guest_pin_close().
 *
 * Why io_uring rather than VFIO: VFIO needs an IOMMU group and a device to
 * assign (in a host VM an emulated IOMMU and PCI device bound to vfio-pci);
 * fixed buffers pin the same memory with the same flag from one system
 * call, on any kernel with io_uring (5.1+), and the kernel counts the pins
 * (/proc/vmstat nr_foll_pin_acquired), which the tests check.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct guest_pin;

/* The name QEMU's memfd guest RAM carries (/proc/PID/fd links, numa_maps' file=) */
#define GUEST_MEMFD_NAME "/memfd:memory-backend-memfd"

/*
 * Maps the first bytes of QEMU pid's memfd guest RAM shared into this
 * process (munmap() it when done): the pages are QEMU's, so a policy set
 * on the mapping (mbind) is the memfd's, seen by QEMU's mapping too.
 * Errors name the process and the fix (vm.backing "memfd").
 */
int guest_memfd_map(pid_t pid, uint64_t bytes, void **map, struct sb_error *err);

/*
 * Pins the first bytes of QEMU pid's memfd guest RAM (the fd whose link
 * reads "/memfd:memory-backend-memfd"). Errors name the process and the
 * fix: no such memfd (vm.backing is not memfd), io_uring disabled
 * (kernel.io_uring_disabled), the pin refused (RLIMIT_MEMLOCK without
 * CAP_IPC_LOCK).
 */
int guest_pin_open(pid_t pid, uint64_t bytes, struct guest_pin **ret, struct sb_error *err);

/* 4 KiB pages pinned. */
uint64_t guest_pin_pages(const struct guest_pin *p);

/* Unpins (closes the ring), unmaps; NULL is fine. */
void guest_pin_close(struct guest_pin *p);
