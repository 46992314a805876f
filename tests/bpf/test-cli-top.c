// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench top's targets against a real QEMU (2 vCPUs idling in SeaBIOS,
 * -name snapbench-top-test) with two QMP sockets: the test's own and one
 * for top, since QEMU serves one client per socket.
 *
 *  --qmp   top --qmp SOCK --count 3 --interval 1s --json: the pid is the
 *          QEMU's (from the socket), kvm.* rows follow the probes' rows
 *          as a group of their own, kvm.exits grows from line to line.
 *          The test pauses the guest (QMP stop) once the second line is
 *          out, so KVM's stats stand still before top's third read: every
 *          kvm row's value there must then equal query-stats' own read,
 *          exactly, and its total that value less one taken no earlier
 *          than the test's read before top started.
 *  --pid   alone: top finds the QMP sockets on QEMU's command line, passes
 *          over the one the test holds (no greeting) and takes its own;
 *          --no-qmp leaves them alone and says so.
 *  text    the header names the socket, kvm.* rows under the probes'.
 *  screen  on a pseudo-terminal each refresh redraws the screen (home,
 *          clear, then the table), and --sort total orders the probes'
 *          rows by their totals.
 *  none    top --count 2 --json lists this QEMU among the host's VMs, with
 *          its pid, -name and probes' rows.
 *  rescan  top with no target in plain lines, 500 ms refreshes: a second
 *          QEMU started after top's first table is said to have started
 *          and gets rows of its own; killed, it is said to have exited,
 *          its rows go, and top goes on with the first; top's fds are as
 *          many after as before the second QEMU came and went (its probes'
 *          links and maps closed). With --json the same: the object of
 *          the refresh that took the second QEMU names it in started and
 *          covers it in vms (since_s after top's start), the one after it
 *          exited names it in exited and covers it no more.
 *  errors  --qmp: no such socket (4), a regular file (2), a socket that
 *          speaks something else (2), the socket of another pid than
 *          --pid's (2); --pid with --vm (2).
 *
 * Usage: test-cli-top PATH-TO-SNAPBENCH
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "qemu-launch.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "strv.h"
#include "test-json.h"
#include "test-spawn.h"
#include "test-tmp.h"

#define T 30000
#define NAME "snapbench-top-test"

static const char *snapbench;

/* KVM's cumulative stats of the VM as query-stats reads them: vm and summed vCPU values by name */
struct kvm_read {
	char **names;
	int64_t *values;
	size_t n;
};

static void kvm_read(struct qmp_client *c, struct kvm_read *r)
{
	struct sb_error err = { 0 };
	char **vm = NULL, **vcpu = NULL;
	struct qmp_stat_set vs = { 0 };
	struct qmp_vcpu_stats cs = { 0 };

	CHECK_MSG(qmp_query_stats_names(c, "vm", "cumulative", &vm, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_query_stats_names(c, "vcpu", "cumulative", &vcpu, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_query_stats_vm(c, NULL, &vs, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_query_stats_vcpu(c, NULL, &cs, &err) == 0, "%s", err.msg);
	*r = (struct kvm_read){ 0 };
	r->values = calloc(strv_length(vm) + strv_length(vcpu) + 1, sizeof(*r->values));
	CHECK(r->values);
	for (int t = 0; t < 2; t++)
		for (char **n = t ? vcpu : vm; n && *n; n++) {
			int64_t v;

			if (qmp_stat_set_get(t ? &cs.sum : &vs, *n, &v) < 0)
				continue;
			CHECK(strv_pushf(&r->names, "kvm.%s", *n) == 0);
			r->values[r->n++] = v;
		}
	strv_free(vm);
	strv_free(vcpu);
	qmp_stat_set_clear(&vs);
	qmp_vcpu_stats_clear(&cs);
}

static int64_t kvm_get(const struct kvm_read *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->names[i], name))
			return r->values[i];
	CHECK_MSG(false, "query-stats has no %s", name);
	return -1;
}

static struct json_object *row_of(struct json_object *o, const char *name)
{
	struct json_object *rows = jget(o, "rows");

	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		struct json_object *r = json_object_array_get_idx(rows, i);
		if (!strcmp(jstr(r, "name"), name))
			return r;
	}
	return NULL;
}

static struct json_object *parse(const char *line)
{
	struct json_object *o = json_tokener_parse(line);

	CHECK_MSG(o && json_object_is_type(o, json_type_object), "not a JSON object: %s", line);
	return o;
}

static void pause_guest(struct qmp_client *c, bool stop)
{
	struct sb_error err = { 0 };

	CHECK_MSG(qmp_execute(c, stop ? "stop" : "cont", NULL, -1, T, NULL, &err) == 0, "%s", err.msg);
}

static void test_qmp(struct test_qemu *q, struct qmp_client *c, const char *sock)
{
	char *argv[] = { (char *)snapbench, "top", "--qmp", (char *)sock, "--count", "3", "--interval", "1s", "--json",
			 NULL };
	struct json_object *lines[3] = {};
	struct kvm_read before, after;
	struct test_child child;
	int64_t exits[3];
	size_t n = 0, checked = 0;
	char *line;

	kvm_read(c, &before);
	test_spawn(&child, argv);
	while ((line = test_child_line(&child))) {
		CHECK_MSG(n < 3, "more than 3 lines: %s", line);
		lines[n++] = parse(line);
		free(line);
		/* KVM's stats stand still from here: top's third read sees what the test reads after it */
		if (n == 2)
			pause_guest(c, true);
	}
	CHECK(test_child_wait(&child) == 0);
	CHECK_MSG(n == 3, "%zu lines", n);
	kvm_read(c, &after);
	pause_guest(c, false);

	for (size_t i = 0; i < 3; i++) {
		struct json_object *rows = jget(lines[i], "rows"), *r;
		bool in_kvm = false;

		CHECK(jint(lines[i], "pid") == q->pid);
		CHECK(!strcmp(jstr(lines[i], "kvm/source"), sock) && jnull(lines[i], "kvm/reason"));
		/* the probes' rows first, then KVM's as their own group */
		for (size_t k = 0; k < json_object_array_length(rows); k++) {
			r = json_object_array_get_idx(rows, k);
			bool kvm = !strcmp(jstr(r, "group"), "kvm");
			CHECK_MSG(kvm || !in_kvm, "row %s after the kvm rows", jstr(r, "name"));
			in_kvm = kvm;
			CHECK(kvm == !strncmp(jstr(r, "name"), "kvm.", 4));
		}
		r = row_of(lines[i], "kvm.exits");
		CHECK_MSG(r, "no kvm.exits row in line %zu", i + 1);
		exits[i] = jint(r, "total");
	}
	printf("--qmp: kvm.exits totals %lld %lld %lld\n", (long long)exits[0], (long long)exits[1], (long long)exits[2]);
	CHECK(exits[0] > 0 && exits[1] > exits[0] && exits[2] >= exits[1]);

	struct json_object *rows = jget(lines[2], "rows");
	for (size_t k = 0; k < json_object_array_length(rows); k++) {
		struct json_object *r = json_object_array_get_idx(rows, k);
		const char *name = jstr(r, "name");
		int64_t value, total;

		if (strcmp(jstr(r, "group"), "kvm"))
			continue;
		value = jint(r, "value");
		total = jint(r, "total");
		CHECK_MSG(value == kvm_get(&after, name), "%s: top %lld, query-stats %lld", name, (long long)value,
			  (long long)kvm_get(&after, name));
		CHECK_MSG(total > 0 && value - total >= kvm_get(&before, name), "%s: total %lld of %lld, %lld before top",
			  name, (long long)total, (long long)value, (long long)kvm_get(&before, name));
		checked++;
	}
	printf("--qmp: %zu kvm rows in the last line equal query-stats' read, kvm.exits %lld\n", checked,
	       (long long)kvm_get(&after, "kvm.exits"));
	CHECK(checked >= 2);
	for (size_t i = 0; i < 3; i++)
		json_object_put(lines[i]);
	strv_free(before.names);
	strv_free(after.names);
	free(before.values);
	free(after.values);
}

/* --pid alone: the QMP socket the test holds gives no greeting; top takes the next */
static void test_pid(struct test_qemu *q, const char *sock)
{
	char pid[16], *out;
	struct json_object *o;

	snprintf(pid, sizeof(pid), "%d", (int)q->pid);
	{
		char *argv[] = { (char *)snapbench, "top", "--pid", pid, "--count", "2", "--interval", "500ms", "--json", NULL };
		int rc = test_run(argv, &out);
		char *second = strchr(out, '\n');

		CHECK_MSG(rc == 0 && second, "exit %d: %s", rc, out);
		o = parse(second + 1);
		CHECK_MSG(!strcmp(jstr(o, "kvm/source"), sock), "%s", json_object_to_json_string(o));
		CHECK(row_of(o, "kvm.exits") && jint(row_of(o, "kvm.exits"), "total") > 0);
		printf("--pid: KVM stats from %s, kvm.exits %lld\n", sock, (long long)jint(row_of(o, "kvm.exits"), "total"));
		json_object_put(o);
		free(out);
	}
	{
		char *argv[] = { (char *)snapbench, "top", "--pid", pid, "--no-qmp", "--count", "1", "--interval", "200ms",
				 "--json", NULL };

		CHECK(test_run(argv, &out) == 0);
		o = parse(out);
		CHECK(jnull(o, "kvm/source") && !strcmp(jstr(o, "kvm/reason"), "--no-qmp") && !row_of(o, "kvm.exits"));
		json_object_put(o);
		free(out);
	}
}

/* Plain lines (stdout is no terminal): the header names the source, kvm.* rows under the probes' */
static void test_text(const char *sock)
{
	char *argv[] = { (char *)snapbench, "top", "--qmp", (char *)sock, "--count", "1", "--interval", "500ms", NULL };
	char want[300], *out;
	unsigned long long total = 0;
	const char *row;

	CHECK(test_run(argv, &out) == 0);
	snprintf(want, sizeof(want), ", KVM stats from %s\n", sock);
	CHECK_MSG(strstr(out, want) && !strchr(out, '\033'), "%s", out);
	row = strstr(out, "\n kvm.exits ");
	CHECK_MSG(row && sscanf(row, "\n kvm.exits %llu", &total) == 1 && total > 0, "%s", out);
	CHECK_MSG(strstr(out, "\n unmap_hva ") < row, "%s", out);
	printf("text: kvm.exits %llu under the probes' rows\n", total);
	free(out);
}

extern char **environ;

/* argv run with its stdout on a pseudo-terminal: all it wrote there (malloc'ed); its exit code in *rc */
static char *run_on_terminal(char *const argv[], int *rc)
{
	posix_spawn_file_actions_t fa;
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), slave, status;
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	pid_t pid;
	ssize_t n;

	CHECK(buf && master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
	slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	CHECK(slave >= 0);
	CHECK(posix_spawn_file_actions_init(&fa) == 0 && posix_spawn_file_actions_adddup2(&fa, slave, STDOUT_FILENO) == 0);
	CHECK_MSG(posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0, "cannot run %s", argv[0]);
	posix_spawn_file_actions_destroy(&fa);
	close(slave);
	/* EIO once the child, the last holder of the terminal, is gone */
	while ((n = read(master, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len - 1 == 0) {
			CHECK(cap < (16u << 20) && (buf = realloc(buf, cap *= 2)));
		}
	}
	buf[len] = '\0';
	close(master);
	CHECK(waitpid(pid, &status, 0) == pid);
	*rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return buf;
}

/* On a terminal: the screen redrawn for each refresh, the rows in --sort's order */
static void test_screen(struct test_qemu *q)
{
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)q->pid);
	char *argv[] = { (char *)snapbench, "top", "--pid", pid, "--no-qmp", "--count", "2", "--interval", "300ms", "--sort",
			 "total", NULL };
	const char *clear = "\033[H\033[2J", *p, *screen2;
	unsigned long long prev = ~0ull, total;
	size_t screens = 0, rows = 0;
	int rc;
	char *out = run_on_terminal(argv, &rc);

	CHECK_MSG(rc == 0 && !strncmp(out, clear, strlen(clear)), "exit %d: %s", rc, out);
	for (p = out; (p = strstr(p, clear)); p += strlen(clear))
		screens++;
	CHECK_MSG(screens == 2, "%zu screens: %s", screens, out);
	/* the second screen's rows: the probes' (counters, causes, exit reasons) sorted together, by total */
	screen2 = strstr(out + strlen(clear), clear);
	p = strstr(screen2, " Event ");
	CHECK_MSG(p && strstr(screen2, "snapbench top: pid "), "%s", screen2);
	for (p = strchr(p, '\n'); p && p[1] == ' '; p = strchr(p + 1, '\n')) {
		char name[96];

		if (sscanf(p + 1, " %95s %llu", name, &total) != 2)
			break; /* the unavailable counters, after the rows */
		CHECK_MSG(total <= prev, "--sort total: %s %llu after a row of %llu\n%s", name, total, prev, screen2);
		prev = total;
		rows++;
	}
	CHECK_MSG(rows >= 3, "%zu rows on the screen: %s", rows, screen2);
	printf("screen: %zu redraws on a terminal, %zu rows by total\n", screens, rows);
	free(out);
}

/* No target: this QEMU among the host's VMs */
static void test_all(struct test_qemu *q)
{
	char *argv[] = { (char *)snapbench, "top", "--count", "2", "--interval", "500ms", "--json", NULL };
	char *out, *line, *save = NULL;
	size_t n = 0;

	CHECK(test_run(argv, &out) == 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct json_object *o = parse(line), *vms = jget(o, "vms"), *me = NULL;

		CHECK(jint(o, "vms_found") >= 1);
		for (size_t i = 0; i < json_object_array_length(vms); i++)
			if (jint(json_object_array_get_idx(vms, i), "pid") == q->pid)
				me = json_object_array_get_idx(vms, i);
		CHECK_MSG(me, "pid %d not among %s", (int)q->pid, line);
		CHECK(!strcmp(jstr(me, "name"), NAME) && !strcmp(jstr(me, "comm"), "qemu-system-x86"));
		CHECK(json_object_array_length(jget(me, "rows")) > 0 && jnull(me, "kvm/source"));
		/* there from top's start: its totals since then; what came and went since the last object */
		CHECK(jnum(me, "since_s") == 0);
		CHECK(json_object_is_type(jget(o, "started"), json_type_array) &&
		      json_object_is_type(jget(o, "exited"), json_type_array));
		if (n++ == 0)
			printf("no target: %lld VM(s) on the host, pid %d (%s) among them\n", (long long)jint(o, "vms_found"),
			       (int)q->pid, NAME);
		json_object_put(o);
	}
	CHECK(n == 2);
	free(out);
}

static size_t count_fds(pid_t pid)
{
	char path[64];
	DIR *d;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	CHECK_MSG(d, "%s: %s", path, strerror(errno));
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* One table of top's plain lines, read from its header on: its VM count, and whether rows of prefix are in it. */
struct table {
	size_t vms;
	bool has_prefix, started, exited;
};

/*
 * Reads top's lines up to the header of its next table, then that table to
 * the next header (kept in *pending): what the table says about prefix and
 * about pid's coming and going.
 */
static void read_table(struct test_child *top, char **pending, const char *prefix, pid_t pid, struct table *t)
{
	char said[64];
	char *line;

	*t = (struct table){ 0 };
	snprintf(said, sizeof(said), " pid %d (", (int)pid);
	while (!*pending) {
		line = test_child_line(top);
		CHECK_MSG(line, "top ended before its next table");
		if (!strncmp(line, "snapbench top: ", 15))
			*pending = line;
		else
			free(line);
	}
	CHECK_MSG(sscanf(*pending, "snapbench top: %zu VM", &t->vms) == 1 && !strchr(*pending, '\033'), "%s", *pending);
	free(*pending);
	*pending = NULL;
	while ((line = test_child_line(top))) {
		if (!strncmp(line, "snapbench top: ", 15)) {
			*pending = line;
			return;
		}
		if (!strncmp(line, said, strlen(said)) && strstr(line, ") started: "))
			t->started = true;
		if (!strncmp(line, said, strlen(said)) && strstr(line, ") exited: "))
			t->exited = true;
		if (line[0] == ' ' && !strncmp(line + 1, prefix, strlen(prefix)))
			t->has_prefix = true;
		free(line);
	}
	CHECK_MSG(false, "top ended after a table");
}

/* No target, plain lines: a QEMU started after top's first table comes in, and leaves when killed */
static void test_rescan(struct test_qemu *q)
{
	char *argv[] = { (char *)snapbench, "top", "--interval", "500ms", "--count", "240", "--no-attribution", NULL };
	const char *extra[] = { "-name", NAME "-2", NULL };
	char mine[64], second[64], *pending = NULL;
	struct test_child top;
	struct test_qemu q2;
	struct table t;
	size_t fds_before, fds_with, fds_after, vms_before, n;
	pid_t pid2;

	snprintf(mine, sizeof(mine), "%d:%s:", (int)q->pid, NAME);
	test_spawn(&top, argv);
	read_table(&top, &pending, mine, 0, &t);
	CHECK_MSG(t.has_prefix, "no rows of %s in top's first table", mine);
	/* top sleeps between its tables: read once the next header is out, the count is of a quiet top */
	read_table(&top, &pending, mine, 0, &t);
	fds_before = count_fds(top.pid);
	vms_before = t.vms;

	test_qemu_start(&q2, 128, 1, extra);
	pid2 = q2.pid;
	snprintf(second, sizeof(second), "%d:%s-2:", (int)pid2, NAME);
	for (n = 0; n < 40; n++) {
		read_table(&top, &pending, second, pid2, &t);
		if (t.started)
			break;
	}
	CHECK_MSG(t.started && t.has_prefix && t.vms == vms_before + 1,
		  "no table says pid %d started with rows of its own (%zu VMs, %zu before)", (int)pid2, t.vms, vms_before);
	printf("rescan: pid %d started after top's first table: in its table %zu refreshes later, %zu VMs\n",
	       (int)pid2, n + 1, t.vms);
	read_table(&top, &pending, second, pid2, &t);
	CHECK_MSG(t.has_prefix && !t.started, "pid %d's rows in the next table", (int)pid2);
	fds_with = count_fds(top.pid);
	CHECK_MSG(fds_with > fds_before, "top's fds: %zu before pid %d came, %zu with it", fds_before, (int)pid2,
		  fds_with);

	test_qemu_stop(&q2); /* kills and reaps it */
	for (n = 0; n < 10; n++) {
		read_table(&top, &pending, second, pid2, &t);
		if (t.exited)
			break;
	}
	CHECK_MSG(t.exited && !t.has_prefix && t.vms == vms_before, "no table says pid %d exited (%zu VMs)", (int)pid2,
		  t.vms);
	/* and top goes on with the first QEMU */
	read_table(&top, &pending, mine, pid2, &t);
	CHECK_MSG(t.has_prefix && !t.exited && t.vms == vms_before, "after pid %d exited: %zu VMs", (int)pid2, t.vms);
	fds_after = count_fds(top.pid);
	printf("rescan: pid %d exited, top went on; its fds %zu before, %zu with pid %d, %zu after\n", (int)pid2,
	       fds_before, fds_with, (int)pid2, fds_after);
	CHECK_MSG(fds_after == fds_before, "top's fds: %zu before, %zu after pid %d came and went", fds_before, fds_after,
		  (int)pid2);
	free(pending);
	CHECK(kill(top.pid, SIGTERM) == 0);
	CHECK(test_child_wait(&top) == 0);
}

/* The vms entry of pid in o, or NULL; whether pid is in o's array key ("started", "exited") in *in_key */
static struct json_object *vm_entry(struct json_object *o, pid_t pid, const char *key, bool *in_key)
{
	struct json_object *vms = jget(o, "vms"), *ev = jget(o, key), *me = NULL;

	CHECK(json_object_is_type(vms, json_type_array) && json_object_is_type(ev, json_type_array));
	*in_key = false;
	for (size_t i = 0; i < json_object_array_length(ev); i++)
		*in_key |= jint(json_object_array_get_idx(ev, i), "pid") == pid;
	for (size_t i = 0; i < json_object_array_length(vms); i++)
		if (jint(json_object_array_get_idx(vms, i), "pid") == pid)
			me = json_object_array_get_idx(vms, i);
	return me;
}

/* --json without a target: which VMs each object covers, and which started and exited since the last */
static void test_rescan_json(struct test_qemu *q)
{
	char *argv[] = { (char *)snapbench, "top", "--interval", "500ms", "--count", "240", "--no-attribution", "--json",
			 NULL };
	const char *extra[] = { "-name", NAME "-3", NULL };
	struct test_child top;
	struct test_qemu q3;
	struct json_object *o, *me;
	bool said = false;
	pid_t pid3;
	char *line;
	size_t n;

	test_spawn(&top, argv);
	CHECK((line = test_child_line(&top)));
	o = parse(line);
	free(line);
	CHECK(vm_entry(o, q->pid, "started", &said) && !said && jnum(vm_entry(o, q->pid, "started", &said), "since_s") == 0);
	json_object_put(o);

	test_qemu_start(&q3, 128, 1, extra);
	pid3 = q3.pid;
	for (n = 0, me = NULL; n < 40 && !said; n++) {
		CHECK((line = test_child_line(&top)));
		o = parse(line);
		free(line);
		me = vm_entry(o, pid3, "started", &said);
		if (said) {
			CHECK_MSG(me && !strcmp(jstr(me, "name"), NAME "-3") && jnum(me, "since_s") > 0 &&
					  jnum(me, "since_s") <= jnum(o, "t_s") && vm_entry(o, q->pid, "started", &(bool){ 0 }),
				  "%s", json_object_to_json_string(o));
			printf("json: pid %d in started and vms at %.1f s, since_s %.1f\n", (int)pid3, jnum(o, "t_s"),
			       jnum(me, "since_s"));
		}
		json_object_put(o);
	}
	CHECK_MSG(said, "no object names pid %d as started", (int)pid3);
	test_qemu_stop(&q3);
	for (n = 0, said = false; n < 10 && !said; n++) {
		CHECK((line = test_child_line(&top)));
		o = parse(line);
		free(line);
		me = vm_entry(o, pid3, "exited", &said);
		if (said)
			CHECK_MSG(!me && vm_entry(o, q->pid, "exited", &(bool){ 0 }), "%s", json_object_to_json_string(o));
		json_object_put(o);
	}
	CHECK_MSG(said, "no object names pid %d as exited", (int)pid3);
	printf("json: pid %d in exited and out of vms\n", (int)pid3);
	CHECK(kill(top.pid, SIGTERM) == 0);
	CHECK(test_child_wait(&top) == 0);
}

static int garbage_fd = -1;

/* a peer that answers every connection with something that is not QMP */
static void *garbage_main(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(garbage_fd, NULL, NULL);

		if (c < 0)
			return NULL;
		(void)!write(c, "SSH-2.0-OpenSSH_9.2\r\n", 21);
		close(c);
	}
}

static void expect_exit(int want, const char *fragment, char *const *args)
{
	char *argv[16] = { (char *)snapbench, "top" }, *out;
	size_t n = 2;
	int rc;

	while (*args)
		argv[n++] = *args++;
	argv[n++] = "--count";
	argv[n++] = "1";
	argv[n++] = "--json";
	argv[n] = NULL;
	rc = test_run(argv, &out);
	struct json_object *o = parse(out);
	CHECK_MSG(rc == want && jint(o, "exit_code") == want && strstr(jstr(o, "error"), fragment),
		  "%s %s: exit %d: %s", argv[2], argv[3], rc, out);
	for (size_t i = 2; i < n - 3; i++)
		printf("%s ", argv[i]);
	printf("-> exit %d\n", rc);
	json_object_put(o);
	free(out);
}

static void test_errors(const char *sock, const char *dir)
{
	char missing[256], file[256], garbage[256];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	pthread_t t;
	FILE *f;

	snprintf(missing, sizeof(missing), "%s/none.sock", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	snprintf(garbage, sizeof(garbage), "%s/garbage.sock", dir);
	CHECK((f = fopen(file, "w")) && fclose(f) == 0);
	garbage_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(strlen(garbage) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, garbage, strlen(garbage) + 1);
	CHECK(garbage_fd >= 0 && bind(garbage_fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(garbage_fd, 4) == 0);
	CHECK(pthread_create(&t, NULL, garbage_main, NULL) == 0);

	expect_exit(4, "no such socket", (char *[]){ "--qmp", missing, NULL });
	expect_exit(2, "is not a socket", (char *[]){ "--qmp", file, NULL });
	expect_exit(2, "is not a QMP socket", (char *[]){ "--qmp", garbage, NULL });
	expect_exit(2, "not of --pid 1", (char *[]){ "--pid", "1", "--qmp", (char *)sock, NULL });
	expect_exit(2, "--pid and --vm", (char *[]){ "--pid", "1", "--vm", NAME, NULL });
	shutdown(garbage_fd, SHUT_RDWR);
	pthread_join(t, NULL);
	close(garbage_fd);
}

int main(int argc, char **argv)
{
	struct qmp_client *c = NULL;
	struct sb_error err = { 0 };
	struct test_qemu q;
	char sock[200], qmp_arg[256];
	const char *dir;
	char **names = NULL;

	CHECK_MSG(argc == 2, "usage: test-cli-top SNAPBENCH");
	snapbench = argv[1];
	if (geteuid() != 0)
		SKIP_TEST("root (BPF probes)");
	dir = test_tmpdir("cli-top");
	snprintf(sock, sizeof(sock), "%s/top.sock", dir);
	snprintf(qmp_arg, sizeof(qmp_arg), "unix:%s,server=on,wait=off", sock);
	const char *extra[] = { "-name", NAME, "-qmp", qmp_arg, NULL };
	test_qemu_start(&q, 128, 2, extra);
	CHECK_MSG(qmp_connect(q.qmp_path, T, NULL, &c, &err) == 0, "%s", err.msg);
	qmp_client_set_command_timeout(c, T);
	if (qmp_query_stats_names(c, "vcpu", "cumulative", &names, &err) == -EREMOTEIO)
		SKIP_TEST("a QEMU with query-stats (7.1 or later): %s", err.msg);
	CHECK_MSG(names, "%s", err.msg);
	strv_free(names);

	test_qmp(&q, c, sock);
	test_pid(&q, sock);
	test_text(sock);
	test_screen(&q);
	test_all(&q);
	test_rescan(&q);
	test_rescan_json(&q);
	test_errors(sock, dir);
	qmp_client_free(c);
	test_qemu_stop(&q);
	printf("ok\n");
	return 0;
}
