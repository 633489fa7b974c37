/*
 * sbuf.c - see sbuf.h.
 */
#include "sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
sbuf_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	size_t cap;
	char *nb;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(sb->sb_buf == NULL ? NULL : sb->sb_buf + sb->sb_len,
	    sb->sb_buf == NULL ? 0 : sb->sb_cap - sb->sb_len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->sb_failed = true;
		return;
	}
	if (sb->sb_buf != NULL && sb->sb_len + (size_t)n < sb->sb_cap) {
		sb->sb_len += (size_t)n;
		return;
	}
	cap = sb->sb_cap == 0 ? 4096 : sb->sb_cap;
	while (cap <= sb->sb_len + (size_t)n)
		cap *= 2;
	if ((nb = realloc(sb->sb_buf, cap)) == NULL) {
		if (sb->sb_buf != NULL)
			sb->sb_buf[sb->sb_len] = '\0';
		sb->sb_failed = true;
		return;
	}
	sb->sb_buf = nb;
	sb->sb_cap = cap;
	va_start(ap, fmt);
	(void)vsnprintf(sb->sb_buf + sb->sb_len, cap - sb->sb_len, fmt, ap);
	va_end(ap);
	sb->sb_len += (size_t)n;
}

void
sbuf_free(struct sbuf *sb)
{
	free(sb->sb_buf);
	memset(sb, 0, sizeof(*sb));
}
