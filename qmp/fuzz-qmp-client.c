// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the input is everything a QMP peer sends, then it hangs
 * up. The client connects over a socketpair, runs a command, then a batch of
 * two (the sampler's query-stats of the VM and its vCPUs: ids sb-3 and sb-4,
 * which a failed first command shifts or abandons) and drains the events; any input must end in a clean error or success, never a crash,
 * a leak or a hang (the peer's EOF ends every wait at once).
 */
#include <json-c/json.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "qmp-commands.h"

#define MAX_INPUT (64 << 10) /* below the socket buffer, so one write never blocks */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qmp_options opts = { .max_message = 4096, .max_depth = 8, .max_events = 4 };
	struct qmp_client *c = NULL;
	struct sb_error err = { 0 };
	struct qmp_vcpu_stats stats = { 0 };
	struct qmp_stat_set vm = { 0 };
	struct qmp_event *e = NULL;
	int sv[2];

	if (size > MAX_INPUT)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	if (size > 0 && write(sv[1], data, size) != (ssize_t)size) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	shutdown(sv[1], SHUT_WR);

	if (qmp_connect_fd(sv[0], "fuzz", 1000, &opts, &c, &err) == 0) {
		qmp_client_set_command_timeout(c, 1000);
		if (qmp_query_stats_vcpu(c, NULL, &stats, &err) == 0)
			qmp_vcpu_stats_clear(&stats);
		if (qmp_query_stats_kvm(c, NULL, NULL, &vm, &stats, &err) == 0) {
			qmp_stat_set_clear(&vm);
			qmp_vcpu_stats_clear(&stats);
		}
		while (qmp_wait_event(c, NULL, 0, &e, &err) == 0)
			qmp_event_free(e);
		qmp_client_free(c);
	}
	close(sv[1]);
	return 0;
}
