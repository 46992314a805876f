// SPDX-License-Identifier: GPL-2.0-or-later
/* The probes on one QEMU, opened and attached for snapbench probe and top (probe-session.h). */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "exit-codes.h"
#include "probe-session.h"
#include "verb-args.h"

static int exit_code_for(int r)
{
	switch (r) {
	case -EINVAL:
		return EXIT_USAGE;
	case -ESRCH:
	case -ENODEV:
	case -EPERM:
	case -EACCES:
	case -EOPNOTSUPP:
	case -ENOENT:
		return EXIT_UNAVAILABLE;
	default:
		return EXIT_FAIL;
	}
}

bool probe_session_target_alive(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0;
}

int probe_session_check_privileges(void)
{
	struct sb_error err = { 0 };
	int r;

	/* before anything is loaded: without the capabilities the kernel would refuse every program */
	r = sb_probes_check_privileges(&err);
	if (r < 0) {
		verb_error("%s%s", err.msg, r == -EPERM ? ": run as root (the probes load BPF programs into the kernel)" : "");
		return r == -EPERM ? EXIT_DENIED : EXIT_FAIL;
	}
	return EXIT_OK;
}

int probe_session_attach(pid_t pid, const struct sb_probe_options *opts, struct sb_probes **ret,
			 struct sb_error *err)
{
	struct sb_probes *p = NULL;
	int r;

	r = sb_probes_open(pid, opts, &p, err);
	if (r < 0)
		return exit_code_for(r);
	r = sb_probes_attach(p, err);
	if (r < 0) {
		sb_probes_close(p);
		return exit_code_for(r);
	}
	*ret = p;
	return EXIT_OK;
}

int probe_session_open(pid_t pid, const struct sb_probe_options *opts, struct sb_probes **ret)
{
	struct sb_error err = { 0 };
	int r;

	r = probe_session_check_privileges();
	if (r != EXIT_OK)
		return r;
	r = probe_session_attach(pid, opts, ret, &err);
	if (r != EXIT_OK)
		verb_error("%s", err.msg);
	return r;
}
