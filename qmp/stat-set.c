// SPDX-License-Identifier: GPL-2.0-or-later
/* A set of KVM stats (name -> int64) and the sum over vCPUs: what both the
 * json-c path (stats.c) and the scanner (stats-scan.c) fill. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qmp-commands.h"
#include "qmp-internal.h"

void qmp_stat_set_clear(struct qmp_stat_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		free(set->stats[i].name);
	free(set->stats);
	free(set->qom_path);
	memset(set, 0, sizeof(*set));
}

void qmp_vcpu_stats_clear(struct qmp_vcpu_stats *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_vcpus; i++)
		qmp_stat_set_clear(&s->vcpus[i]);
	free(s->vcpus);
	qmp_stat_set_clear(&s->sum);
	memset(s, 0, sizeof(*s));
}

int qmp_stat_set_get(const struct qmp_stat_set *set, const char *name, int64_t *ret)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->stats[i].name, name)) {
			*ret = set->stats[i].value;
			return 0;
		}
	return -ENOENT;
}

int qmp_stat_set_add(struct qmp_stat_set *set, const char *name, size_t len, int64_t value)
{
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 16;
		struct qmp_stat *stats = realloc(set->stats, cap * sizeof(*stats));

		if (!stats)
			return -ENOMEM;
		set->stats = stats;
		set->cap = cap;
	}
	set->stats[set->n].name = strndup(name, len);
	if (!set->stats[set->n].name)
		return -ENOMEM;
	set->stats[set->n].value = value;
	set->n++;
	return 0;
}

int qmp_stats_sum_add(struct qmp_stat_set *sum, const struct qmp_stat_set *vcpu, const char **overflow)
{
	for (size_t i = 0; i < vcpu->n; i++) {
		const struct qmp_stat *s = &vcpu->stats[i];
		size_t j = i;

		/* every vCPU lists its stats in one order: look where the first put it */
		if (j >= sum->n || strcmp(sum->stats[j].name, s->name))
			for (j = 0; j < sum->n; j++)
				if (!strcmp(sum->stats[j].name, s->name))
					break;
		if (j == sum->n) {
			if (qmp_stat_set_add(sum, s->name, strlen(s->name), s->value) < 0)
				return -ENOMEM;
			continue;
		}
		if (__builtin_add_overflow(sum->stats[j].value, s->value, &sum->stats[j].value)) {
			if (overflow)
				*overflow = s->name;
			return -ERANGE;
		}
	}
	return 0;
}
