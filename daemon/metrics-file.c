// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbenchd's metrics file: the store's runs by state, the queue's length
 * and the newest completed run of each label, in the Prometheus text format
 * for node_exporter's textfile collector (docs/service.md "Metrics", the
 * names in docs/exports.md). Rewritten atomically (temp file, fsync, rename:
 * the collector never reads a torn file, and skips the temp file, whose name
 * does not end in .prom) when the daemon starts and whenever a run is
 * queued, starts, ends or is cancelled. No listener: the collector reads the file.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic-file.h"
#include "daemon.h"
#include "export.h"
#include "json-util.h"
#include "log.h"
#include "metrics-file.h"
#include "store.h"

const char *daemon_metrics_path(const struct daemon_config *cfg)
{
	if (cfg->metrics_file)
		return cfg->metrics_file[0] ? cfg->metrics_file : NULL;
	/* the default only for the system's store: a private daemon (a test, a second
	 * instance) must not overwrite the system's file */
	return strcmp(cfg->state_dir, DAEMON_DEFAULT_STATE_DIR) ? NULL : DAEMON_DEFAULT_METRICS_FILE;
}

void daemon_write_metrics(struct daemon *d)
{
	const char *path = daemon_metrics_path(&d->cfg);
	struct store_filter all = { .state = -1 };
	_cleanup_json_ struct json_object *runs = NULL;
	_cleanup_free_ char *text = NULL;
	struct sb_error err = {};

	if (!path)
		return;
	if (!d->cfg.metrics_file) {
		/* the default directory exists only where prometheus-node-exporter is installed */
		_cleanup_free_ char *dir = strndup(path, (size_t)(strrchr(path, '/') - path));
		struct stat st;
		if (!dir || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			return;
	}
	if (store_list(d->store, &all, &runs, &err) < 0 ||
	    export_service_metrics(runs, d->queue.n, &text, &err) < 0 ||
	    atomic_file_write(path, text, strlen(text), 0644, &err) < 0) {
		if (!d->metrics_failed) /* once until it works again: runs are rare, a full disk is not news each time */
			log_warning("metrics file %s not written: %s", path, err.msg);
		d->metrics_failed = true;
		return;
	}
	if (d->metrics_failed)
		log_notice("metrics file %s written again", path);
	d->metrics_failed = false;
}
