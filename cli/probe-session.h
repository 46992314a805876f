/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What snapbench probe and snapbench top share: the BPF probes opened on one
 * QEMU process and attached, with the privilege check first and the exit
 * code of each failure (exit-codes.h), and whether the target still lives.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "probes.h"

/* Opens and attaches; 0 with *ret set, or the exit code having said why (verb_error()). */
int probe_session_open(pid_t pid, const struct sb_probe_options *opts, struct sb_probes **ret);

/*
 * Its two halves, for a verb that opens several (top on every VM): the
 * privilege check, saying why it fails (verb_error()), and the open and
 * attach, saying nothing: the exit code, with err telling why.
 */
int probe_session_check_privileges(void);
int probe_session_attach(pid_t pid, const struct sb_probe_options *opts, struct sb_probes **ret,
			 struct sb_error *err);

bool probe_session_target_alive(pid_t pid);
