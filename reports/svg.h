/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A minimal SVG writer for compare's plots: shapes, polylines and escaped
 * text into a growing memory buffer. The output is standalone SVG 1.1 that
 * any XML parser accepts: text is escaped and bytes that XML 1.0 forbids or
 * that are not ASCII become '?' (but for the micro sign of "µs", written
 * as &#181;). Coordinates are written with two decimals
 * so the same plot gives the same bytes.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"
#include "strbuf.h"

struct svg {
	struct strbuf b; /* latches out-of-memory: svg_end() gives NULL */
	bool started;
};

/* Starts a document of width x height user units with a <title>. */
int svg_begin(struct svg *s, double width, double height, const char *title);
/* Ends the document: returns the text (caller frees), NULL on ENOMEM. */
char *svg_end(struct svg *s);
/* Drops a document after an error. */
void svg_abort(struct svg *s);

void svg_group_begin(struct svg *s, const char *id);
void svg_group_end(struct svg *s);
/* fill/stroke: a color or "none"; opacity in [0, 1]. */
void svg_rect(struct svg *s, double x, double y, double w, double h, const char *fill, const char *stroke,
	      double opacity);
/* dash: NULL for a solid line, else a stroke-dasharray such as "4 3". */
void svg_line(struct svg *s, double x1, double y1, double x2, double y2, const char *stroke, double width,
	      const char *dash);
void svg_circle(struct svg *s, double cx, double cy, double r, const char *fill, const char *stroke);
/* xy holds n (x, y) pairs. */
void svg_polyline(struct svg *s, const double *xy, size_t n, const char *stroke, double width);
/* anchor: "start", "middle" or "end". */
_printf_(7, 8) void svg_text(struct svg *s, double x, double y, const char *anchor, double size,
			     const char *fill, const char *fmt, ...);
/* Appends text escaped for XML character data and attribute values. */
void svg_escape(struct strbuf *b, const char *text);
