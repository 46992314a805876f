/* SPDX-License-Identifier: GPL-2.0-or-later */
/* snapbenchd's metrics file for node_exporter's textfile collector (metrics-file.c). */
#pragma once

struct daemon;
struct daemon_config;

/* node_exporter's textfile collector reads *.prom here (Debian's prometheus-node-exporter) */
#define DAEMON_DEFAULT_METRICS_FILE "/var/lib/prometheus/node-exporter/snapbench.prom"

/* The metrics file's path; NULL: none. */
const char *daemon_metrics_path(const struct daemon_config *cfg);
/* Rewrites it after a change (queued, started, ended, cancelled). */
void daemon_write_metrics(struct daemon *d);
