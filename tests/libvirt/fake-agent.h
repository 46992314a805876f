/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A scripted fake qemu-guest-agent on a unix socket, for what a real guest
 * cannot do on demand here (no Linux guest boots in useful time under
 * emulation): a thread accepts one connection, answers the 0xFF +
 * guest-sync-delimited handshake as the real agent does (0xFF, then
 * {"return": id}), and answers every other command from a script of
 * expected command -> raw reply text. A command that is not the next one
 * in the script is recorded as a failure and answered with an error.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct fake_agent;

enum fake_agent_mode {
	FAKE_AGENT_NORMAL,
	FAKE_AGENT_SILENT,   /* accepts and reads, never answers (agent not running in the guest) */
};

/* Listens on a fresh socket path (fake_agent_path()). */
struct fake_agent *fake_agent_start(enum fake_agent_mode mode);

/*
 * Appends one step: when command (the "execute" name) arrives, check that
 * its arguments' JSON text contains want_args (NULL: anything), wait
 * delay_ms, then send reply verbatim (it may be anything: garbage, a stale
 * reply, nothing at all when NULL).
 */
void fake_agent_expect(struct fake_agent *a, const char *command, const char *want_args, int delay_ms,
		       const char *reply);
/* Bytes to send before the next sync's own 0xFF sentinel and answer (left-overs, an old sync's answer). */
void fake_agent_stale_before_sync(struct fake_agent *a, const char *text);

const char *fake_agent_path(const struct fake_agent *a);

/* Commands answered so far, syncs included. */
unsigned fake_agent_syncs(struct fake_agent *a);

/*
 * Stops the thread, removes the socket. Returns the number of failures
 * (unexpected commands, argument mismatches, steps left over when
 * require_all), printing each.
 */
unsigned fake_agent_stop(struct fake_agent *a, bool require_all);

/* The last arguments received for command (JSON text, malloc'ed), or NULL. */
char *fake_agent_last_args(struct fake_agent *a, const char *command);
