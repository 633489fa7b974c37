/*
 * ctl.h - the control protocol between nlmctl and a running nlmd, over a
 * Unix stream socket (version 1).
 *
 * REQUEST: one line of at most CTL_REQ_MAX bytes:
 *     nlmctl 1 COMMAND [KEY=VALUE ...]\n
 *   COMMAND and KEY are [a-z-]; VALUE is percent-encoded (ctl_enc()).
 *   One request per connection.  A key given twice, a key the command
 *   does not take, or a flag (locks, dry-run) other than 0 or 1 is an
 *   error, and the request does nothing.
 *
 * RESPONSE:
 *     nlmctl 1 ok\n              or    nlmctl 1 error MESSAGE\n (then EOF)
 *   (MESSAGE: one line, control characters, bytes outside ASCII and '\'
 *   written \ooo, as ctl_vis() does)
 *     BODY LINES
 *     nlmctl 1 end N\n           N: the number of body lines
 *   A body line is KIND, then TAB-separated KEY=VALUE fields, VALUE
 *   percent-encoded: "host\tid=3\tname=client1\t...".  The kinds and their
 *   keys are listed in nlmctl(8) and cmd/nlmctl.c; a reader ignores keys
 *   it does not know (new ones may be added within a version).  The body
 *   of `metrics' is the Prometheus text format, one line per body line,
 *   not encoded.  A reader that sees EOF before the end line, or another
 *   count, must treat the answer as incomplete.
 *
 * COMMANDS: status [host=NAME] [fh=HEX] [locks=0|1]; release (host=NAME |
 * addr=ADDR | fh=HEX | owner=HOST:SVID:OHHEX) [dry-run=0|1]; grace-end;
 * metrics.
 */
#ifndef NLMD_CTL_CTL_H
#define NLMD_CTL_CTL_H

#include <stddef.h>
#include <stdint.h>

#define CTL_MAGIC		"nlmctl"
#define CTL_VERSION		1
#define CTL_REQ_MAX		4096
#define CTL_MAX_ARGS		16
#define CTL_DEFAULT_SOCKET	"/run/nlmd/nlmd.sock"

/* A parsed request; the strings point into the caller's buffer. */
struct ctl_req {
	const char	*cr_cmd;
	size_t		 cr_nargs;
	const char	*cr_key[CTL_MAX_ARGS];
	const char	*cr_val[CTL_MAX_ARGS];	/* decoded */
};

/*
 * Parse one request line (NUL-terminated, no newline) in place.  Returns
 * 0, or -1 with a reason in err[errlen] (a key given twice is one).
 */
int		 ctl_req_parse(char *line, struct ctl_req *rq, char *err,
		    size_t errlen);
/* The value of `key', or NULL. */
const char	*ctl_req_get(const struct ctl_req *rq, const char *key);
/*
 * The check of a request's arguments against what its command takes
 * (the control server makes it before the command runs; see
 * ctl_srv_command()): every key among `keys' (NULL-terminated; NULL:
 * none at all), and each of `flags' (NULL-terminated, or NULL) that is
 * given "0" or "1".  0, or -1 with the reason in err[errlen].
 */
int		 ctl_req_check(const struct ctl_req *rq,
		    const char *const *keys, const char *const *flags,
		    char *err, size_t errlen);

/*
 * Percent-encode src into dst[cap] (NUL-terminated): bytes outside
 * 0x21..0x7e, '%', '=' and TAB become %XX.  Returns the length, or
 * (size_t)-1 if it does not fit.
 */
size_t		 ctl_enc(const char *src, size_t len, char *dst, size_t cap);
/* Decode in place; returns the new length, (size_t)-1 on a bad escape. */
size_t		 ctl_dec(char *s);

/*
 * A client-chosen string (a host name) as one field of a text table:
 * never empty, never white space or a control character, never one of
 * the placeholders the tables print.  Into dst[cap] (NUL-terminated):
 * bytes outside 0x21..0x7e and '\' become \ooo (three octal digits, as
 * in /proc/mounts: "a b" is a\040b); the empty string becomes "-"; a
 * string that is exactly "-" or "?" gets its character escaped ("\055",
 * "\077").  Distinct strings stay distinct.  Returns the length, or
 * (size_t)-1 if it does not fit; CTL_VIS_MAX(n) bytes always do.
 */
#define CTL_VIS_MAX(n)	(4 * (n) + 2)
size_t		 ctl_vis(const char *src, char *dst, size_t cap);

/* Hex of bytes, and back (returns the byte count, -1 on bad input). */
void		 ctl_hex(const void *p, size_t len, char *dst, size_t cap);
long		 ctl_unhex(const char *hex, uint8_t *dst, size_t cap);

#endif
