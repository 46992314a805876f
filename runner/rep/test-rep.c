// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The repetition pipeline (rep.h): phases in order, teardown after every
 * attempt that got past prepare (told which phase failed), none after a
 * failed prepare, and again's retry from prepare.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "rep.h"

/* a repetition that records the phases it went through, one letter each */
struct trace {
	char seen[64];
	int fail_in;          /* the letter of the phase that fails ('p', 'b', 'w', 's'), 0: none */
	int fail_with;
	unsigned attempts_left; /* again() says yes this many times */
	int torn_down_k;
	enum rep_phase torn_down_at;
};

static int step(struct trace *t, char c, struct sb_error *err)
{
	size_t n = strlen(t->seen);

	t->seen[n] = c;
	t->seen[n + 1] = '\0';
	if (t->fail_in == c)
		return sb_error_set(err, t->fail_with, "phase %c failed", c);
	return 0;
}

static int prepare(void *rep, struct sb_error *err) { return step(rep, 'p', err); }
static int boot(void *rep, struct sb_error *err) { return step(rep, 'b', err); }
static int windows(void *rep, struct sb_error *err) { return step(rep, 'w', err); }
static int summarize(void *rep, struct sb_error *err) { return step(rep, 's', err); }

static void teardown(void *rep, int k, enum rep_phase failed, const struct sb_error *err)
{
	struct trace *t = rep;

	step(t, 't', NULL);
	t->torn_down_k = k;
	t->torn_down_at = failed;
	CHECK(k >= 0 || *err->msg); /* a failure reaches teardown with its message */
}

static bool again(void *rep, int k, struct sb_error *err)
{
	struct trace *t = rep;

	step(t, 'a', NULL);
	if (!t->attempts_left || k != -EHOSTDOWN)
		return false;
	t->attempts_left--;
	t->fail_in = 0; /* the next attempt goes through */
	sb_error_clear(err);
	return true;
}

static const struct rep_phases phases = {
	.prepare = prepare,
	.boot = boot,
	.windows = windows,
	.summarize = summarize,
	.teardown = teardown,
	.again = again,
};

static int run(const struct rep_phases *ph, struct trace *t, struct sb_error *err)
{
	*err = (struct sb_error){};
	return rep_phases_run(ph, t, err);
}

int main(void)
{
	struct rep_phases no_again = phases;
	struct sb_error err;
	struct trace t;

	no_again.again = NULL;

	/* every phase in order, then teardown with nothing failed */
	t = (struct trace){};
	CHECK(run(&phases, &t, &err) == 0);
	CHECK_MSG(!strcmp(t.seen, "pbwst"), "%s", t.seen);
	CHECK(t.torn_down_k == 0 && t.torn_down_at == REP_PHASE_NONE);

	/* a failed prepare: nothing started, nothing torn down */
	t = (struct trace){ .fail_in = 'p', .fail_with = -ENOMEM };
	CHECK(run(&phases, &t, &err) == -ENOMEM);
	CHECK_MSG(!strcmp(t.seen, "p"), "%s", t.seen);
	CHECK(!strcmp(err.msg, "phase p failed"));

	/* a failed window: no summary, teardown told which phase, the error kept */
	t = (struct trace){ .fail_in = 'w', .fail_with = -EIO };
	CHECK(run(&phases, &t, &err) == -EIO);
	CHECK_MSG(!strcmp(t.seen, "pbwta"), "%s", t.seen);
	CHECK(t.torn_down_k == -EIO && t.torn_down_at == REP_PHASE_WINDOWS);
	CHECK(!strcmp(err.msg, "phase w failed"));

	/* a failed boot, with and without the summary's phase */
	t = (struct trace){ .fail_in = 'b', .fail_with = -EIO };
	CHECK(run(&phases, &t, &err) == -EIO);
	CHECK(t.torn_down_at == REP_PHASE_BOOT);
	t = (struct trace){ .fail_in = 's', .fail_with = -EIO };
	CHECK(run(&phases, &t, &err) == -EIO);
	CHECK_MSG(!strcmp(t.seen, "pbwsta"), "%s", t.seen);
	CHECK(t.torn_down_at == REP_PHASE_SUMMARIZE);

	/* again says yes once: the whole repetition again from prepare, and it completes */
	t = (struct trace){ .fail_in = 'w', .fail_with = -EHOSTDOWN, .attempts_left = 1 };
	CHECK(run(&phases, &t, &err) == 0);
	CHECK_MSG(!strcmp(t.seen, "pbwtapbwst"), "%s", t.seen);
	CHECK(!*err.msg);

	/* again says no (a second silence is not retried here: attempts_left 0) */
	t = (struct trace){ .fail_in = 'b', .fail_with = -EHOSTDOWN };
	CHECK(run(&phases, &t, &err) == -EHOSTDOWN);
	CHECK_MSG(!strcmp(t.seen, "pbta"), "%s", t.seen);

	/* no again hook: the failure stands after teardown */
	t = (struct trace){ .fail_in = 'b', .fail_with = -EHOSTDOWN, .attempts_left = 1 };
	CHECK(run(&no_again, &t, &err) == -EHOSTDOWN);
	CHECK_MSG(!strcmp(t.seen, "pbt"), "%s", t.seen);
	return 0;
}
