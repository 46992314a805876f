// SPDX-License-Identifier: GPL-2.0-or-later
#include "numa-host.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"

/* "0-3,8,10-11" into a bit mask (bits >= limit refused) or a CPU set */
static int parse_list(const char *s, uint64_t *mask, cpu_set_t *set, unsigned limit)
{
	while (*s && *s != '\n') {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			return -EINVAL;
		if (*end == '-') {
			s = end + 1;
			b = strtoul(s, &end, 10);
			if (end == s || b < a)
				return -EINVAL;
		}
		if (b >= limit)
			return -ERANGE;
		for (unsigned long i = a; i <= b; i++) {
			if (mask)
				*mask |= 1ull << i;
			if (set)
				CPU_SET(i, set);
		}
		s = end;
		if (*s == ',')
			s++;
	}
	return 0;
}

static int read_line(const char *path, char *buf, size_t len, struct sb_error *err)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");

	if (!f)
		return sb_error_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
	if (!fgets(buf, (int)len, f))
		return sb_error_set(err, -EIO, "%s is empty", path);
	return 0;
}

int numa_host_nodes(uint64_t *mask, struct sb_error *err)
{
	static const char path[] = "/sys/devices/system/node/online";
	char buf[256];
	int k = read_line(path, buf, sizeof(buf), err);

	*mask = 0;
	if (k == -ENOENT) {
		*mask = 1; /* a kernel without CONFIG_NUMA: one node */
		return 0;
	}
	if (k < 0)
		return k;
	k = parse_list(buf, mask, NULL, NUMA_HOST_MAX_NODES);
	if (k < 0 || !*mask)
		return sb_error_set(err, k < 0 ? k : -EINVAL, "%s: cannot parse \"%.64s\" as nodes 0..%d", path, buf,
				    NUMA_HOST_MAX_NODES - 1);
	return 0;
}

int numa_host_node_cpus(unsigned node, cpu_set_t *ret, struct sb_error *err)
{
	char path[96], buf[1024];
	int k;

	CPU_ZERO(ret);
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/cpulist", node);
	k = read_line(path, buf, sizeof(buf), err);
	if (k < 0)
		return k;
	k = parse_list(buf, NULL, ret, CPU_SETSIZE);
	if (k < 0 || !CPU_COUNT(ret))
		return sb_error_set(err, k < 0 ? k : -ENOENT, "%s: no CPUs in \"%.64s\"", path, buf);
	return 0;
}

int numa_set_policy(void *addr, uint64_t len, int mode_flags, uint64_t nodes, struct sb_error *err)
{
	unsigned long mask = (unsigned long)nodes;

	if (syscall(__NR_mbind, addr, (unsigned long)len, (unsigned long)mode_flags, &mask,
		    (unsigned long)NUMA_HOST_MAX_NODES + 1, 0ul) < 0)
		return sb_error_set(err, -errno, "mbind(mode %#x, nodes %#llx) over %llu bytes: %s", (unsigned)mode_flags,
				    (unsigned long long)nodes, (unsigned long long)len, strerror(errno));
	return 0;
}

int numa_mapping_pages(pid_t pid, const char *file, uint64_t *counts, unsigned max, struct sb_error *err)
{
	char path[64], line[4096];
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)pid);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return sb_error_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
	memset(counts, 0, max * sizeof(*counts));
	while (fgets(line, sizeof(line), f)) {
		const char *fp = strstr(line, " file=");

		if (!fp || strncmp(fp + 6, file, strlen(file)))
			continue;
		found = true;
		for (const char *p = line; (p = strstr(p, " N")); p += 2) {
			unsigned n;
			unsigned long long c;

			if (sscanf(p, " N%u=%llu", &n, &c) == 2 && n < max)
				counts[n] += c;
		}
	}
	if (!found)
		return sb_error_set(err, -ENOENT, "%s: no mapping of %s", path, file);
	return 0;
}
