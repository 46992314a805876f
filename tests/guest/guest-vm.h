/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * For tests: run the micro guest under a real QEMU with KVM, built from
 * guest_params_to_cmdline() and guest_qemu_argv() as the runner does, with
 * telemetry on a pipe, control and (optionally) QMP on socketpairs, passed
 * as fds 3, 4 and 5. QEMU's stderr goes to a temp file that is printed if the test
 * fails. Every QEMU started here is killed and its temp files removed when
 * the test exits, also on a failed CHECK (atexit) or meson's SIGTERM, and
 * QEMU gets SIGKILL if the test dies outright (PR_SET_PDEATHSIG).
 *
 * Without /dev/kvm the guest runs under TCG (tests/lib/test-accel.h);
 * without QEMU the test exits 77 naming it.
 * $SNAPBENCH_QEMU overrides the QEMU binary; $SNAPBENCH_GUEST_IMAGE points
 * at the guest image (meson sets it to the build's).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "params.h"
#include "telemetry.h"

struct test_guest {
	pid_t pid;
	int tel, ctl, qmp;        /* host ends; qmp -1 unless asked for */
	char log_path[64];
	struct guest_decoder *dec;
	uint64_t start_ns;        /* mono_ns() just before fork */
	uint64_t eof_ns;          /* when telemetry hit EOF, 0 before */
};

/* append: NULL builds it from p; else used as is (to test bad command lines). */
void test_guest_start(struct test_guest *g, unsigned ram_mib, const struct guest_params *p, const char *append,
		      bool with_qmp);

/* The next record within timeout_ms, NULL on EOF or timeout. Decoder errors
 * fail the test: the real guest never sends garbage. */
const struct guest_record *test_guest_next(struct test_guest *g, int timeout_ms);

/* The next record of the given type, skipping others (LOG records are
 * printed). Fails the test on timeout or EOF. */
const struct guest_record *test_guest_expect(struct test_guest *g, int type, int timeout_ms);

/* Send GUEST_CMD_STOP. */
void test_guest_request_stop(struct test_guest *g);

/* Wait for QEMU to exit; returns its exit status, fails the test on timeout
 * or death by signal. */
int test_guest_wait_exit(struct test_guest *g, int timeout_ms);

/* Kill if running, reap, close, remove temp files. Safe to call twice. */
void test_guest_stop(struct test_guest *g);

/* A temp file that cleanup removes; returns an fd opened O_RDWR. */
int test_guest_temp_file(struct test_guest *g, const char *name, char *path, size_t size);
