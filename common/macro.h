/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Base macros every component may use: cleanup attributes and small helpers.
 * This is not a component; it holds nothing that knows about QMP, BPF, guests
 * or reports.
 */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* The struct of type that holds member at ptr. */
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Hand over ownership out of a cleanup variable. */
#define TAKE_PTR(p)                         \
	({                                  \
		__typeof__(p) _p_ = (p);    \
		(p) = NULL;                 \
		_p_;                        \
	})
#define TAKE_FD(fd)                 \
	({                          \
		int _fd_ = (fd);    \
		(fd) = -1;          \
		_fd_;               \
	})
