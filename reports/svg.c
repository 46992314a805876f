// SPDX-License-Identifier: GPL-2.0-or-later
#include "svg.h"

#include <stdarg.h>
#include <stdlib.h>

#include "xml-escape.h"

void svg_escape(struct strbuf *b, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (xml_entity((char)*p)) {
			strbuf_append(b, xml_entity((char)*p));
			continue;
		}
		switch (*p) {
		case 0xc2:
			if (p[1] == 0xb5) { /* the micro sign of "µs", as a character reference */
				strbuf_append(b, "&#181;");
				p++;
				break;
			}
			strbuf_append(b, "?");
			break;
		default:
			strbuf_append_repeat(b, *p >= 0x20 && *p < 0x7f ? (char)*p : '?', 1);
		}
	}
}

int svg_begin(struct svg *s, double width, double height, const char *title)
{
	*s = (struct svg){ .started = true };
	strbuf_appendf(&s->b,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n<title>",
		width, height, width, height);
	svg_escape(&s->b, title);
	strbuf_append(&s->b, "</title>\n");
	svg_rect(s, 0, 0, width, height, "white", "none", 1.0);
	return 0;
}

char *svg_end(struct svg *s)
{
	if (!s->started)
		return NULL;
	strbuf_append(&s->b, "</svg>\n");
	s->started = false;
	return strbuf_steal(&s->b);
}

void svg_abort(struct svg *s)
{
	strbuf_free(&s->b);
	*s = (struct svg){ 0 };
}

void svg_group_begin(struct svg *s, const char *id)
{
	strbuf_append(&s->b, "<g id=\"");
	svg_escape(&s->b, id);
	strbuf_append(&s->b, "\">\n");
}

void svg_group_end(struct svg *s)
{
	strbuf_append(&s->b, "</g>\n");
}

void svg_rect(struct svg *s, double x, double y, double w, double h, const char *fill, const char *stroke,
	      double opacity)
{
	strbuf_appendf(&s->b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" stroke=\"%s\"",
		x, y, w < 0 ? 0 : w, h < 0 ? 0 : h, fill, stroke);
	if (opacity < 1.0)
		strbuf_appendf(&s->b, " fill-opacity=\"%.2f\"", opacity);
	strbuf_append(&s->b, "/>\n");
}

void svg_line(struct svg *s, double x1, double y1, double x2, double y2, const char *stroke, double width,
	      const char *dash)
{
	strbuf_appendf(&s->b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"%.2f\"",
		x1, y1, x2, y2, stroke, width);
	if (dash)
		strbuf_appendf(&s->b, " stroke-dasharray=\"%s\"", dash);
	strbuf_append(&s->b, "/>\n");
}

void svg_circle(struct svg *s, double cx, double cy, double r, const char *fill, const char *stroke)
{
	strbuf_appendf(&s->b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"%s\" stroke=\"%s\"/>\n", cx, cy, r, fill,
		stroke);
}

void svg_polyline(struct svg *s, const double *xy, size_t n, const char *stroke, double width)
{
	strbuf_append(&s->b, "<polyline points=\"");
	for (size_t i = 0; i < n; i++)
		strbuf_appendf(&s->b, "%s%.2f,%.2f", i ? " " : "", xy[2 * i], xy[2 * i + 1]);
	strbuf_appendf(&s->b, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.2f\"/>\n", stroke, width);
}

void svg_text(struct svg *s, double x, double y, const char *anchor, double size, const char *fill,
	      const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0) {
		text = NULL;
		s->b.oom = true;
	}
	va_end(ap);
	if (!text)
		return;
	strbuf_appendf(&s->b, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" font-size=\"%.1f\" fill=\"%s\">", x, y,
		anchor, size, fill);
	svg_escape(&s->b, text);
	strbuf_append(&s->b, "</text>\n");
	free(text);
}
