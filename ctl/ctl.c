/*
 * ctl.c - the control protocol's encoding (see ctl.h).
 */
#include "ctl.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
ctl_name_ok(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if ((*s < 'a' || *s > 'z') && *s != '-')
			return 0;
	return 1;
}

int
ctl_req_parse(char *line, struct ctl_req *rq, char *err, size_t errlen)
{
	char *tok, *save = NULL, *eq;
	size_t vlen;
	int n = 0;

	memset(rq, 0, sizeof(*rq));
	for (tok = strtok_r(line, " ", &save); tok != NULL;
	    tok = strtok_r(NULL, " ", &save), n++) {
		if (n == 0) {
			if (strcmp(tok, CTL_MAGIC) != 0) {
				snprintf(err, errlen, "not a control request");
				return -1;
			}
		} else if (n == 1) {
			if (strcmp(tok, "1") != 0) {
				snprintf(err, errlen, "protocol version %.16s "
				    "not supported (this nlmd speaks %d)", tok,
				    CTL_VERSION);
				return -1;
			}
		} else if (n == 2) {
			if (!ctl_name_ok(tok)) {
				snprintf(err, errlen, "bad command");
				return -1;
			}
			rq->cr_cmd = tok;
		} else {
			if (rq->cr_nargs == CTL_MAX_ARGS) {
				snprintf(err, errlen, "too many arguments");
				return -1;
			}
			if ((eq = strchr(tok, '=')) == NULL) {
				snprintf(err, errlen, "argument without '='");
				return -1;
			}
			*eq = '\0';
			/*
			 * %00 would cut the value short: "host=a%00b" must not
			 * name host "a".
			 */
			if (!ctl_name_ok(tok) ||
			    (vlen = ctl_dec(eq + 1)) == (size_t)-1 ||
			    vlen != strlen(eq + 1)) {
				snprintf(err, errlen, "bad argument");
				return -1;
			}
			/* Which would count: "dry-run=0 dry-run=1"? */
			if (ctl_req_get(rq, tok) != NULL) {
				snprintf(err, errlen, "argument %.32s given "
				    "twice", tok);
				return -1;
			}
			rq->cr_key[rq->cr_nargs] = tok;
			rq->cr_val[rq->cr_nargs++] = eq + 1;
		}
	}
	if (rq->cr_cmd == NULL) {
		snprintf(err, errlen, "no command");
		return -1;
	}
	return 0;
}

const char *
ctl_req_get(const struct ctl_req *rq, const char *key)
{
	size_t i;

	for (i = 0; i < rq->cr_nargs; i++)
		if (strcmp(rq->cr_key[i], key) == 0)
			return rq->cr_val[i];
	return NULL;
}

static bool
ctl_in(const char *key, const char *const *list)
{
	for (; list != NULL && *list != NULL; list++)
		if (strcmp(key, *list) == 0)
			return true;
	return false;
}

int
ctl_req_check(const struct ctl_req *rq, const char *const *keys,
    const char *const *flags, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < rq->cr_nargs; i++) {
		if (!ctl_in(rq->cr_key[i], keys)) {
			snprintf(err, errlen, "%s: unknown argument %.32s",
			    rq->cr_cmd, rq->cr_key[i]);
			return -1;
		}
		if (ctl_in(rq->cr_key[i], flags) &&
		    strcmp(rq->cr_val[i], "0") != 0 &&
		    strcmp(rq->cr_val[i], "1") != 0) {
			snprintf(err, errlen, "%s: %s: 0 or 1", rq->cr_cmd,
			    rq->cr_key[i]);
			return -1;
		}
	}
	return 0;
}

size_t
ctl_enc(const char *src, size_t len, char *dst, size_t cap)
{
	static const char hx[] = "0123456789ABCDEF";
	size_t i, o = 0;
	unsigned char c;

	for (i = 0; i < len; i++) {
		c = (unsigned char)src[i];
		if (c > 0x20 && c < 0x7f && c != '%' && c != '=') {
			if (o + 1 >= cap)
				return (size_t)-1;
			dst[o++] = (char)c;
		} else {
			if (o + 3 >= cap)
				return (size_t)-1;
			dst[o++] = '%';
			dst[o++] = hx[c >> 4];
			dst[o++] = hx[c & 15];
		}
	}
	if (o >= cap)
		return (size_t)-1;
	dst[o] = '\0';
	return o;
}

size_t
ctl_vis(const char *src, char *dst, size_t cap)
{
	size_t i, o = 0, len = strlen(src);
	unsigned char c;

	if (len == 0) {
		if (cap < 2)
			return (size_t)-1;
		memcpy(dst, "-", 2);
		return 1;
	}
	for (i = 0; i < len; i++) {
		c = (unsigned char)src[i];
		/* "-" and "?" alone stand for none and unknown. */
		if (c > 0x20 && c < 0x7f && c != '\\' &&
		    !(len == 1 && (c == '-' || c == '?'))) {
			if (o + 1 >= cap)
				return (size_t)-1;
			dst[o++] = (char)c;
		} else {
			if (o + 4 >= cap)
				return (size_t)-1;
			dst[o++] = '\\';
			dst[o++] = (char)('0' + (c >> 6));
			dst[o++] = (char)('0' + ((c >> 3) & 7));
			dst[o++] = (char)('0' + (c & 7));
		}
	}
	dst[o] = '\0';
	return o;
}

static int
ctl_xval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t
ctl_dec(char *s)
{
	char *r = s, *w = s;
	int hi, lo;

	while (*r != '\0') {
		if (*r != '%') {
			*w++ = *r++;
			continue;
		}
		if ((hi = ctl_xval(r[1])) < 0 || (lo = ctl_xval(r[2])) < 0)
			return (size_t)-1;
		*w++ = (char)(hi << 4 | lo);
		r += 3;
	}
	*w = '\0';
	return (size_t)(w - s);
}

void
ctl_hex(const void *p, size_t len, char *dst, size_t cap)
{
	static const char hx[] = "0123456789abcdef";
	const unsigned char *b = p;
	size_t i;

	if (cap == 0)
		return;
	for (i = 0; i < len && 2 * i + 2 < cap; i++) {
		dst[2 * i] = hx[b[i] >> 4];
		dst[2 * i + 1] = hx[b[i] & 15];
	}
	dst[2 * i] = '\0';
}

long
ctl_unhex(const char *hex, uint8_t *dst, size_t cap)
{
	size_t n = strlen(hex), i;
	int hi, lo;

	if (n % 2 != 0 || n / 2 > cap)
		return -1;
	for (i = 0; i < n / 2; i++) {
		if ((hi = ctl_xval(hex[2 * i])) < 0 ||
		    (lo = ctl_xval(hex[2 * i + 1])) < 0)
			return -1;
		dst[i] = (uint8_t)(hi << 4 | lo);
	}
	return (long)(n / 2);
}
