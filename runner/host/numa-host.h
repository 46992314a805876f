/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's NUMA nodes, as the numa-hinting scenario (seed 002) places a
 * guest on them: which nodes are online and their CPUs (sysfs), the memory
 * policy of a range (mbind(2), without libnuma), and how many pages of a
 * process's mapping sit on each node (/proc/PID/numa_maps).
 */
#pragma once

#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define NUMA_HOST_MAX_NODES 64

/* mbind(2) modes and flags (linux/mempolicy.h), which glibc does not declare */
#define NUMA_MPOL_BIND 2
#define NUMA_MPOL_INTERLEAVE 3
#define NUMA_MPOL_F_NUMA_BALANCING (1 << 13) /* Linux 5.12+, with MPOL_BIND only */

/* The online nodes as a bit mask (bit N: node N), from /sys/devices/system/node/online. */
int numa_host_nodes(uint64_t *mask, struct sb_error *err);

static inline unsigned numa_node_count(uint64_t mask)
{
	return (unsigned)__builtin_popcountll(mask);
}

/* Node n's CPUs (/sys/devices/system/node/nodeN/cpulist). */
int numa_host_node_cpus(unsigned node, cpu_set_t *ret, struct sb_error *err);

/*
 * mbind(addr, len, mode | flags, nodes): the policy of the range; pages
 * already allocated stay where they are. -errno with err set.
 */
int numa_set_policy(void *addr, uint64_t len, int mode_flags, uint64_t nodes, struct sb_error *err);

/*
 * Pages of pid's mapping whose numa_maps line names file (a substring of
 * its "file=" field) on each node: counts[n] for node n < max. -ENOENT
 * when no line matches.
 */
int numa_mapping_pages(pid_t pid, const char *file, uint64_t *counts, unsigned max, struct sb_error *err);
