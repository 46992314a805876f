// SPDX-License-Identifier: GPL-2.0-or-later
/* show, list and logs reading the run store when snapbenchd does not answer. */
#include "store-read.h"

#include <errno.h>

#include "exit-codes.h"
#include "verb-args.h"

int store_read_connect(const char *who, const char *socket_path, const char *store_dir, struct client **c,
		       struct store **s)
{
	struct sb_error err = {}, serr = {};
	int r;

	r = client_connect(socket_path, c, &err);
	if (r >= 0)
		return 0;
	if (r != -ENOENT && r != -ECONNREFUSED) { /* a daemon is there but will not talk to us: say why */
		verb_error_as(who, "%s", err.msg);
		return client_exit_code_errno(r);
	}
	if (!store_dir)
		store_dir = STORE_READ_DEFAULT;
	if (store_open_runs(store_dir, s, &serr) < 0) {
		verb_error_as(who, "%s; no run store to read instead (%s; --store DIR names another)", err.msg,
			      serr.msg);
		return client_exit_code_errno(r);
	}
	verb_message("snapbenchd is not running; reading the run store %s", store_dir);
	return 0;
}
