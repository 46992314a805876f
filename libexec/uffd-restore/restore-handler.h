/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The restore's userfaultfd handler: for each missing-page fault in the
 * region it places the aligned chunk around the fault with one UFFDIO_COPY
 * from the source (the snapshot's pages), then the copy wakes the fault.
 */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct handler {
	int uffd;
	char *region;        /* the guest's memory, registered with uffd; aligned to chunk */
	const char *source;  /* what each page is restored from */
	size_t region_bytes, chunk;
	atomic_bool stop;
	pthread_t thread;
	/* what it did, read once the thread has ended */
	uint64_t requests;   /* faults served by a copy */
	uint64_t woken;      /* faults whose chunk was already placed (EEXIST): woken only */
	uint64_t bytes;      /* placed */
	int error;           /* 0, or the negative errno that ended it */
	char what[128];      /* the call that failed */
};

/* Registers h->region (missing faults) on a new userfaultfd and starts the thread; 0 or a negative errno
 * (h->what says which call). */
int handler_start(struct handler *h);
/* Stops the thread and closes the userfaultfd. */
void handler_stop(struct handler *h);
