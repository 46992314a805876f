// SPDX-License-Identifier: GPL-2.0-or-later
#include "svg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

void svg_escape(FILE *f, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			fputc(*p >= 0x20 && *p < 0x7f ? *p : '?', f);
		}
	}
}

int svg_begin(struct svg *s, double width, double height, const char *title)
{
	*s = (struct svg){ 0 };
	s->f = open_memstream(&s->buf, &s->len);
	if (!s->f)
		return -ENOMEM;
	fprintf(s->f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n<title>",
		width, height, width, height);
	svg_escape(s->f, title);
	fputs("</title>\n", s->f);
	svg_rect(s, 0, 0, width, height, "white", "none", 1.0);
	return 0;
}

char *svg_end(struct svg *s)
{
	char *out;

	if (!s->f)
		return NULL;
	fputs("</svg>\n", s->f);
	if (ferror(s->f))
		s->failed = true;
	if (fclose(s->f) != 0)
		s->failed = true;
	s->f = NULL;
	out = s->buf;
	s->buf = NULL;
	if (s->failed) {
		free(out);
		return NULL;
	}
	return out;
}

void svg_abort(struct svg *s)
{
	if (s->f)
		fclose(s->f);
	free(s->buf);
	*s = (struct svg){ 0 };
}

void svg_group_begin(struct svg *s, const char *id)
{
	fputs("<g id=\"", s->f);
	svg_escape(s->f, id);
	fputs("\">\n", s->f);
}

void svg_group_end(struct svg *s)
{
	fputs("</g>\n", s->f);
}

void svg_rect(struct svg *s, double x, double y, double w, double h, const char *fill, const char *stroke,
	      double opacity)
{
	fprintf(s->f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" stroke=\"%s\"",
		x, y, w < 0 ? 0 : w, h < 0 ? 0 : h, fill, stroke);
	if (opacity < 1.0)
		fprintf(s->f, " fill-opacity=\"%.2f\"", opacity);
	fputs("/>\n", s->f);
}

void svg_line(struct svg *s, double x1, double y1, double x2, double y2, const char *stroke, double width,
	      const char *dash)
{
	fprintf(s->f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"%.2f\"",
		x1, y1, x2, y2, stroke, width);
	if (dash)
		fprintf(s->f, " stroke-dasharray=\"%s\"", dash);
	fputs("/>\n", s->f);
}

void svg_circle(struct svg *s, double cx, double cy, double r, const char *fill, const char *stroke)
{
	fprintf(s->f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"%s\" stroke=\"%s\"/>\n", cx, cy, r, fill,
		stroke);
}

void svg_polyline(struct svg *s, const double *xy, size_t n, const char *stroke, double width)
{
	fputs("<polyline points=\"", s->f);
	for (size_t i = 0; i < n; i++)
		fprintf(s->f, "%s%.2f,%.2f", i ? " " : "", xy[2 * i], xy[2 * i + 1]);
	fprintf(s->f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.2f\"/>\n", stroke, width);
}

void svg_text(struct svg *s, double x, double y, const char *anchor, double size, const char *fill,
	      const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0) {
		text = NULL;
		s->failed = true;
	}
	va_end(ap);
	if (!text)
		return;
	fprintf(s->f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" font-size=\"%.1f\" fill=\"%s\">", x, y,
		anchor, size, fill);
	svg_escape(s->f, text);
	fputs("</text>\n", s->f);
	free(text);
}
