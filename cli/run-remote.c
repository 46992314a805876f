// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench run through snapbenchd: submit, then print the id or follow the run. */
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "macro.h"
#include "run-remote.h"
#include "verb-args.h"
#include "spec.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void cancel_through_new_connection(const char *socket_path, const char *id)
{
	_cleanup_json_ struct json_object *reply = NULL;
	char who[128];

	snprintf(who, sizeof(who), "snapbench: could not cancel run %s", id);
	if (client_request(who, socket_path, client_request_new("cancel", id), 0, NULL, &reply) == EXIT_OK)
		fprintf(stderr, "snapbench: cancelling run %s (the VM is stopped and knobs restored first)\n", id);
}

int remote_follow(struct client *c, const char *who, const char *socket_path, const char *id, bool quiet,
		  bool cancel_on_signal, struct json_object **final)
{
	struct progress_printer pp;
	struct json_object *reply = NULL;
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	struct sb_error err = {};
	bool cancel_sent = false;
	int r;

	r = client_request_on(c, who, client_request_new("watch", id), 0, &reply);
	if (r != EXIT_OK)
		return r;
	progress_printer_init(&pp, stderr);
	if (!quiet && client_get(reply, "run", "progress", NULL))
		progress_printer_update(&pp, id, client_get(reply, "run", "progress", NULL));
	json_object_put(reply);

	/* no SA_RESTART: a signal interrupts the wait, and the run gets cancelled */
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	for (;;) {
		struct json_object *ev, *name;

		if (interrupted && cancel_on_signal && !cancel_sent) {
			progress_printer_done(&pp);
			cancel_through_new_connection(socket_path, id);
			cancel_sent = true;
		}
		r = client_read(c, -1, &ev, &err);
		if (r == -EINTR)
			continue;
		if (r < 0) {
			progress_printer_done(&pp);
			if (r == -ECONNRESET)
				sb_error_set(&err, r, "snapbenchd closed the connection before run %s ended (did it stop?); 'snapbench show %s' tells its state",
					     id, id);
			verb_error_as(who, "%s", err.msg);
			r = client_exit_code_errno(r);
			break;
		}
		name = client_get(ev, "event", NULL, NULL);
		if (!name || strcmp(client_get_string(ev, "run", ""), id)) {
			json_object_put(ev);
			continue;
		}
		const char *e = json_object_get_string(name);
		if (!strcmp(e, "progress")) {
			if (!quiet)
				progress_printer_update(&pp, id, client_get(ev, "progress", NULL, NULL));
		} else if (!strcmp(e, "state")) {
			if (!quiet && client_get_string(ev, "state", NULL))
				progress_printer_note(&pp, "%s %s", id, client_get_string(ev, "state", ""));
			else if (!quiet && client_get(ev, "cancelling", NULL, NULL))
				progress_printer_note(&pp, "%s cancelling: the VM is being stopped and knobs restored", id);
		} else if (!strcmp(e, "end")) {
			progress_printer_done(&pp);
			*final = json_object_get(client_get(ev, "summary", NULL, NULL));
			if (!*final) {
				*final = json_object_new_object();
				json_object_object_add(*final, "id", json_object_new_string(id));
				json_object_object_add(*final, "state", json_object_get(client_get(ev, "state", NULL, NULL)));
			}
			json_object_put(ev);
			r = EXIT_OK;
			break;
		}
		json_object_put(ev);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return r;
}

int remote_run(const struct run_spec *spec, const struct remote_run_options *o)
{
	_cleanup_client_ struct client *c = NULL;
	_cleanup_json_ struct json_object *reply = NULL, *final = NULL;
	struct json_object *req, *spec_json = NULL;
	const char *id;
	int ret;

	if (spec_to_json(spec, &spec_json) < 0) {
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	req = client_request_new("submit", NULL);
	if (req)
		json_object_object_add(req, "spec", spec_json);
	else
		json_object_put(spec_json);
	ret = client_request("snapbench run", o->socket_path, req, 0, &c, &reply);
	if (ret)
		return ret;
	id = client_get_string(client_get(reply, "run", NULL, NULL), "id", NULL);
	if (!id) {
		verb_error("snapbenchd's reply names no run");
		return EXIT_FAIL;
	}
	if (!o->wait) {
		if (o->json)
			client_print_json(reply);
		else {
			printf("%s\n", id);
			if (!o->quiet)
				fprintf(stderr, "snapbench run: queued as %s, position %d; follow it with 'snapbench status', read it with 'snapbench show %s'\n",
					id, json_object_get_int(client_get(reply, "position", NULL, NULL)), id);
		}
		return EXIT_OK;
	}

	if (!o->quiet)
		fprintf(stderr, "snapbench run: %s queued (position %d); waiting for it (Ctrl-C cancels it)\n", id,
			json_object_get_int(client_get(reply, "position", NULL, NULL)));
	ret = remote_follow(c, "snapbench run", o->socket_path, id, o->quiet, true, &final);
	if (ret != EXIT_OK)
		return ret;
	if (o->json) {
		client_print_json(final);
		verb_errors_answered();
	} else {
		print_summary_block(stdout, final, "");
	}
	ret = client_exit_code_state(client_get_string(final, "state", NULL));
	if (!o->json && ret != EXIT_OK)
		fprintf(stderr, "snapbench run: run %s %s; 'snapbench show %s' and 'snapbench logs %s' tell more\n", id,
			client_get_string(final, "state", "?"), id, id);
	return ret;
}
