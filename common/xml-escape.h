/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * XML's five escaped characters, the one table of them: each writer of XML
 * (the libvirt domain's, the JUnit and HTML exports, the SVG plots) asks it
 * for a character's entity and writes the rest its own way.
 */
#pragma once

/* "&amp;", "&lt;", "&gt;", "&quot;" or "&apos;" for c, or NULL when c stands as it is. */
static inline const char *xml_entity(char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&apos;";
	default: return 0;
	}
}
