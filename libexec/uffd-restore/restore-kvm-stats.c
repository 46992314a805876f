// SPDX-License-Identifier: GPL-2.0-or-later
/* A vCPU's KVM statistics by name (Documentation/virt/kvm/api.rst, KVM_GET_STATS_FD). */
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "restore-kvm-stats.h"

/* The descriptors' block is read whole: a kernel has some 50 vCPU stats, a few KiB. */
#define DESC_MAX_BYTES (1u << 20)

static int find_names(struct kvm_stats *s, const struct kvm_stats_header *h)
{
	size_t one = sizeof(struct kvm_stats_desc) + h->name_size;
	size_t len = (size_t)h->num_desc * one;
	char *block;
	ssize_t got;

	if (h->num_desc == 0 || len > DESC_MAX_BYTES)
		return -EPROTO;
	block = malloc(len);
	if (!block)
		return -ENOMEM;
	got = pread(s->fd, block, len, h->desc_offset);
	if (got != (ssize_t)len) {
		free(block);
		return got < 0 ? -errno : -EPROTO;
	}
	for (uint32_t i = 0; i < h->num_desc; i++) {
		const struct kvm_stats_desc *d = (const void *)(block + i * one);
		for (size_t k = 0; k < s->n; k++)
			if (!strncmp(d->name, s->names[k], h->name_size) && d->size == 1) {
				s->found[k] = true;
				s->offset[k] = d->offset;
			}
	}
	free(block);
	return 0;
}

int kvm_stats_open(struct kvm_stats *s, int vcpu_fd, const char *const *names, size_t n)
{
	struct kvm_stats_header h;
	int r;

	*s = (struct kvm_stats){ .fd = -1, .n = n };
	if (n > KVM_STATS_MAX_NAMES)
		return -E2BIG;
	memcpy(s->names, names, n * sizeof(*names));
	s->fd = ioctl(vcpu_fd, KVM_GET_STATS_FD, NULL);
	if (s->fd < 0)
		return -errno;
	if (pread(s->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
		r = -EPROTO;
		goto fail;
	}
	s->data_offset = h.data_offset;
	r = find_names(s, &h);
	if (r < 0)
		goto fail;
	return 0;
fail:
	kvm_stats_close(s);
	return r;
}

int kvm_stats_read(const struct kvm_stats *s, uint64_t *values)
{
	for (size_t k = 0; k < s->n; k++) {
		if (!s->found[k])
			continue;
		if (pread(s->fd, &values[k], sizeof(values[k]), (off_t)(s->data_offset + s->offset[k])) !=
		    (ssize_t)sizeof(values[k]))
			return -EPROTO;
	}
	return 0;
}

void kvm_stats_close(struct kvm_stats *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
