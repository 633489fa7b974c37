/*
 * sbuf.h - a growable text buffer (metrics, dumps).  On allocation
 * failure the buffer stays as it was and sb_failed is set; the text is
 * always NUL-terminated once anything was added.
 */
#ifndef NLMD_COMMON_SBUF_H
#define NLMD_COMMON_SBUF_H

#include <stdbool.h>
#include <stddef.h>

struct sbuf {
	char	*sb_buf;
	size_t	 sb_len;
	size_t	 sb_cap;
	bool	 sb_failed;
};

void	sbuf_printf(struct sbuf *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Give the memory back; the struct is zeroed. */
void	sbuf_free(struct sbuf *);

#endif
