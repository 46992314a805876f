// SPDX-License-Identifier: GPL-2.0-or-later
/* Process identity checks and pidfd helpers. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "proc.h"
#include "strv.h"

int proc_starttime(pid_t pid, uint64_t *ret)
{
	_cleanup_free_ char *buf = NULL;
	char path[64];
	size_t len;
	int r;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = read_full_file(path, 4096, &buf, &len, NULL);
	if (r < 0)
		return r == -ESRCH ? -ENOENT : r;
	/* comm may hold spaces and parentheses: fields resume after the last ')' */
	char *p = strrchr(buf, ')');
	if (!p)
		return -EBADMSG;
	p++;
	/* after ')': field 3 (state) is the first; starttime is field 22 */
	for (int field = 3; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EBADMSG;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p + 1, &end, 10);
	if (errno || end == p + 1)
		return -EBADMSG;
	*ret = v;
	return 0;
}

int proc_pidfd_open(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int)fd;
}

int proc_pidfd_signal(int pidfd, int sig)
{
	if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
		return -errno;
	return 0;
}

int proc_pidfd_wait(int pidfd, int timeout_ms)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r > 0 ? 1 : 0;
}

bool proc_is_run_qemu(pid_t pid, const char *run_id, struct json_object *expected_argv)
{
	_cleanup_strv_free_ char **argv = NULL;
	const char *base;
	size_t n = 0;

	if (pid <= 1 || proc_cmdline(pid, 256 * 1024, &argv) < 0)
		return false;
	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (strncmp(base, "qemu-system", strlen("qemu-system")) != 0)
		return false;
	while (argv[n])
		n++;

	if (expected_argv && json_object_is_type(expected_argv, json_type_array) &&
	    json_object_array_length(expected_argv) == n) {
		bool same = true;
		for (size_t i = 0; same && i < n; i++) {
			struct json_object *a = json_object_array_get_idx(expected_argv, i);
			same = json_object_is_type(a, json_type_string) && !strcmp(json_object_get_string(a), argv[i]);
		}
		if (same)
			return true;
	}
	for (size_t i = 0; i + 1 < n; i++)
		if (!strcmp(argv[i], "-name") && run_id && *run_id && strstr(argv[i + 1], run_id))
			return true;
	return false;
}
