// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The typed helpers against a scripted fake server: the exact commands and
 * arguments they send, how they read replies (stats of every value type,
 * migration info), and the errors they make of QEMU's answers (a capability
 * that did not take, a failed or cancelled migration, malformed replies).
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fake-qmp-server.h"
#include "qmp-commands.h"
#include "strv.h"

#define T 10000

static struct fake_server *server;

static struct qmp_client *start(const struct fake_step *script)
{
	struct qmp_client *c = NULL;
	struct sb_error err = { 0 };

	server = fake_server_start(script, 0);
	CHECK_MSG(qmp_connect(fake_server_path(server), T, NULL, &c, &err) == 0, "%s", err.msg);
	qmp_client_set_command_timeout(c, T);
	return c;
}

static int finish(struct qmp_client *c)
{
	qmp_client_free(c);
	return fake_server_finish(server);
}

#define CAPS_REPLY(bs, ev)                                                                                   \
	"{\"return\": [{\"state\": false, \"capability\": \"xbzrle\"}, {\"state\": " ev ", \"capability\": " \
	"\"events\"}, {\"state\": " bs ", \"capability\": \"background-snapshot\"}], \"id\": %ID%}\r\n"

static void test_stats(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT_ARGS("query-stats", "{\"target\": \"vm\", \"providers\": [{\"provider\": \"kvm\"}]}"),
		SEND("{\"return\": [{\"provider\": \"other\", \"stats\": [{\"name\": \"x\", \"value\": 1}]}, "
		     "{\"provider\": \"kvm\", \"stats\": [{\"name\": \"remote_tlb_flush\", \"value\": 12}, "
		     "{\"name\": \"huge\", \"value\": 18446744073709551615}, {\"name\": \"flag\", \"value\": true}, "
		     "{\"name\": \"hist\", \"value\": [1, 2, 3]}]}], \"id\": %ID%}\r\n"),
		EXPECT_ARGS("query-stats", "{\"target\": \"vcpu\", \"providers\": [{\"provider\": \"kvm\", "
					   "\"names\": [\"pf_taken\", \"guest_mode\"]}]}"),
		SEND("{\"return\": [{\"provider\": \"kvm\", \"qom-path\": \"/machine/cpu0\", \"stats\": "
		     "[{\"name\": \"pf_taken\", \"value\": 5}, {\"name\": \"guest_mode\", \"value\": true}]}, "
		     "{\"provider\": \"kvm\", \"qom-path\": \"/machine/cpu1\", \"stats\": "
		     "[{\"name\": \"guest_mode\", \"value\": false}, {\"name\": \"pf_taken\", \"value\": 7}]}], "
		     "\"id\": %ID%}\r\n"),
		/* TCG: no KVM provider at all. */
		EXPECT("query-stats"),
		SEND("{\"return\": [], \"id\": %ID%}\r\n"),
		/* A QEMU before 7.1. */
		EXPECT("query-stats"),
		SEND("{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"The command query-stats has not been "
		     "found\"}, \"id\": %ID%}\r\n"),
		EXPECT("query-stats"),
		SEND("{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"value\": 1}]}], \"id\": %ID%}\r\n"),
		END,
	};
	static const char *const names[] = { "pf_taken", "guest_mode", NULL };
	struct qmp_client *c = start(script);
	struct qmp_stat_set vm = { 0 };
	struct qmp_vcpu_stats vcpu = { 0 };
	struct sb_error err = { 0 };
	int64_t v;

	CHECK_MSG(qmp_query_stats_vm(c, NULL, &vm, &err) == 0, "%s", err.msg);
	CHECK(vm.n == 3 && vm.n_skipped == 1 && vm.qom_path == NULL);
	CHECK(qmp_stat_set_get(&vm, "remote_tlb_flush", &v) == 0 && v == 12);
	CHECK(qmp_stat_set_get(&vm, "huge", &v) == 0 && v == INT64_MAX);
	CHECK(qmp_stat_set_get(&vm, "flag", &v) == 0 && v == 1);
	CHECK(qmp_stat_set_get(&vm, "hist", &v) == -ENOENT);
	CHECK(qmp_stat_set_get(&vm, "x", &v) == -ENOENT); /* another provider's */
	qmp_stat_set_clear(&vm);
	qmp_stat_set_clear(&vm);

	CHECK_MSG(qmp_query_stats_vcpu(c, names, &vcpu, &err) == 0, "%s", err.msg);
	CHECK(vcpu.n_vcpus == 2 && !strcmp(vcpu.vcpus[1].qom_path, "/machine/cpu1"));
	CHECK(qmp_stat_set_get(&vcpu.vcpus[0], "pf_taken", &v) == 0 && v == 5);
	CHECK(qmp_stat_set_get(&vcpu.sum, "pf_taken", &v) == 0 && v == 12);
	CHECK(qmp_stat_set_get(&vcpu.sum, "guest_mode", &v) == 0 && v == 1);
	CHECK(vcpu.sum.n == 2);
	qmp_vcpu_stats_clear(&vcpu);

	CHECK(qmp_query_stats_vcpu(c, NULL, &vcpu, &err) == -ENODATA);
	CHECK_MSG(strstr(err.msg, "no KVM stats for target vcpu") && strstr(err.msg, "-accel kvm"), "%s", err.msg);
	CHECK(vcpu.n_vcpus == 0 && vcpu.vcpus == NULL);
	CHECK(qmp_query_stats_vm(c, NULL, &vm, &err) == -EREMOTEIO);
	CHECK(!strcmp(qmp_client_last_error_class(c), "CommandNotFound"));
	CHECK(qmp_query_stats_vm(c, NULL, &vm, &err) == -EPROTO);
	CHECK(vm.n == 0 && vm.stats == NULL);
	finish(c);
}

/* Both targets in one write; a failure of either leaves both cleared. */
static void test_stats_kvm(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT_ARGS("query-stats", "{\"providers\": [{\"provider\": \"kvm\", \"names\": [\"remote_tlb_flush\"]}], "
					   "\"target\": \"vm\"}"),
		EXPECT_ARGS("query-stats", "{\"providers\": [{\"provider\": \"kvm\", \"names\": [\"pf_taken\"]}], "
					   "\"target\": \"vcpu\"}"),
		SEND("{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"remote_tlb_flush\", \"value\": 3}]}], "
		     "\"id\": \"sb-2\"}\r\n"),
		SEND("{\"return\": [{\"provider\": \"kvm\", \"qom-path\": \"/machine/cpu0\", \"stats\": "
		     "[{\"name\": \"pf_taken\", \"value\": 5}]}, {\"provider\": \"kvm\", \"qom-path\": "
		     "\"/machine/cpu1\", \"stats\": [{\"name\": \"pf_taken\", \"value\": 6}]}], \"id\": \"sb-3\"}\r\n"),
		/* the vm reply fine, the vcpu one no list */
		EXPECT("query-stats"), EXPECT("query-stats"),
		SEND("{\"return\": [{\"provider\": \"kvm\", \"stats\": []}], \"id\": \"sb-4\"}\r\n"),
		SEND("{\"return\": {}, \"id\": \"sb-5\"}\r\n"),
		/* TCG: the vm reply has no KVM provider */
		EXPECT("query-stats"), EXPECT("query-stats"),
		SEND("{\"return\": [], \"id\": \"sb-6\"}\r\n"),
		SEND("{\"return\": [], \"id\": \"sb-7\"}\r\n"),
		END,
	};
	static const char *const vm_names[] = { "remote_tlb_flush", NULL }, *const vcpu_names[] = { "pf_taken", NULL };
	struct qmp_client *c = start(script);
	struct qmp_stat_set vm = { 0 };
	struct qmp_vcpu_stats vcpu = { 0 };
	struct sb_error err = { 0 };
	int64_t v;

	CHECK_MSG(qmp_query_stats_kvm(c, vm_names, vcpu_names, &vm, &vcpu, &err) == 0, "%s", err.msg);
	CHECK(qmp_stat_set_get(&vm, "remote_tlb_flush", &v) == 0 && v == 3);
	CHECK(vcpu.n_vcpus == 2 && qmp_stat_set_get(&vcpu.sum, "pf_taken", &v) == 0 && v == 11);
	CHECK(qmp_client_replies_scanned(c) == 2); /* QEMU's shape: no json-c tree */
	qmp_stat_set_clear(&vm);
	qmp_vcpu_stats_clear(&vcpu);

	CHECK(qmp_query_stats_kvm(c, NULL, NULL, &vm, &vcpu, &err) == -EPROTO);
	CHECK_MSG(strstr(err.msg, "query-stats returned no list"), "%s", err.msg);
	CHECK(vm.n == 0 && !vm.stats && vcpu.n_vcpus == 0 && !vcpu.vcpus);
	CHECK(qmp_query_stats_kvm(c, NULL, NULL, &vm, &vcpu, &err) == -ENODATA);
	CHECK_MSG(strstr(err.msg, "no KVM stats for target vm"), "%s", err.msg);
	CHECK(vm.n == 0 && vcpu.n_vcpus == 0);
	/* the vm reply with no stats scanned; the others left to json-c, whose errors they are */
	CHECK(qmp_client_replies_scanned(c) == 3);
	finish(c);
}

#define VM_REPLY(value, id) \
	"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"remote_tlb_flush\", \"value\": " value "}]}], \"id\": \"" id "\"}"
#define VCPU_REPLY(value, id)                                                                                   \
	"{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"pf_taken\", \"value\": " value "}], " \
	"\"qom-path\": \"/c0\"}], \"id\": \"" id "\"}"

/*
 * The scanner's way through the stream: a reply split over three writes, an
 * event and blank lines before one, two replies on one line (the first with
 * an escape, for json-c), and the late reply of an abandoned sample dropped.
 */
static void test_stats_kvm_stream(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-stats"), EXPECT("query-stats"),
		SEND("{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"remote_tlb"),
		PAUSE(30),
		SEND("_flush\", \"value\": 3}]}], \"id\": \"sb-2\"}"),
		PAUSE(30),
		SEND("\r\n"),
		SEND("{\"event\": \"RESUME\", \"timestamp\": {\"seconds\": 1, \"microseconds\": 2}}\r\n\r\n"),
		SEND(VCPU_REPLY("5", "sb-3") "\r\n"),
		EXPECT("query-stats"), EXPECT("query-stats"),
		SEND("{\"return\": [{\"provider\": \"kvm\", \"stats\": [{\"name\": \"remote\\u005ftlb_flush\", "
		     "\"value\": 4}]}], \"id\": \"sb-4\"} " VCPU_REPLY("6", "sb-5") "\r\n"),
		EXPECT("query-stats"), EXPECT("query-stats"),
		SEND(VM_REPLY("5", "sb-6") "\r\n"),
		PAUSE(600), /* the client waits 300 ms */
		SEND(VCPU_REPLY("7", "sb-7") "\r\n"),
		EXPECT("query-stats"), EXPECT("query-stats"),
		SEND(VM_REPLY("6", "sb-8") "\r\n" VCPU_REPLY("8", "sb-9") "\r\n"),
		END,
	};
	struct qmp_client *c = start(script);
	struct qmp_stat_set vm = { 0 };
	struct qmp_vcpu_stats vcpu = { 0 };
	struct sb_error err = { 0 };
	int64_t v, w;

	CHECK_MSG(qmp_query_stats_kvm(c, NULL, NULL, &vm, &vcpu, &err) == 0, "%s", err.msg);
	CHECK(qmp_stat_set_get(&vm, "remote_tlb_flush", &v) == 0 && v == 3);
	CHECK(qmp_stat_set_get(&vcpu.sum, "pf_taken", &w) == 0 && w == 5);
	CHECK(!strcmp(vcpu.vcpus[0].qom_path, "/c0"));
	CHECK(qmp_client_replies_scanned(c) == 2 && qmp_client_events_queued(c) == 1);
	qmp_stat_set_clear(&vm);
	qmp_vcpu_stats_clear(&vcpu);

	CHECK_MSG(qmp_query_stats_kvm(c, NULL, NULL, &vm, &vcpu, &err) == 0, "%s", err.msg);
	CHECK(qmp_stat_set_get(&vm, "remote_tlb_flush", &v) == 0 && v == 4);
	CHECK(qmp_stat_set_get(&vcpu.sum, "pf_taken", &w) == 0 && w == 6);
	CHECK(qmp_client_replies_scanned(c) == 3);
	qmp_stat_set_clear(&vm);
	qmp_vcpu_stats_clear(&vcpu);

	qmp_client_set_command_timeout(c, 300);
	CHECK(qmp_query_stats_kvm(c, NULL, NULL, &vm, &vcpu, &err) == -ETIMEDOUT);
	CHECK(vm.n == 0 && !vm.stats && vcpu.n_vcpus == 0);
	qmp_client_set_command_timeout(c, T);
	CHECK(qmp_client_replies_scanned(c) == 4);

	CHECK_MSG(qmp_query_stats_kvm(c, NULL, NULL, &vm, &vcpu, &err) == 0, "%s", err.msg);
	CHECK(qmp_stat_set_get(&vm, "remote_tlb_flush", &v) == 0 && v == 6);
	CHECK(qmp_stat_set_get(&vcpu.sum, "pf_taken", &w) == 0 && w == 8);
	CHECK(qmp_client_replies_scanned(c) == 6);
	qmp_stat_set_clear(&vm);
	qmp_vcpu_stats_clear(&vcpu);
	finish(c);
}

/* query-stats-schemas: one target's names of one type, the other targets' and types' left out */
static void test_stats_names(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT_ARGS("query-stats-schemas", "{\"provider\": \"kvm\"}"),
		SEND("{\"return\": [{\"provider\": \"kvm\", \"target\": \"vm\", \"stats\": "
		     "[{\"name\": \"remote_tlb_flush\", \"type\": \"cumulative\", \"exponent\": 0}, "
		     "{\"name\": \"pages_4k\", \"type\": \"instant\", \"exponent\": 0}]}, "
		     "{\"provider\": \"kvm\", \"target\": \"vcpu\", \"stats\": "
		     "[{\"name\": \"exits\", \"type\": \"cumulative\", \"exponent\": 0}, "
		     "{\"name\": \"halt_wait_hist\", \"type\": \"log2-histogram\", \"exponent\": -9}, "
		     "{\"name\": \"pf_taken\", \"type\": \"cumulative\", \"exponent\": 0}]}], \"id\": %ID%}\r\n"),
		EXPECT("query-stats-schemas"),
		SEND("{\"return\": [{\"provider\": \"kvm\", \"target\": \"vm\", \"stats\": "
		     "[{\"name\": \"pages_4k\", \"type\": \"instant\"}]}], \"id\": %ID%}\r\n"),
		/* TCG: no KVM schemas */
		EXPECT("query-stats-schemas"),
		SEND("{\"return\": [], \"id\": %ID%}\r\n"),
		EXPECT("query-stats-schemas"),
		SEND("{\"return\": [{\"provider\": \"kvm\", \"target\": \"vcpu\", \"stats\": [{\"name\": \"x\"}]}], "
		     "\"id\": %ID%}\r\n"),
		END,
	};
	struct qmp_client *c = start(script);
	struct sb_error err = { 0 };
	char **names = NULL;

	CHECK_MSG(qmp_query_stats_names(c, "vcpu", "cumulative", &names, &err) == 0, "%s", err.msg);
	CHECK(names && names[0] && !strcmp(names[0], "exits") && names[1] && !strcmp(names[1], "pf_taken") &&
	      !names[2]);
	strv_free(names);
	/* the vm target has no cumulative stat: an empty vector, not an error */
	CHECK_MSG(qmp_query_stats_names(c, "vm", "cumulative", &names, &err) == 0, "%s", err.msg);
	CHECK(names && !names[0]);
	strv_free(names);
	CHECK(qmp_query_stats_names(c, "vm", "cumulative", &names, &err) == -ENODATA && !names);
	CHECK_MSG(strstr(err.msg, "no KVM stats for target vm"), "%s", err.msg);
	CHECK(qmp_query_stats_names(c, "vcpu", "cumulative", &names, &err) == -EPROTO && !names);
	finish(c);
}

static void test_status_and_version(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND("{\"return\": {\"status\": \"postmigrate\", \"singlestep\": false, \"running\": false}, \"id\": "
		     "%ID%}\r\n"),
		EXPECT("query-status"),
		SEND("{\"return\": {\"status\": 3}, \"id\": %ID%}\r\n"),
		EXPECT("query-version"),
		SEND("{\"return\": {\"qemu\": {\"micro\": 1, \"minor\": 0, \"major\": 8}, \"package\": \"v8.0.1\"}, "
		     "\"id\": %ID%}\r\n"),
		END,
	};
	struct qmp_client *c = start(script);
	struct qmp_status st;
	struct qmp_version ver;
	struct sb_error err = { 0 };

	CHECK(qmp_query_status(c, &st, &err) == 0 && !st.running && !strcmp(st.status, "postmigrate"));
	CHECK(qmp_query_status(c, &st, &err) == -EPROTO);
	CHECK_MSG(strstr(err.msg, "the reply to query-status has no status and running"), "%s", err.msg);
	CHECK(qmp_query_version(c, &ver, &err) == 0);
	CHECK(ver.major == 8 && ver.minor == 0 && ver.micro == 1 && !strcmp(ver.package, "v8.0.1"));
	finish(c);
}

static void test_query_migrate(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-migrate"),
		SEND("{\"return\": {}, \"id\": %ID%}\r\n"),
		EXPECT("query-migrate"),
		SEND("{\"return\": {\"status\": \"completed\", \"setup-time\": 6, \"downtime\": 5, \"total-time\": 210, "
		     "\"ram\": {\"total\": 268967936, \"pages-per-second\": 305339, \"remaining\": 0, \"mbps\": 35.6, "
		     "\"transferred\": 795867, \"duplicate\": 65616, \"normal\": 50}}, \"id\": %ID%}\r\n"),
		EXPECT("query-migrate"),
		SEND("{\"return\": {\"status\": \"failed\", \"error-desc\": \"Unable to write to socket\"}, \"id\": "
		     "%ID%}\r\n"),
		EXPECT("query-migrate"),
		SEND("{\"return\": {\"status\": \"future-state\"}, \"id\": %ID%}\r\n"),
		END,
	};
	struct qmp_client *c = start(script);
	struct qmp_migration_info info;
	struct sb_error err = { 0 };

	CHECK(qmp_query_migrate(c, &info, &err) == 0);
	CHECK(info.status == QMP_MIGRATION_NONE && info.total_time_ms == -1 && info.ram_total == -1);
	qmp_migration_info_clear(&info);

	CHECK(qmp_query_migrate(c, &info, &err) == 0);
	CHECK(info.status == QMP_MIGRATION_COMPLETED && !strcmp(info.status_name, "completed"));
	CHECK(info.setup_time_ms == 6 && info.downtime_ms == 5 && info.total_time_ms == 210);
	CHECK(info.ram_total == 268967936 && info.ram_remaining == 0 && info.ram_transferred == 795867);
	CHECK(info.ram_duplicate == 65616 && info.ram_normal == 50 && info.ram_pages_per_second == 305339);
	CHECK(info.error_desc == NULL);
	qmp_migration_info_clear(&info);

	CHECK(qmp_query_migrate(c, &info, &err) == 0);
	CHECK(info.status == QMP_MIGRATION_FAILED && !strcmp(info.error_desc, "Unable to write to socket"));
	qmp_migration_info_clear(&info);

	CHECK(qmp_query_migrate(c, &info, &err) == 0);
	CHECK(info.status == QMP_MIGRATION_UNKNOWN && !strcmp(info.status_name, "future-state"));
	qmp_migration_info_clear(&info);

	CHECK(!strcmp(qmp_migration_status_to_string(QMP_MIGRATION_POSTCOPY_ACTIVE), "postcopy-active"));
	CHECK(qmp_migration_status_from_string("wait-unplug") == QMP_MIGRATION_WAIT_UNPLUG);
	CHECK(qmp_migration_status_from_string("unknown") == QMP_MIGRATION_UNKNOWN);
	CHECK(qmp_migration_status_from_string(NULL) == QMP_MIGRATION_UNKNOWN);
	finish(c);
}

static void test_snapshot_start(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT_ARGS("migrate-set-capabilities",
			    "{\"capabilities\": [{\"capability\": \"background-snapshot\", \"state\": true}, "
			    "{\"capability\": \"events\", \"state\": true}]}"),
		SEND(FAKE_OK),
		EXPECT("query-migrate-capabilities"),
		SEND(CAPS_REPLY("true", "true")),
		EXPECT("query-migrate-capabilities"),
		SEND(CAPS_REPLY("true", "true")),
		EXPECT_FD("getfd"),
		SEND(FAKE_OK),
		EXPECT_ARGS("migrate", "{\"uri\": \"fd:snapbench-snapshot\"}"),
		SEND("{\"timestamp\": {\"seconds\": 1, \"microseconds\": 0}, \"event\": \"MIGRATION\", \"data\": "
		     "{\"status\": \"setup\"}}\r\n" FAKE_OK),
		END,
	};
	struct qmp_client *c = start(script);
	struct sb_error err = { 0 };
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC), got;

	CHECK(fd >= 0);
	CHECK_MSG(qmp_snapshot_background_start(c, fd, &err) == 0, "%s", err.msg);
	CHECK(qmp_client_events_queued(c) == 1);
	got = finish(c);
	CHECK(got >= 0);
	close(got);
	close(fd);
}

static void test_capability_did_not_take(void)
{
	/* QEMU says yes, and the capability is still off: the silent fallback. */
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("migrate-set-capabilities"),
		SEND(FAKE_OK),
		EXPECT("query-migrate-capabilities"),
		SEND(CAPS_REPLY("false", "true")),
		/* A capability this QEMU does not know. */
		EXPECT("migrate-set-capabilities"),
		SEND(FAKE_OK),
		EXPECT("query-migrate-capabilities"),
		SEND(CAPS_REPLY("false", "false")),
		/* events set on, still off. */
		EXPECT("migrate-set-capabilities"),
		SEND(FAKE_OK),
		EXPECT("query-migrate-capabilities"),
		SEND(CAPS_REPLY("false", "false")),
		END,
	};
	static const struct qmp_migrate_capability bs = { "background-snapshot", true };
	static const struct qmp_migrate_capability future = { "x-future", true };
	static const struct qmp_migrate_capability events = { "events", true };
	struct qmp_client *c = start(script);
	struct sb_error err = { 0 };

	CHECK(qmp_migrate_set_capabilities(c, &bs, 1, &err) == -EOPNOTSUPP);
	CHECK_MSG(strstr(err.msg, "'background-snapshot' is still off") && strstr(err.msg, "userfaultfd") &&
			  strstr(err.msg, "vm.unprivileged_userfaultfd=1"),
		  "%s", err.msg);
	CHECK(qmp_migrate_set_capabilities(c, &future, 1, &err) == -EOPNOTSUPP);
	CHECK_MSG(strstr(err.msg, "does not know migration capability 'x-future'"), "%s", err.msg);
	CHECK(qmp_migrate_set_capabilities(c, &events, 1, &err) == -EOPNOTSUPP);
	CHECK_MSG(strstr(err.msg, "'events' is still off after migrate-set-capabilities set it on"), "%s", err.msg);
	finish(c);
}

static void test_migrate_refused(void)
{
	/* migrate fails: the fd handed over with getfd is closed again in QEMU. */
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT_FD("getfd"),
		SEND(FAKE_OK),
		EXPECT_ARGS("migrate", "{\"uri\": \"fd:sink\"}"),
		SEND("{\"error\": {\"class\": \"GenericError\", \"desc\": \"There's a migration process in "
		     "progress\"}, \"id\": %ID%}\r\n"),
		EXPECT_ARGS("closefd", "{\"fdname\": \"sink\"}"),
		SEND(FAKE_OK),
		EXPECT("migrate_cancel"),
		SEND(FAKE_OK),
		END,
	};
	struct qmp_client *c = start(script);
	struct sb_error err = { 0 };
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC), got;

	CHECK(qmp_migrate_to_fd(c, fd, "sink", &err) == -EREMOTEIO);
	CHECK_MSG(!strcmp(err.msg, "QMP command 'migrate' failed: GenericError: There's a migration process in "
				   "progress"),
		  "%s", err.msg);
	CHECK(qmp_migrate_cancel(c, &err) == 0);
	CHECK(qmp_migrate_to_fd(c, fd, "1", &err) == -EINVAL);
	CHECK(qmp_migrate_to_fd(c, fd, "a b", &err) == -EINVAL);
	CHECK(qmp_getfd(c, -1, "ok", &err) == -EBADF);
	got = finish(c);
	close(got);
	close(fd);
}

static void test_wait_migration(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-status"),
		SEND("{\"event\": \"MIGRATION\", \"data\": {\"status\": \"setup\"}}\r\n"
		     "{\"event\": \"MIGRATION\", \"data\": {\"status\": \"active\"}}\r\n"
		     "{\"event\": \"MIGRATION\", \"data\": {}}\r\n" FAKE_OK),
		PAUSE(50),
		SEND("{\"event\": \"MIGRATION\", \"data\": {\"status\": \"failed\"}}\r\n"),
		/* qmp_wait_migration asks why. */
		EXPECT("query-migrate"),
		SEND("{\"return\": {\"status\": \"failed\", \"error-desc\": \"Broken pipe\"}, \"id\": %ID%}\r\n"),
		EXPECT("migrate_cancel"),
		SEND("{\"event\": \"MIGRATION\", \"data\": {\"status\": \"cancelling\"}}\r\n"
		     "{\"event\": \"MIGRATION\", \"data\": {\"status\": \"cancelled\"}}\r\n" FAKE_OK),
		END,
	};
	struct qmp_client *c = start(script);
	struct sb_error err = { 0 };
	enum qmp_migration_status last = QMP_MIGRATION_UNKNOWN;

	CHECK(qmp_query_status(c, &(struct qmp_status){ 0 }, &err) == -EPROTO); /* FAKE_OK has no status */
	CHECK(qmp_wait_migration(c, QMP_MIGRATION_ACTIVE, T, &last, &err) == 0 && last == QMP_MIGRATION_ACTIVE);
	CHECK(qmp_wait_migration(c, QMP_MIGRATION_COMPLETED, T, &last, &err) == -EIO);
	CHECK(last == QMP_MIGRATION_FAILED);
	CHECK_MSG(strstr(err.msg, "migration failed: Broken pipe"), "%s", err.msg);
	CHECK(qmp_migrate_cancel(c, &err) == 0);
	CHECK(qmp_wait_migration(c, QMP_MIGRATION_COMPLETED, T, &last, &err) == -ECANCELED);
	CHECK(last == QMP_MIGRATION_CANCELLED);
	CHECK(qmp_wait_migration(c, QMP_MIGRATION_COMPLETED, 100, NULL, &err) == -ETIMEDOUT);
	CHECK_MSG(strstr(err.msg, "did not reach status completed within 100 ms"), "%s", err.msg);
	finish(c);
}

static void test_parameters_and_quit(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT_ARGS("migrate-set-parameters", "{\"max-bandwidth\": 1048576}"),
		SEND(FAKE_OK),
		EXPECT("query-migrate-parameters"),
		SEND("{\"return\": {\"max-bandwidth\": 1048576, \"downtime-limit\": 300}, \"id\": %ID%}\r\n"),
		EXPECT_ARGS("migrate-set-parameters", "{\"max-bandwidth\": 5}"),
		SEND(FAKE_OK),
		EXPECT("query-migrate-parameters"),
		SEND("{\"return\": {\"max-bandwidth\": 134217728}, \"id\": %ID%}\r\n"),
		EXPECT_ARGS("migrate-set-parameters", "{\"downtime-limit\": 100}"),
		SEND(FAKE_OK),
		/* QEMU exits before its reply to quit gets out: still a success. */
		EXPECT("quit"),
		SEND("{\"timestamp\": {\"seconds\": 5, \"microseconds\": 0}, \"event\": \"SHUTDOWN\", \"data\": "
		     "{\"guest\": false, \"reason\": \"host-qmp-quit\"}}\r\n"),
		HANG_UP,
	};
	struct qmp_client *c = start(script);
	struct json_object *params = json_tokener_parse("{\"downtime-limit\": 100}");
	struct qmp_event *e = NULL;
	struct sb_error err = { 0 };

	CHECK_MSG(qmp_migrate_set_max_bandwidth(c, 1 << 20, &err) == 0, "%s", err.msg);
	CHECK(qmp_migrate_set_max_bandwidth(c, 5, &err) == -EOPNOTSUPP);
	CHECK_MSG(strstr(err.msg, "max-bandwidth is 134217728 after setting it to 5"), "%s", err.msg);
	CHECK(qmp_migrate_set_max_bandwidth(c, -1, &err) == -EINVAL);
	CHECK(qmp_migrate_set_parameters(c, params, &err) == 0);
	CHECK(qmp_migrate_set_parameters(c, NULL, &err) == -EINVAL);
	json_object_put(params);
	CHECK_MSG(qmp_quit(c, &err) == 0, "%s", err.msg);
	CHECK(qmp_wait_shutdown(c, 0, &e, &err) == 0 && e->qemu_time_us == 5000000);
	qmp_event_free(e);
	CHECK(qmp_wait_stop(c, 0, NULL, &err) == -ENOTCONN);
	finish(c);
}

/* The channels form (QEMU 8.2+) and a unix socket: the arguments QEMU gets. */
static void test_migrate_channels(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT_FD("getfd"),
		SEND(FAKE_OK),
		EXPECT_ARGS("migrate", "{\"channels\": [{\"channel-type\": \"main\", \"addr\": {\"transport\": \"socket\","
				       " \"type\": \"fd\", \"str\": \"sink\"}}]}"),
		SEND(FAKE_OK),
		EXPECT_ARGS("migrate-incoming", "{\"channels\": [{\"channel-type\": \"main\", \"addr\": {\"transport\": "
						"\"socket\", \"type\": \"unix\", \"path\": \"/run/x/mig.sock\"}}]}"),
		SEND(FAKE_OK),
		EXPECT_ARGS("migrate", "{\"uri\": \"unix:/run/x/mig.sock\"}"),
		SEND(FAKE_OK),
		END,
	};
	struct qmp_client *c = start(script);
	struct sb_error err = { 0 };
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC), got;
	char long_path[QMP_UNIX_PATH_MAX + 8];

	CHECK_MSG(qmp_migrate(c, &(struct qmp_migrate_address){ .fd = fd, .fdname = "sink", .channels = true }, &err) == 0,
		  "%s", err.msg);
	CHECK_MSG(qmp_migrate_incoming(c, &(struct qmp_migrate_address){ .unix_path = "/run/x/mig.sock", .channels = true },
				       &err) == 0,
		  "%s", err.msg);
	CHECK_MSG(qmp_migrate(c, &(struct qmp_migrate_address){ .unix_path = "/run/x/mig.sock" }, &err) == 0, "%s", err.msg);
	/* a path the kernel would cut short never reaches QEMU */
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	CHECK(qmp_migrate(c, &(struct qmp_migrate_address){ .unix_path = long_path }, &err) == -ENAMETOOLONG);
	CHECK_MSG(strstr(err.msg, "shorter directory"), "%s", err.msg);
	got = finish(c);
	close(got);
	close(fd);
}

/* Commands and their arguments in a query-qmp-schema reply (its shape on QEMU 7.2 and 10.0). */
static void test_schema(void)
{
	static const struct fake_step script[] = {
		FAKE_HANDSHAKE,
		EXPECT("query-qmp-schema"),
		SEND("{\"return\": ["
		     "{\"name\": \"migrate\", \"meta-type\": \"command\", \"arg-type\": \"150\", \"ret-type\": \"0\"},"
		     "{\"name\": \"query-stats\", \"meta-type\": \"command\", \"arg-type\": \"151\", \"ret-type\": \"152\"},"
		     "{\"name\": \"migrate-incoming\", \"meta-type\": \"command\", \"arg-type\": \"153\", \"ret-type\": \"0\"},"
		     "{\"name\": \"150\", \"meta-type\": \"object\", \"members\": [{\"name\": \"uri\", \"default\": null, "
		     "\"type\": \"str\"}, {\"name\": \"channels\", \"default\": null, \"type\": \"[154]\"}]},"
		     "{\"name\": \"153\", \"meta-type\": \"object\", \"members\": [{\"name\": \"uri\", \"type\": \"str\"}]},"
		     "{\"name\": \"channels\", \"meta-type\": \"enum\", \"values\": []}"
		     "], \"id\": %ID%}\r\n"),
		EXPECT("query-qmp-schema"),
		SEND("{\"return\": {}, \"id\": %ID%}\r\n"),
		END,
	};
	struct qmp_client *c = start(script);
	struct json_object *schema = NULL;
	struct sb_error err = { 0 };

	CHECK_MSG(qmp_query_qmp_schema(c, &schema, &err) == 0, "%s", err.msg);
	CHECK(qmp_schema_has_command(schema, "query-stats"));
	CHECK(!qmp_schema_has_command(schema, "channels")); /* an enum, not a command */
	CHECK(!qmp_schema_has_command(schema, "150"));
	CHECK(qmp_schema_has_argument(schema, "migrate", "channels"));
	CHECK(qmp_schema_has_argument(schema, "migrate", "uri"));
	CHECK(!qmp_schema_has_argument(schema, "migrate-incoming", "channels"));
	CHECK(!qmp_schema_has_argument(schema, "migrate", "blk"));
	CHECK(!qmp_schema_has_argument(schema, "query-stats", "target")); /* its argument type is not in this reply */
	CHECK(!qmp_schema_has_argument(schema, "no-such-command", "uri"));
	json_object_put(schema);
	CHECK(qmp_query_qmp_schema(c, &schema, &err) == -EPROTO && !schema);
	CHECK_MSG(strstr(err.msg, "query-qmp-schema"), "%s", err.msg);
	finish(c);
}

int main(void)
{
	test_stats();
	test_stats_kvm();
	test_stats_kvm_stream();
	test_stats_names();
	test_status_and_version();
	test_query_migrate();
	test_snapshot_start();
	test_capability_did_not_take();
	test_migrate_refused();
	test_wait_migration();
	test_parameters_and_quit();
	test_migrate_channels();
	test_schema();
	printf("ok\n");
	return 0;
}
