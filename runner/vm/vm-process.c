// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The QEMU process behind either VM backend (vm.h): finding its binary
 * (the qemu backend and the host probe), how it ended, the tail of its log
 * (both backends).
 */
#include "vm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "spawn-program.h"
#include "telemetry.h"

int vm_find_binary(const char *name, char **ret, struct sb_error *err)
{
	int r;

	if (!name || !*name)
		return sb_error_set(err, -EINVAL, "QEMU binary: empty name; pass --qemu PATH");
	r = spawn_find_program(name, ret);
	if (r == -ENOMEM)
		return sb_error_set(err, r, "out of memory");
	if (r < 0 && strchr(name, '/'))
		return sb_error_set(err, r, "QEMU binary %s: %s; install qemu-system-x86 (scripts/install-deps) or pass --qemu PATH",
				    name, strerror(-r));
	if (r < 0)
		return sb_error_set(err, r, "QEMU binary %s: not found in PATH; install qemu-system-x86 (scripts/install-deps) or pass --qemu PATH",
				    name);
	return 0;
}

void vm_describe_status(int st, char *buf, size_t len)
{
	if (WIFEXITED(st)) {
		const char *m = guest_exit_status_to_string(WEXITSTATUS(st));
		snprintf(buf, len, "exit status %d%s%s%s", WEXITSTATUS(st), m ? " (" : "", m ? m : "", m ? ")" : "");
	} else if (WIFSIGNALED(st)) {
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	} else {
		snprintf(buf, len, "wait status 0x%x", st);
	}
}

void vm_log_tail(const struct vm *vm, char *buf, size_t len)
{
	_cleanup_close_ int fd = -1;
	char tail[1024];
	off_t size;
	ssize_t n;

	buf[0] = '\0';
	if (!vm->log_path)
		return;
	fd = open(vm->log_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0)
		return;
	n = pread(fd, tail, sizeof(tail) - 1, size > (off_t)sizeof(tail) - 1 ? size - (off_t)sizeof(tail) + 1 : 0);
	if (n <= 0)
		return;
	tail[n] = '\0';
	/* drop QEMU's harmless CPUID warnings, join the rest into one line */
	size_t used = 0;
	char *save = NULL;
	for (char *line = strtok_r(tail, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "host doesn't support requested feature"))
			continue;
		int k = snprintf(buf + used, len - used, "%s%s", used ? " | " : "", line);
		if (k < 0 || (size_t)k >= len - used)
			break;
		used += (size_t)k;
	}
}
