/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A vCPU's KVM statistics by name, from its binary stats fd (KVM_GET_STATS_FD). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define KVM_STATS_MAX_NAMES 8

struct kvm_stats {
	int fd;
	uint64_t data_offset;
	size_t n;
	const char *names[KVM_STATS_MAX_NAMES];
	uint64_t offset[KVM_STATS_MAX_NAMES]; /* of each name's value in the data block */
	bool found[KVM_STATS_MAX_NAMES];      /* false: this kernel's KVM does not have it */
};

/* Opens vcpu_fd's stats and finds names (at most KVM_STATS_MAX_NAMES); 0 or a negative errno. */
int kvm_stats_open(struct kvm_stats *s, int vcpu_fd, const char *const *names, size_t n);
/* The current values of the names found (others left as they are); 0 or a negative errno. */
int kvm_stats_read(const struct kvm_stats *s, uint64_t *values);
void kvm_stats_close(struct kvm_stats *s);
