// SPDX-License-Identifier: GPL-2.0-or-later
/* --help text refitted to 80 columns (help-fit.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "help-fit.h"
#include "macro.h"
#include "strbuf.h"

/* Columns of the first n bytes of s (a UTF-8 continuation byte takes none). */
static size_t columns(const char *s, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n && s[i]; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

/* Whether line is a usage synopsis: its options are broken only before a '[', never within one. */
static bool synopsis(const char *line)
{
	const char *p = line + strspn(line, " ");

	return !strncmp(p, "usage: ", 7) || !strncmp(p, "snapbench ", 10) || (p != line && p[0] == '[');
}

/*
 * Where the lines a long line wraps onto start: under the first option of
 * a usage synopsis ("usage: snapbench qmp --socket PATH" -> under
 * "--socket"), under an option's description ("  --fd FILE    open ..."),
 * else at the line's own indent (prose: 0).
 */
static size_t continuation_indent(const char *line)
{
	size_t lead = strspn(line, " ");
	const char *p = line + lead;

	if (synopsis(line)) {
		if (p[0] == '[') /* a synopsis's own further line: its options start where this one's do */
			return lead;
		for (const char *w = strchr(p, ' '); w; w = strchr(w + 1, ' '))
			if (w[1] == '-' || w[1] == '[')
				return (size_t)(w + 1 - line);
		return lead + 4;
	}
	const char *gap = lead ? strstr(p, "  ") : NULL;
	if (gap && gap[strspn(gap, " ")] && !strchr(p, '\t'))
		return (size_t)(gap + strspn(gap, " ") - line);
	return lead;
}

/* Whether next goes on with the block whose lines start at indent (its overflow may be carried into it). */
static bool continues(const char *next, size_t n, size_t indent)
{
	size_t lead = strspn(next, " ");

	if (lead >= n || lead != indent)
		return false;
	/* prose: the paragraph going on, not a heading ("Examples:", "build:", "Exit codes: ...") */
	size_t word = strcspn(next, " \n");
	return indent || (word && next[word - 1] != ':' && strncmp(next, "Exit codes", 10));
}

/* Where to break line (len bytes) so that its first part fits width: the last space that does, past indent. */
static size_t break_at(const char *line, size_t len, size_t width, size_t indent)
{
	bool syn = synopsis(line);
	size_t best = 0;

	for (size_t i = indent + 1; i < len; i++)
		if (line[i] == ' ' && line[i - 1] != ' ' && columns(line, i) <= width && (!syn || line[i + 1] == '['))
			best = i;
	if (!best) /* a word longer than the room: after it */
		for (size_t i = indent + 1; i < len && !best; i++)
			if (line[i] == ' ' && columns(line, i) > width)
				best = i;
	return best;
}

void help_fit(FILE *out, const char *text, size_t width)
{
	_cleanup_strbuf_ struct strbuf line = {};
	const char *p = text;

	while (*p) {
		size_t n = strcspn(p, "\n");
		strbuf_append_mem(&line, p, n);
		p += n + (p[n] == '\n');
		while (!line.oom && columns(line.s, line.len) > width) {
			size_t indent = continuation_indent(line.s), at = break_at(line.s, line.len, width, indent);
			if (!at)
				break;
			fprintf(out, "%.*s\n", (int)at, line.s);
			_cleanup_free_ char *rest = strdup(line.s + at + strspn(line.s + at, " "));
			size_t next = strcspn(p, "\n");
			line.len = 0;
			strbuf_append_repeat(&line, ' ', indent);
			strbuf_append(&line, rest ? rest : "");
			if (*p && continues(p, next, indent)) { /* the next line of the block after the carried words */
				strbuf_append(&line, " ");
				strbuf_append_mem(&line, p + indent, next - indent);
				p += next + (p[next] == '\n');
			}
		}
		fprintf(out, "%s\n", line.oom ? "" : line.len ? line.s : "");
		line.len = 0;
		if (line.s)
			line.s[0] = '\0';
	}
}

void help_print(FILE *out, void (*usage)(FILE *out))
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		usage(out);
		return;
	}
	usage(f);
	if (fclose(f) != 0 || !text) {
		usage(out);
		return;
	}
	help_fit(out, text, HELP_WIDTH);
}
