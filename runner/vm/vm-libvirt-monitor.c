// SPDX-License-Identifier: GPL-2.0-or-later
/* The libvirt backend's monitors: QMP and the guest agent through libvirt, each command with a timeout. */
#include "vm-libvirt-private.h"

#include <errno.h>
#include <fcntl.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "macro.h"
#include "qga.h"
#include "qmp.h"

/* ---- QMP through libvirt, with a timeout ----------------------------------- */

/*
 * One monitor command on its own thread. The caller waits up to its
 * timeout; a call that outlives it finishes on its own and drops its
 * reply, as a late reply on a stream is dropped.
 */
struct lv_call {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned refs;
	bool done;
	virDomainPtr dom;
	char *cmd;
	int fd;
	char *result;
	int code;
	char msg[SB_ERROR_MAX];
};

static void call_unref(struct lv_call *c)
{
	bool last;

	pthread_mutex_lock(&c->lock);
	last = --c->refs == 0;
	pthread_mutex_unlock(&c->lock);
	if (!last)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->dom)
		virDomainFree(c->dom);
	free(c->cmd);
	free(c->result);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static void *call_main(void *p)
{
	struct lv_call *c = p;
	char *result = NULL;
	int fds[1] = { c->fd };
	int r;

	r = virDomainQemuMonitorCommandWithFiles(c->dom, c->cmd, c->fd >= 0 ? 1 : 0, c->fd >= 0 ? fds : NULL, NULL, NULL,
						 &result, 0);
	pthread_mutex_lock(&c->lock);
	if (r < 0) {
		c->code = -EIO;
		snprintf(c->msg, sizeof(c->msg), "%s", lv_error());
	}
	c->result = result;
	c->done = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	call_unref(c);
	return NULL;
}

static int lv_qmp_execute(void *opaque, const char *command_json, int fd, int timeout_ms, char **reply_json,
			  struct sb_error *err)
{
	struct lv_vm *lv = opaque;
	struct lv_call *c;
	pthread_t t;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return sb_error_set(err, -ENOMEM, "out of memory");
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	c->refs = 2;
	c->fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
	c->cmd = strdup(command_json);
	c->dom = lv->dom;
	if (!c->cmd || (fd >= 0 && c->fd < 0) || virDomainRef(lv->dom) < 0) {
		c->dom = NULL;
		c->refs = 1;
		r = c->cmd ? -errno : -ENOMEM;
		call_unref(c);
		return sb_error_set(err, r < 0 ? r : -ENOMEM, "cannot prepare a monitor command for domain %s", lv->name);
	}
	r = -pthread_create(&t, NULL, call_main, c);
	if (r < 0) {
		c->refs = 1;
		call_unref(c);
		return sb_error_set(err, r, "cannot start a thread for a monitor command: %s", strerror(-r));
	}
	pthread_detach(t);

	uint64_t deadline = timeout_ms >= 0 ? mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC : 0;
	struct timespec ts;
	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t abs_ns = (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec + (uint64_t)timeout_ms * NSEC_PER_MSEC;
		ts.tv_sec = (time_t)(abs_ns / NSEC_PER_SEC);
		ts.tv_nsec = (long)(abs_ns % NSEC_PER_SEC);
	}
	pthread_mutex_lock(&c->lock);
	while (!c->done) {
		if (timeout_ms < 0) {
			pthread_cond_wait(&c->cond, &c->lock);
		} else if (pthread_cond_timedwait(&c->cond, &c->lock, &ts) == ETIMEDOUT && mono_ns() >= deadline) {
			break;
		}
	}
	if (!c->done) {
		r = sb_error_set(err, -ETIMEDOUT, "libvirt domain %s: no reply from QEMU's monitor within %d ms", lv->name,
				 timeout_ms);
	} else if (c->code < 0) {
		/* the domain went away, or libvirt refused the command */
		r = sb_error_set(err, virDomainIsActive(lv->dom) == 1 ? -EIO : -ECONNRESET,
				 "libvirt domain %s: monitor command failed: %s", lv->name, c->msg);
	} else {
		*reply_json = TAKE_PTR(c->result);
		r = 0;
	}
	pthread_mutex_unlock(&c->lock);
	call_unref(c);
	return r;
}

const struct qmp_transport_ops lv_qmp_ops = {
	.execute = lv_qmp_execute,
};

/* ---- the guest agent through libvirt ------------------------------------------ */

static int lv_agent_execute(void *opaque, const char *command_json, int timeout_ms, char **reply_json,
			    struct sb_error *err)
{
	struct lv_vm *lv = opaque;
	int secs = timeout_ms < 0 ? VIR_DOMAIN_QEMU_AGENT_COMMAND_BLOCK : timeout_ms < 1000 ? 1 : (timeout_ms + 999) / 1000;
	char *r = virDomainQemuAgentCommand(lv->dom, command_json, secs, 0);
	virErrorPtr e;

	if (r) {
		*reply_json = r;
		return 0;
	}
	e = virGetLastError();
	int code = e ? e->code : VIR_ERR_INTERNAL_ERROR;
	if (code == VIR_ERR_ARGUMENT_UNSUPPORTED || code == VIR_ERR_OPERATION_UNSUPPORTED)
		return sb_error_set(err, -ENOTCONN,
				    "libvirt domain %s: the guest agent is not configured (%s): add a channel <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel> to the domain",
				    lv->name, lv_error());
	if (code == VIR_ERR_AGENT_UNRESPONSIVE || code == VIR_ERR_AGENT_UNSYNCED)
		return sb_error_set(err, -ENOTCONN, "libvirt domain %s: %s", lv->name, lv_error());
	if (code == VIR_ERR_OPERATION_TIMEOUT)
		return sb_error_set(err, -ETIMEDOUT, "libvirt domain %s: %s", lv->name, lv_error());
	if (code == VIR_ERR_OPERATION_INVALID)
		return sb_error_set(err, -ECONNRESET, "libvirt domain %s: %s", lv->name, lv_error());
	return sb_error_set(err, -EREMOTEIO, "libvirt domain %s: guest agent: %s", lv->name, lv_error());
}

const struct qga_transport_ops lv_agent_ops = {
	.execute = lv_agent_execute,
};
