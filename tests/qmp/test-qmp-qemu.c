// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The QMP library against a real QEMU with KVM: greeting and version,
 * query-status, query-stats for vm and vcpu, a background snapshot of a
 * 256 MiB guest (firmware only, idling in SeaBIOS) to an fd passed with
 * getfd, MIGRATION events in order, QMP error replies, quit, and QEMU
 * killed while we wait on it.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "check.h"
#include "clock.h"
#include "qemu-launch.h"
#include "qmp-commands.h"
#include "strv.h"
#include "test-accel.h"
#include "test-qemu.h"

/* Generous: guest code runs under KVM's instruction emulator here, and other tests share the CPUs. */
#define CONNECT_TIMEOUT_MS 60000
#define SNAPSHOT_TIMEOUT_MS 300000
#define FIRST_EXIT_TIMEOUT_MS 60000

static void test_greeting(struct qmp_client *c)
{
	struct qmp_version greeted, queried;
	struct sb_error err = { 0 };
	char version[32];

	CHECK_MSG(qmp_client_version(c, &greeted, &err) == 0, "%s", err.msg);
	CHECK_MSG(greeted.major >= 7, "QEMU %d.%d.%d", greeted.major, greeted.minor, greeted.micro);
	CHECK_MSG(qmp_query_version(c, &queried, &err) == 0, "%s", err.msg);
	CHECK(queried.major == greeted.major && queried.minor == greeted.minor && queried.micro == greeted.micro);
	CHECK(!strcmp(queried.package, greeted.package));
	/* QEMU >= 2.12 offers out-of-band execution in its greeting. */
	CHECK(qmp_client_has_capability(c, "oob"));
	CHECK(!qmp_client_has_capability(c, "no-such-capability"));
	printf("QEMU %d.%d.%d (%s)\n", greeted.major, greeted.minor, greeted.micro, greeted.package);
	snprintf(version, sizeof(version), "%d.%d.%d", greeted.major, greeted.minor, greeted.micro);
	CHECK_MSG(test_qemu_version_ok(version), "QEMU %s is not the %s this tier is for ($SNAPBENCH_QEMU %s)", version,
		  test_qemu_want(), getenv("SNAPBENCH_QEMU"));
}

/* The schema lookups the runner's probe makes (runner/preflight/host.c), against what this QEMU's release has. */
static void test_schema(struct qmp_client *c)
{
	struct json_object *schema = NULL;
	struct qmp_version v;
	struct sb_error err = { 0 };
	bool channels, want_channels;

	CHECK_MSG(qmp_client_version(c, &v, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_query_qmp_schema(c, &schema, &err) == 0, "%s", err.msg);
	printf("query-qmp-schema: %zu entities\n", json_object_array_length(schema));
	CHECK(qmp_schema_has_command(schema, "query-stats")); /* 7.1 */
	CHECK(qmp_schema_has_command(schema, "migrate") && !qmp_schema_has_command(schema, "no-such-command"));
	CHECK(qmp_schema_has_argument(schema, "migrate", "uri") && qmp_schema_has_argument(schema, "getfd", "fdname"));
	CHECK(!qmp_schema_has_argument(schema, "migrate", "no-such-argument"));
	/* migrate's and migrate-incoming's channels came in 8.2 */
	channels = qmp_schema_has_argument(schema, "migrate", "channels");
	want_channels = v.major > 8 || (v.major == 8 && v.minor >= 2);
	CHECK_MSG(channels == want_channels, "QEMU %d.%d: migrate %s channels", v.major, v.minor, channels ? "takes" : "lacks");
	CHECK(qmp_schema_has_argument(schema, "migrate-incoming", "channels") == want_channels);
	printf("migrate channels: %s\n", channels ? "yes" : "no");
	json_object_put(schema);
}

static void test_status(struct qmp_client *c)
{
	struct qmp_status st;
	struct sb_error err = { 0 };

	CHECK_MSG(qmp_query_status(c, &st, &err) == 0, "%s", err.msg);
	CHECK_MSG(st.running && !strcmp(st.status, "running"), "status %s", st.status);
}

/*
 * The vCPUs' first exits may still be ahead when QMP first answers (seen
 * once under ASan on a loaded machine): wait for the summed counter to move,
 * with a deadline, rather than assume it has.
 */
static int64_t wait_first_vcpu_exit(struct qmp_client *c)
{
	static const char *const exits[] = { "exits", NULL };
	uint64_t start = mono_ns(), deadline = start + FIRST_EXIT_TIMEOUT_MS * NSEC_PER_MSEC;
	struct sb_error err = { 0 };

	for (;;) {
		struct qmp_vcpu_stats s = { 0 };
		int64_t v = 0;

		CHECK_MSG(qmp_query_stats_vcpu(c, exits, &s, &err) == 0, "%s", err.msg);
		CHECK(qmp_stat_set_get(&s.sum, "exits", &v) == 0);
		qmp_vcpu_stats_clear(&s);
		if (v > 0) {
			printf("vcpu: first exits seen after %.2f s of waiting (%lld)\n", (double)(mono_ns() - start) / 1e9,
			       (long long)v);
			return v;
		}
		CHECK_MSG(mono_ns() < deadline, "the vCPUs' exits counter stayed 0 for %d s after QEMU started",
			  FIRST_EXIT_TIMEOUT_MS / 1000);
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000000L }, NULL);
	}
}

static void test_stats(struct qmp_client *c)
{
	static const char *const two[] = { "pf_taken", "exits", NULL };
	struct qmp_stat_set vm = { 0 };
	struct qmp_vcpu_stats vcpu = { 0 }, some = { 0 };
	struct sb_error err = { 0 };
	int64_t v, sum, first_exits = wait_first_vcpu_exit(c);

	CHECK_MSG(qmp_query_stats_vm(c, NULL, &vm, &err) == 0, "%s", err.msg);
	CHECK(vm.qom_path == NULL);
	CHECK_MSG(qmp_stat_set_get(&vm, "remote_tlb_flush", &v) == 0 && v >= 0, "no remote_tlb_flush");
	CHECK(qmp_stat_set_get(&vm, "remote_tlb_flush_requests", &v) == 0 && v >= 0);
	CHECK(qmp_stat_set_get(&vm, "no_such_stat", &v) == -ENOENT);
	printf("vm: %zu KVM stats (%zu non-scalar left out)\n", vm.n, vm.n_skipped);

	CHECK_MSG(qmp_query_stats_vcpu(c, NULL, &vcpu, &err) == 0, "%s", err.msg);
	CHECK_MSG(vcpu.n_vcpus == 2, "%zu vCPUs", vcpu.n_vcpus);
	sum = 0;
	for (size_t i = 0; i < vcpu.n_vcpus; i++) {
		CHECK(vcpu.vcpus[i].qom_path && vcpu.vcpus[i].qom_path[0] == '/');
		CHECK_MSG(qmp_stat_set_get(&vcpu.vcpus[i], "pf_taken", &v) == 0, "vCPU %zu has no pf_taken", i);
		sum += v;
		/* Booleans come as 0/1; histograms are left out and counted. */
		CHECK(qmp_stat_set_get(&vcpu.vcpus[i], "guest_mode", &v) == 0 && (v == 0 || v == 1));
		CHECK(qmp_stat_set_get(&vcpu.vcpus[i], "halt_wait_hist", &v) == -ENOENT);
		CHECK(vcpu.vcpus[i].n_skipped >= 1);
	}
	CHECK(qmp_stat_set_get(&vcpu.sum, "pf_taken", &v) == 0 && v == sum);
	CHECK(qmp_stat_set_get(&vcpu.sum, "exits", &v) == 0 && v >= first_exits); /* a counter: never goes back */
	printf("vcpu: %zu vCPUs, %zu KVM stats each, pf_taken summed %lld, exits summed %lld\n", vcpu.n_vcpus,
	       vcpu.vcpus[0].n, (long long)sum, (long long)v);

	/* A names filter keeps samples small. */
	CHECK_MSG(qmp_query_stats_vcpu(c, two, &some, &err) == 0, "%s", err.msg);
	CHECK(some.n_vcpus == 2 && some.vcpus[0].n == 2 && some.sum.n == 2);
	CHECK(qmp_stat_set_get(&some.vcpus[1], "exits", &v) == 0);

	/* Both targets in one round trip: the same stats, in the same order, none gone back. */
	struct qmp_stat_set vm2 = { 0 };
	struct qmp_vcpu_stats vcpu2 = { 0 };
	CHECK_MSG(qmp_query_stats_kvm(c, NULL, NULL, &vm2, &vcpu2, &err) == 0, "%s", err.msg);
	CHECK(vm2.n == vm.n && vcpu2.n_vcpus == vcpu.n_vcpus && vcpu2.sum.n == vcpu.sum.n);
	for (size_t i = 0; i < vm.n; i++)
		CHECK(!strcmp(vm2.stats[i].name, vm.stats[i].name));
	for (size_t i = 0; i < vcpu.sum.n; i++)
		CHECK(!strcmp(vcpu2.sum.stats[i].name, vcpu.sum.stats[i].name));
	CHECK(qmp_stat_set_get(&vcpu2.sum, "exits", &sum) == 0 && sum >= v);
	qmp_stat_set_clear(&vm2);
	qmp_vcpu_stats_clear(&vcpu2);
	CHECK_MSG(qmp_query_stats_kvm(c, (const char *const[]){ "remote_tlb_flush", NULL }, two, &vm2, &vcpu2, &err) == 0,
		  "%s", err.msg);
	CHECK(vm2.n == 1 && vcpu2.sum.n == 2);
	qmp_stat_set_clear(&vm2);
	qmp_vcpu_stats_clear(&vcpu2);

	qmp_stat_set_clear(&vm);
	qmp_vcpu_stats_clear(&vcpu);
	qmp_vcpu_stats_clear(&some);
}

/*
 * A sampler's pair scanned from QEMU's text (stats-scan.c) against json-c's
 * path, the VM paused so that nothing moves between them: the same stats,
 * values and vCPUs, and both replies taken by the scanner.
 */
static void test_stats_scanned(struct qmp_client *c)
{
	_cleanup_strv_free_ char **vm_names = NULL, **vcpu_names = NULL;
	struct qmp_stat_set vm = { 0 }, vm2 = { 0 };
	struct qmp_vcpu_stats vcpu = { 0 }, vcpu2 = { 0 };
	struct sb_error err = { 0 };
	uint64_t scanned;

	CHECK_MSG(qmp_query_stats_names(c, "vm", "cumulative", &vm_names, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_query_stats_names(c, "vcpu", "cumulative", &vcpu_names, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_execute(c, "stop", NULL, -1, 10000, NULL, &err) == 0, "%s", err.msg);
	scanned = qmp_client_replies_scanned(c);
	CHECK_MSG(qmp_query_stats_kvm(c, (const char *const *)vm_names, (const char *const *)vcpu_names, &vm, &vcpu,
				      &err) == 0, "%s", err.msg);
	CHECK(qmp_client_replies_scanned(c) == scanned + 2);
	CHECK_MSG(qmp_query_stats_vm(c, (const char *const *)vm_names, &vm2, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_query_stats_vcpu(c, (const char *const *)vcpu_names, &vcpu2, &err) == 0, "%s", err.msg);
	CHECK(qmp_client_replies_scanned(c) == scanned + 2); /* the single calls take json-c's path */
	CHECK(vm.n == vm2.n && vm.n > 0 && vcpu.n_vcpus == vcpu2.n_vcpus && vcpu.n_vcpus == 2);
	for (size_t i = 0; i < vm.n; i++)
		CHECK_MSG(!strcmp(vm.stats[i].name, vm2.stats[i].name) && vm.stats[i].value == vm2.stats[i].value,
			  "vm stat %s", vm.stats[i].name);
	for (size_t k = 0; k < vcpu.n_vcpus; k++) {
		CHECK(!strcmp(vcpu.vcpus[k].qom_path, vcpu2.vcpus[k].qom_path) && vcpu.vcpus[k].n == vcpu2.vcpus[k].n);
		for (size_t i = 0; i < vcpu.vcpus[k].n; i++)
			CHECK_MSG(!strcmp(vcpu.vcpus[k].stats[i].name, vcpu2.vcpus[k].stats[i].name) &&
					  vcpu.vcpus[k].stats[i].value == vcpu2.vcpus[k].stats[i].value,
				  "vCPU %zu stat %s", k, vcpu.vcpus[k].stats[i].name);
	}
	printf("scanned: %zu vm and %zu vcpu stats (2 vCPUs) as json-c gives them\n", vm.n, vcpu.sum.n);
	CHECK_MSG(qmp_execute(c, "cont", NULL, -1, 10000, NULL, &err) == 0, "%s", err.msg);
	qmp_stat_set_clear(&vm);
	qmp_stat_set_clear(&vm2);
	qmp_vcpu_stats_clear(&vcpu);
	qmp_vcpu_stats_clear(&vcpu2);
}

/*
 * Under TCG QEMU has no KVM statistics: every stats helper fails saying so,
 * and the schemas list none (the realkvm tier runs this test under KVM).
 */
static void test_stats_absent(struct qmp_client *c)
{
	_cleanup_strv_free_ char **names = NULL;
	struct qmp_stat_set vm = { 0 };
	struct qmp_vcpu_stats vcpu = { 0 };
	struct sb_error err = { 0 };

	CHECK(qmp_query_stats_vm(c, NULL, &vm, &err) < 0);
	CHECK_MSG(strstr(err.msg, "no KVM stats"), "%s", err.msg);
	CHECK(qmp_query_stats_vcpu(c, NULL, &vcpu, &err) < 0);
	CHECK_MSG(strstr(err.msg, "no KVM stats"), "%s", err.msg);
	CHECK(qmp_query_stats_kvm(c, NULL, NULL, &vm, &vcpu, &err) < 0);
	int k = qmp_query_stats_names(c, "vm", "cumulative", &names, &err);
	CHECK_MSG(k < 0 || !names || !names[0], "TCG: query-stats-schemas named KVM stats (%d)", k);
	printf("TCG: no KVM stats, as expected: %s\n", err.msg);
}

static void test_errors(struct qmp_client *c)
{
	struct json_object *ret = NULL, *args;
	struct sb_error err = { 0 };

	CHECK(qmp_execute(c, "no-such-command", NULL, -1, 10000, &ret, &err) == -EREMOTEIO);
	CHECK(ret == NULL);
	CHECK(!strcmp(qmp_client_last_error_class(c), "CommandNotFound"));
	CHECK_MSG(!strncmp(err.msg, "QMP command 'no-such-command' failed: CommandNotFound: ", 55), "%s", err.msg);

	args = json_tokener_parse("{\"uri\": \"fd:not-passed\"}");
	CHECK(args);
	CHECK(qmp_execute(c, "migrate", args, -1, 10000, NULL, &err) == -EREMOTEIO);
	json_object_put(args);
	CHECK(!strcmp(qmp_client_last_error_class(c), "GenericError"));
	CHECK_MSG(strstr(err.msg, "QMP command 'migrate' failed: GenericError: ") == err.msg, "%s", err.msg);
	CHECK_MSG(strstr(qmp_client_last_error_desc(c), "not-passed"), "%s", qmp_client_last_error_desc(c));

	/* The client is still usable, and the error is gone after a good command. */
	CHECK(qmp_execute(c, "query-status", NULL, -1, 10000, NULL, &err) == 0);
	CHECK(qmp_client_last_error_class(c) == NULL && qmp_client_last_error_desc(c) == NULL);

	/* getfd then closefd: the fd really travelled (closefd knows the name). */
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_MSG(qmp_getfd(c, fd, "probe", &err) == 0, "%s", err.msg);
	close(fd);
	CHECK_MSG(qmp_closefd(c, "probe", &err) == 0, "%s", err.msg);
	CHECK(qmp_closefd(c, "probe", &err) == -EREMOTEIO);
	CHECK(qmp_getfd(c, fd, "12", &err) == -EINVAL && strstr(err.msg, "fd name '12'"));
}

/*
 * QEMU finishes a migration in a bottom half after its last MIGRATION event:
 * migrate_fd_cleanup() unregisters the "migration" yank instance, and a new
 * migrate before that fails with "duplicate yank instance" (seen here on a
 * loaded machine). Wait for it with a deadline, through query-yank.
 */
static void wait_migration_cleanup(struct qmp_client *c)
{
	uint64_t start = mono_ns(), deadline = start + CONNECT_TIMEOUT_MS * NSEC_PER_MSEC;
	struct sb_error err = { 0 };

	for (;;) {
		struct json_object *ret = NULL;
		bool migration = false;

		CHECK_MSG(qmp_execute(c, "query-yank", NULL, -1, 10000, &ret, &err) == 0, "%s", err.msg);
		CHECK(json_object_is_type(ret, json_type_array));
		for (size_t i = 0; i < json_object_array_length(ret); i++) {
			struct json_object *type;
			if (json_object_object_get_ex(json_object_array_get_idx(ret, i), "type", &type))
				migration |= !strcmp(json_object_get_string(type), "migration");
		}
		json_object_put(ret);
		if (!migration)
			return;
		CHECK_MSG(mono_ns() < deadline, "QEMU still had its migration yank instance %d s after the migration ended",
			  CONNECT_TIMEOUT_MS / 1000);
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000000L }, NULL);
	}
}

static const char *migration_status_of(const struct qmp_event *e)
{
	struct json_object *s;

	CHECK(e->data && json_object_object_get_ex(e->data, "status", &s));
	return json_object_get_string(s);
}

static void test_background_snapshot(struct qmp_client *c, struct test_qemu *q)
{
	static const char *const order[] = { "setup", "active", "completed" };
	struct qmp_migration_info info = { 0 };
	struct sb_error err = { 0 };
	char path[192];
	struct stat st;
	bool on = false;
	int64_t prev_us = 0;
	uint64_t prev_ns = 0;
	int fd;

	CHECK_MSG(qmp_query_migrate(c, &info, &err) == 0, "%s", err.msg);
	CHECK_MSG(info.status == QMP_MIGRATION_NONE, "before any migration: %s", info.status_name);
	qmp_migration_info_clear(&info);

	fd = open(test_qemu_path(q, "snapshot.bin", path, sizeof(path)), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		  0600);
	CHECK(fd >= 0);
	CHECK_MSG(qmp_snapshot_background_start(c, fd, &err) == 0, "%s", err.msg);
	close(fd);

	/* The capability really is on (no silent fallback to a plain migration). */
	CHECK_MSG(qmp_query_migrate_capability(c, "background-snapshot", &on, &err) == 0, "%s", err.msg);
	CHECK(on);

	for (size_t i = 0; i < 3; i++) {
		_cleanup_qmp_event_ struct qmp_event *e = NULL;

		CHECK_MSG(qmp_wait_event(c, "MIGRATION", SNAPSHOT_TIMEOUT_MS, &e, &err) == 0, "%s", err.msg);
		CHECK_MSG(!strcmp(migration_status_of(e), order[i]), "MIGRATION event %zu: %s, expected %s", i,
			  migration_status_of(e), order[i]);
		CHECK(e->qemu_time_us > 0 && e->qemu_time_us >= prev_us);
		CHECK(e->recv_mono_ns >= prev_ns && e->recv_realtime_ns > 0);
		prev_us = e->qemu_time_us;
		prev_ns = e->recv_mono_ns;
	}
	/* A background snapshot pauses the VM briefly to save device state. */
	CHECK_MSG(qmp_wait_stop(c, 0, NULL, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_wait_resume(c, 0, NULL, &err) == 0, "%s", err.msg);

	CHECK_MSG(qmp_query_migrate(c, &info, &err) == 0, "%s", err.msg);
	CHECK_MSG(info.status == QMP_MIGRATION_COMPLETED, "status %s", info.status_name);
	CHECK(info.ram_total >= 256LL << 20);
	CHECK(info.ram_transferred > 0 && info.ram_remaining == 0);
	CHECK(info.ram_duplicate + info.ram_normal > 0);
	CHECK(info.total_time_ms >= 0 && info.error_desc == NULL);
	CHECK(stat(path, &st) == 0);
	CHECK_MSG(st.st_size > 0, "snapshot file is empty");
	printf("background snapshot: %lld ms, ram total %lld, transferred %lld, file %lld bytes\n",
	       (long long)info.total_time_ms, (long long)info.ram_total, (long long)info.ram_transferred,
	       (long long)st.st_size);
	qmp_migration_info_clear(&info);
	unlink(path);

	/* A second one, bandwidth-capped, waited for with qmp_wait_migration(). */
	wait_migration_cleanup(c);
	CHECK_MSG(qmp_migrate_set_max_bandwidth(c, 512LL << 20, &err) == 0, "%s", err.msg);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK_MSG(qmp_snapshot_background_start(c, fd, &err) == 0, "%s", err.msg);
	close(fd);
	enum qmp_migration_status last = QMP_MIGRATION_UNKNOWN;
	CHECK_MSG(qmp_wait_migration(c, QMP_MIGRATION_COMPLETED, SNAPSHOT_TIMEOUT_MS, &last, &err) == 0, "%s",
		  err.msg);
	CHECK(last == QMP_MIGRATION_COMPLETED);
	CHECK(stat(path, &st) == 0 && st.st_size > 0);
	unlink(path);
	wait_migration_cleanup(c); /* test_errors() migrates next */
}

struct killer {
	pid_t pid;
	int delay_ms;
};

static void *kill_later(void *arg)
{
	struct killer *k = arg;

	nanosleep(&(struct timespec){ .tv_sec = k->delay_ms / 1000, .tv_nsec = (k->delay_ms % 1000) * 1000000L },
		  NULL);
	kill(k->pid, SIGKILL);
	return NULL;
}

/* QEMU killed while we wait on it, and before a command: clean errors, no hang. */
static void test_qemu_dies(void)
{
	struct qmp_client *c = NULL;
	struct qmp_event *e = NULL;
	struct sb_error err = { 0 };
	struct test_qemu q;
	struct killer k;
	pthread_t th;
	int r;

	test_qemu_start(&q, 64, 1, NULL);
	CHECK_MSG(qmp_connect(q.qmp_path, CONNECT_TIMEOUT_MS, NULL, &c, &err) == 0, "%s", err.msg);
	k = (struct killer){ q.pid, 300 };
	CHECK(pthread_create(&th, NULL, kill_later, &k) == 0);
	r = qmp_wait_event(c, "NEVER", CONNECT_TIMEOUT_MS, &e, &err);
	CHECK(pthread_join(th, NULL) == 0);
	CHECK_MSG(r == -ECONNRESET && strstr(err.msg, "closed the connection"), "%d: %s", r, err.msg);
	CHECK(qmp_execute(c, "query-status", NULL, -1, 5000, NULL, &err) == -ENOTCONN);
	qmp_client_free(c);
	test_qemu_stop(&q);

	test_qemu_start(&q, 64, 1, NULL);
	CHECK_MSG(qmp_connect(q.qmp_path, CONNECT_TIMEOUT_MS, NULL, &c, &err) == 0, "%s", err.msg);
	kill(q.pid, SIGKILL);
	CHECK(test_qemu_wait_exit(&q, 60000) >= 0);
	r = qmp_execute(c, "query-status", NULL, -1, 5000, NULL, &err);
	CHECK_MSG(r == -ECONNRESET, "%d: %s", r, err.msg);
	qmp_client_free(c);
	test_qemu_stop(&q);
}

int main(void)
{
	static const char *const extra[] = { "-name", "snapbench-qmp-test", NULL };
	_cleanup_qmp_client_ struct qmp_client *c = NULL;
	struct sb_error err = { 0 };
	struct test_qemu q;
	int status;

	test_qemu_start(&q, 256, 2, extra);
	/* Connect right away: the socket appears a little later; qmp_connect retries. */
	CHECK_MSG(qmp_connect(q.qmp_path, CONNECT_TIMEOUT_MS, NULL, &c, &err) == 0, "%s", err.msg);
	CHECK(qmp_client_fd(c) >= 0 && !strcmp(qmp_client_label(c), q.qmp_path));

	test_greeting(c);
	test_schema(c);
	test_status(c);
	if (test_kvm()) {
		test_stats(c);
		test_stats_scanned(c);
	} else {
		test_stats_absent(c);
	}
	test_background_snapshot(c, &q);
	test_errors(c); /* after: its failed migrate leaves status "failed" */

	CHECK_MSG(qmp_quit(c, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_wait_shutdown(c, 10000, NULL, &err) == 0, "%s", err.msg);
	status = test_qemu_wait_exit(&q, 60000);
	CHECK_MSG(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "QEMU status %d", status);
	/* QEMU is gone: commands fail cleanly. */
	CHECK(qmp_execute(c, "query-status", NULL, -1, 5000, NULL, &err) < 0);
	printf("after quit: %s\n", err.msg);
	test_qemu_stop(&q);
	test_qemu_dies();
	printf("ok\n");
	return 0;
}
