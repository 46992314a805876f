// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbenchd: options, background start, then the loop of daemon.c. snapbenchd(8). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "macro.h"
#include "metrics-file.h"
#include "mkdir-p.h"
#include "parse-number.h"
#include "qemu-binary.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbenchd [OPTIONS...]\n"
		"\n"
		"The snapbench service: queues runs submitted over a unix socket and executes\n"
		"them one at a time, keeping their reports in the state directory.\n"
		"\n"
		"  --socket PATH            listen here (default %s);\n"
		"                           ignored when systemd passes the socket\n"
		"  --state-dir DIR          queue and results (default %s)\n"
		"  --group NAME             who may submit and cancel, besides root (default %s)\n"
		"  --foreground             stay in the foreground, logging to stderr (under\n"
		"                           systemd: always); without it snapbenchd returns once\n"
		"                           it serves and logs to --log-file\n"
		"  --log-file PATH          the log of a background snapbenchd (default\n"
		"                           STATE_DIR/snapbenchd.log)\n"
		"  --worker PATH            the run worker (default: next to snapbenchd or in\n"
		"                           its build tree, else %s/snapbench-worker)\n"
		"  --qemu PATH              the QEMU binary runs use unless their spec names one in vm.qemu (default: " QEMU_DEFAULT_BINARY " in PATH)\n"
		"  --max-connections N      clients at once (default 64)\n"
		"  --max-connections-per-uid N  clients at once of one uid but root (default 16)\n"
		"  --reserved-connections N  of --max-connections, kept for root and the group (default 8)\n"
		"  --max-watches-per-uid N  runs followed at once by one uid but root (default 4)\n"
		"  --max-queue N            queued runs (default 64)\n"
		"  --request-timeout SEC    a request must arrive whole within this (default 10)\n"
		"  --idle-timeout SEC       close connections idle this long (default 60)\n"
		"  --connection-lifetime SEC  close connections that watch nothing after this (default 600)\n"
		"  --write-timeout SEC      drop clients that read none of their replies this long (default 30)\n"
		"  --cancel-timeout SEC     a cancelled run must stop within this, else it is killed (default 45)\n"
		"  --recover-wait SEC       at start, wait this long for a previous worker to stop (default 60)\n"
		"  --metrics-file PATH      keep the runs' metrics here for node_exporter's textfile\n"
		"                           collector (default with the default state directory:\n"
		"                           %s, when its directory exists; '': none)\n"
		"  --version, --help\n",
		PROTOCOL_DEFAULT_SOCKET, DAEMON_DEFAULT_STATE_DIR, DAEMON_DEFAULT_GROUP, LIBEXECDIR,
		DAEMON_DEFAULT_METRICS_FILE);
}

static int parse_uint(const char *opt, const char *s, unsigned min, unsigned max, unsigned *ret)
{
	if (parse_unsigned(s, min, max, ret, NULL) < 0) {
		fprintf(stderr, "snapbenchd: %s '%s': expected a whole number from %u to %u\n", opt, s, min, max);
		return -EINVAL;
	}
	return 0;
}

static int parse_seconds(const char *opt, const char *s, unsigned *ret_ms)
{
	double v;

	if (parse_double(s, 0.1, 86400, &v, NULL) < 0) {
		fprintf(stderr, "snapbenchd: %s '%s': expected seconds from 0.1 to 86400\n", opt, s);
		return -EINVAL;
	}
	*ret_ms = (unsigned)(v * 1000 + 0.5);
	return 0;
}

/*
 * Without --foreground the daemon runs in a child; the parent returns when
 * the child is serving (exit 0) or failed to start (exit 1, with the
 * reason), so scripts can use the socket as soon as snapbenchd returns. The
 * child logs to log_path (appended), not to the caller's terminal or pipes.
 */
static int background(const char *log_path, int *ready_fd)
{
	int p[2], log_fd;
	pid_t pid;
	char buf[SB_ERROR_MAX + 2];
	ssize_t n;

	log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
	if (log_fd < 0) {
		fprintf(stderr, "snapbenchd: log file %s: %s; pass --log-file PATH or --foreground\n", log_path,
			strerror(errno));
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		fprintf(stderr, "snapbenchd: pipe: %s\n", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "snapbenchd: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		close(p[0]);
		setsid();
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(log_fd, 2) < 0)
			_exit(1);
		close(null);
		close(log_fd);
		*ready_fd = p[1];
		return 0;
	}
	close(p[1]);
	close(log_fd);
	do
		n = read(p[0], buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	if (n > 0 && buf[0] == '+') {
		printf("snapbenchd: started (pid %d), logging to %s\n", (int)pid, log_path);
		exit(0);
	}
	buf[n > 0 ? n : 0] = '\0';
	fprintf(stderr, "snapbenchd: %s\n", n > 1 ? buf + 1 : "failed to start; see its log");
	int st;
	waitpid(pid, &st, 0);
	exit(1);
}

static void tell_parent(int *ready_fd, const char *error)
{
	char buf[SB_ERROR_MAX + 2];
	int len;

	if (*ready_fd < 0)
		return;
	len = snprintf(buf, sizeof(buf), "%c%s", error ? '-' : '+', error ? error : "");
	ssize_t n = write(*ready_fd, buf, (size_t)len < sizeof(buf) ? (size_t)len : sizeof(buf) - 1);
	(void)n;
	close(*ready_fd);
	*ready_fd = -1;
}

struct args {
	struct daemon_config cfg;
	bool foreground;
	const char *log_file; /* NULL: STATE_DIR/snapbenchd.log */
};

#define ARGS_GO_ON (-1)

/* The options that take seconds (OPT_REQUEST_TIMEOUT on, in this order) and their field (ms). */
static const struct {
	const char *name;
	size_t offset;
} seconds_options[] = {
	{ "request-timeout", offsetof(struct daemon_config, request_timeout_ms) },
	{ "idle-timeout", offsetof(struct daemon_config, idle_timeout_ms) },
	{ "connection-lifetime", offsetof(struct daemon_config, lifetime_ms) },
	{ "write-timeout", offsetof(struct daemon_config, write_timeout_ms) },
	{ "cancel-timeout", offsetof(struct daemon_config, cancel_timeout_ms) },
	{ "recover-wait", offsetof(struct daemon_config, recover_wait_ms) },
};

enum {
	OPT_SOCKET = 0x100,
	OPT_STATE_DIR,
	OPT_GROUP,
	OPT_FOREGROUND,
	OPT_WORKER,
	OPT_QEMU,
	OPT_MAX_CONNECTIONS,
	OPT_MAX_CONNECTIONS_PER_UID,
	OPT_RESERVED_CONNECTIONS,
	OPT_MAX_WATCHES_PER_UID,
	OPT_MAX_QUEUE,
	OPT_REQUEST_TIMEOUT, /* the order of seconds_options */
	OPT_IDLE_TIMEOUT,
	OPT_LIFETIME,
	OPT_WRITE_TIMEOUT,
	OPT_CANCEL_TIMEOUT,
	OPT_RECOVER_WAIT,
	OPT_LOG_FILE,
	OPT_METRICS_FILE,
	OPT_VERSION,
};

static const struct option options[] = {
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "foreground", no_argument, NULL, OPT_FOREGROUND },
	{ "worker", required_argument, NULL, OPT_WORKER },
	{ "qemu", required_argument, NULL, OPT_QEMU },
	{ "max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS },
	{ "max-connections-per-uid", required_argument, NULL, OPT_MAX_CONNECTIONS_PER_UID },
	{ "reserved-connections", required_argument, NULL, OPT_RESERVED_CONNECTIONS },
	{ "max-watches-per-uid", required_argument, NULL, OPT_MAX_WATCHES_PER_UID },
	{ "max-queue", required_argument, NULL, OPT_MAX_QUEUE },
	{ "request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
	{ "connection-lifetime", required_argument, NULL, OPT_LIFETIME },
	{ "write-timeout", required_argument, NULL, OPT_WRITE_TIMEOUT },
	{ "cancel-timeout", required_argument, NULL, OPT_CANCEL_TIMEOUT },
	{ "recover-wait", required_argument, NULL, OPT_RECOVER_WAIT },
	{ "log-file", required_argument, NULL, OPT_LOG_FILE },
	{ "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* A bound of the daemon: connections, watches, the queue, or one of its timeouts (seconds). */
static int set_bound(int c, const char *arg, struct daemon_config *cfg)
{
	switch (c) {
	case OPT_MAX_CONNECTIONS:
		return parse_uint("--max-connections", arg, 1, 10000, &cfg->max_connections);
	case OPT_MAX_CONNECTIONS_PER_UID:
		return parse_uint("--max-connections-per-uid", arg, 1, 10000, &cfg->max_connections_per_uid);
	case OPT_RESERVED_CONNECTIONS:
		return parse_uint("--reserved-connections", arg, 0, 10000, &cfg->reserved_connections);
	case OPT_MAX_WATCHES_PER_UID:
		return parse_uint("--max-watches-per-uid", arg, 1, 10000, &cfg->max_watches_per_uid);
	case OPT_MAX_QUEUE:
		return parse_uint("--max-queue", arg, 1, 4096, &cfg->max_queue);
	default: {
		size_t i = (size_t)(c - OPT_REQUEST_TIMEOUT);
		char flag[40];

		snprintf(flag, sizeof(flag), "--%s", seconds_options[i].name);
		return parse_seconds(flag, arg, (unsigned *)((char *)cfg + seconds_options[i].offset));
	}
	}
}

/* Fills *ret; returns ARGS_GO_ON, or the exit code to stop with (0 after --help, --version). */
static int parse_argv(int argc, char **argv, struct args *ret)
{
	struct daemon_config cfg;
	bool foreground = false;
	const char *log_file = NULL;
	int c;

	daemon_config_defaults(&cfg);
	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (c) {
		case OPT_SOCKET:
			cfg.socket_path = optarg;
			break;
		case OPT_STATE_DIR:
			cfg.state_dir = optarg;
			break;
		case OPT_GROUP:
			if (!*optarg) {
				fprintf(stderr, "snapbenchd: --group: empty name\n");
				return 2;
			}
			cfg.group = optarg;
			break;
		case OPT_FOREGROUND:
			foreground = true;
			break;
		case OPT_WORKER:
			cfg.worker_path = optarg;
			break;
		case OPT_QEMU:
			cfg.qemu = optarg;
			break;
		case OPT_METRICS_FILE:
			if (*optarg && (strlen(optarg) < 6 || strcmp(optarg + strlen(optarg) - 5, ".prom") ||
					optarg[strlen(optarg) - 6] == '/')) {
				fprintf(stderr, "snapbenchd: --metrics-file %s: give a file name ending in .prom "
					"(node_exporter's textfile collector reads only those), or '' for none\n", optarg);
				return 2;
			}
			cfg.metrics_file = optarg;
			break;
		case OPT_MAX_CONNECTIONS:
		case OPT_MAX_CONNECTIONS_PER_UID:
		case OPT_RESERVED_CONNECTIONS:
		case OPT_MAX_WATCHES_PER_UID:
		case OPT_MAX_QUEUE:
		case OPT_REQUEST_TIMEOUT ... OPT_RECOVER_WAIT:
			if (set_bound(c, optarg, &cfg) < 0)
				return 2;
			break;
		case OPT_LOG_FILE:
			log_file = optarg;
			break;
		case OPT_VERSION:
			printf("snapbenchd %s\n", PACKAGE_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "snapbenchd: unexpected argument '%s'; see snapbenchd --help\n", argv[optind]);
		return 2;
	}
	*ret = (struct args){ .cfg = cfg, .foreground = foreground, .log_file = log_file };
	return ARGS_GO_ON;
}

/* Without --foreground: returns in the child (*ready_fd its pipe to the parent), or -1. */
static int detach(const struct args *a, int *ready_fd)
{
	const char *log_file = a->log_file;
	char default_log[PATH_MAX];
	int r;

	if (!log_file) {
		/* the state directory holds the log of a daemon started by hand */
		r = mkdir_p(a->cfg.state_dir, 0755);
		if (r < 0) {
			fprintf(stderr, "snapbenchd: --state-dir %s: cannot create it: %s\n", a->cfg.state_dir,
				strerror(-r));
			return -1;
		}
		snprintf(default_log, sizeof(default_log), "%s/snapbenchd.log", a->cfg.state_dir);
		log_file = default_log;
	}
	return background(log_file, ready_fd);
}

static int run(const struct args *a)
{
	struct daemon d;
	struct sb_error err = {};
	int ready_fd = -1, r;

	/* under systemd (socket activation or Type=notify) there is nothing to detach from */
	if (!a->foreground && !getenv("NOTIFY_SOCKET") && !getenv("LISTEN_FDS") && detach(a, &ready_fd) < 0)
		return 1;

	r = daemon_setup(&d, &a->cfg, &err);
	if (r < 0) {
		log_error("%s", err.msg);
		tell_parent(&ready_fd, err.msg);
		daemon_teardown(&d);
		return 1;
	}
	tell_parent(&ready_fd, NULL);
	r = daemon_loop(&d);
	daemon_teardown(&d);
	return r < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct args a;
	int r;

	r = parse_argv(argc, argv, &a);
	if (r != ARGS_GO_ON)
		return r;
	return run(&a);
}
