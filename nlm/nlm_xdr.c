/*
 * nlm_xdr.c - in-place decoders for the arguments of the four NLMv4
 * procedures every Linux client sends (TEST, LOCK, CANCEL, UNLOCK), and an
 * encoder for the result most of them answer with (nlm4_res).
 *
 * The rpcgen decoders allocate every string and netobj and xdr_free()
 * releases them again: about 40% of the user-space work of a LOCK.  These
 * decode the same wire format, with the same bounds, into the same
 * structures, but point cookie, fh, oh and caller_name into the request
 * buffer (the transport keeps it until the reply is queued and does not
 * xdr_free() them).  caller_name needs a terminating NUL: it is written
 * after the whole structure is decoded, over the string's XDR padding or,
 * when there is none, over the first byte of the length word that follows
 * it (already decoded by then; a string is never the last field here).
 *
 * They take the request in a few pieces with xdr_inline(), each piece
 * ending with the length word of the next variable-length field, instead
 * of one XDR operation per field (a function call through the stream's
 * ops for every word: half the cost of a LOCK's decoding).  A piece the
 * stream cannot give (too short, or a stream that does not inline) fails
 * the decode, as running out of bytes does in rpcgen's.
 *
 * The rpcgen routines stay the reference: tests and a fuzzer compare both
 * on the same bytes, and every other procedure and direction uses them.
 */
#include "nlm_impl.h"

#include <string.h>

/* Bytes of XDR padding after `n' bytes of opaque data. */
#define NLM_XDR_RNDUP(n)	(((n) + 3u) & ~3u)

static inline uint32_t
nlm_xdr_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void
nlm_xdr_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The next n bytes of the stream, or NULL when it cannot give them. */
static inline uint8_t *
nlm_xdr_take(XDR *x, u_int n)
{
	return (uint8_t *)xdr_inline(x, (int)n);
}

/*
 * The rest of an nlm4_lock whose caller_name is nl bytes long (its length
 * word already taken), and `more' bytes after it, whose address is
 * returned (NULL: the decode failed).  *endp: where caller_name's NUL goes.
 */
static uint8_t *
nlm_xdr_lock(XDR *x, u_int nl, nlm4_lock *l, char **endp, u_int more)
{
	uint8_t *p;
	u_int fl, ol;

	/* caller_name, fh's length */
	if (nl > LM_MAXSTRLEN ||
	    (p = nlm_xdr_take(x, NLM_XDR_RNDUP(nl) + 4)) == NULL)
		return NULL;
	/* An embedded NUL would make the name mean something else. */
	if (memchr(p, '\0', nl) != NULL)
		return NULL;
	l->caller_name = (char *)p;
	*endp = (char *)p + nl;
	fl = nlm_xdr_get32(p + NLM_XDR_RNDUP(nl));
	/* fh, oh's length */
	if (fl > MAXNETOBJ_SZ ||
	    (p = nlm_xdr_take(x, NLM_XDR_RNDUP(fl) + 4)) == NULL)
		return NULL;
	l->fh.nlm_netobj_len = fl;
	l->fh.nlm_netobj_val = fl > 0 ? (char *)p : NULL;
	ol = nlm_xdr_get32(p + NLM_XDR_RNDUP(fl));
	/* oh, svid, l_offset, l_len, then what follows the lock */
	if (ol > MAXNETOBJ_SZ ||
	    (p = nlm_xdr_take(x, NLM_XDR_RNDUP(ol) + 20 + more)) == NULL)
		return NULL;
	l->oh.nlm_netobj_len = ol;
	l->oh.nlm_netobj_val = ol > 0 ? (char *)p : NULL;
	p += NLM_XDR_RNDUP(ol);
	l->svid = (int)nlm_xdr_get32(p);
	l->l_offset = (uint64_t)nlm_xdr_get32(p + 4) << 32 |
	    nlm_xdr_get32(p + 8);
	l->l_len = (uint64_t)nlm_xdr_get32(p + 12) << 32 |
	    nlm_xdr_get32(p + 16);
	return p + 20;
}

/*
 * The cookie (its length word first) and `more' bytes after it, which end
 * with caller_name's length word; their address, or NULL.
 */
static uint8_t *
nlm_xdr_cookie(XDR *x, nlm_netobj *o, u_int more)
{
	uint8_t *p;
	u_int len;

	if ((p = nlm_xdr_take(x, 4)) == NULL ||
	    (len = nlm_xdr_get32(p)) > MAXNETOBJ_SZ ||
	    (p = nlm_xdr_take(x, NLM_XDR_RNDUP(len) + more)) == NULL)
		return NULL;
	o->nlm_netobj_len = len;
	o->nlm_netobj_val = len > 0 ? (char *)p : NULL;
	return p + NLM_XDR_RNDUP(len);
}

/* An XDR bool: any word but 0 is TRUE, as xdr_bool() reads it. */
static inline bool_t
nlm_xdr_bool(const uint8_t *p)
{
	return nlm_xdr_get32(p) != 0 ? TRUE : FALSE;
}

bool_t
nlm_xdr_lockargs(XDR *x, nlm4_lockargs *a)
{
	uint8_t *p;
	char *end;

	if (x->x_op != XDR_DECODE)
		return xdr_nlm4_lockargs(x, a);
	/* cookie, block, exclusive, caller_name's length */
	if ((p = nlm_xdr_cookie(x, &a->cookie, 12)) == NULL)
		return FALSE;
	a->block = nlm_xdr_bool(p);
	a->exclusive = nlm_xdr_bool(p + 4);
	/* the lock, reclaim, state */
	if ((p = nlm_xdr_lock(x, nlm_xdr_get32(p + 8), &a->alock, &end,
	    8)) == NULL)
		return FALSE;
	a->reclaim = nlm_xdr_bool(p);
	a->state = (int)nlm_xdr_get32(p + 4);
	*end = '\0';
	return TRUE;
}

bool_t
nlm_xdr_unlockargs(XDR *x, nlm4_unlockargs *a)
{
	uint8_t *p;
	char *end;

	if (x->x_op != XDR_DECODE)
		return xdr_nlm4_unlockargs(x, a);
	if ((p = nlm_xdr_cookie(x, &a->cookie, 4)) == NULL ||
	    nlm_xdr_lock(x, nlm_xdr_get32(p), &a->alock, &end, 0) == NULL)
		return FALSE;
	*end = '\0';
	return TRUE;
}

bool_t
nlm_xdr_testargs(XDR *x, nlm4_testargs *a)
{
	uint8_t *p;
	char *end;

	if (x->x_op != XDR_DECODE)
		return xdr_nlm4_testargs(x, a);
	if ((p = nlm_xdr_cookie(x, &a->cookie, 8)) == NULL)
		return FALSE;
	a->exclusive = nlm_xdr_bool(p);
	if (nlm_xdr_lock(x, nlm_xdr_get32(p + 4), &a->alock, &end, 0) ==
	    NULL)
		return FALSE;
	*end = '\0';
	return TRUE;
}

bool_t
nlm_xdr_cancargs(XDR *x, nlm4_cancargs *a)
{
	uint8_t *p;
	char *end;

	if (x->x_op != XDR_DECODE)
		return xdr_nlm4_cancargs(x, a);
	if ((p = nlm_xdr_cookie(x, &a->cookie, 12)) == NULL)
		return FALSE;
	a->block = nlm_xdr_bool(p);
	a->exclusive = nlm_xdr_bool(p + 4);
	if (nlm_xdr_lock(x, nlm_xdr_get32(p + 8), &a->alock, &end, 0) ==
	    NULL)
		return FALSE;
	*end = '\0';
	return TRUE;
}

bool_t
nlm_xdr_res(XDR *x, nlm4_res *r)
{
	u_int len = r->cookie.nlm_netobj_len, pad;
	uint8_t *p;

	if (x->x_op != XDR_ENCODE || len > MAXNETOBJ_SZ ||
	    (p = nlm_xdr_take(x, NLM_XDR_RNDUP(len) + 8)) == NULL)
		return xdr_nlm4_res(x, r);
	nlm_xdr_put32(p, len);
	if (len > 0)
		memcpy(p + 4, r->cookie.nlm_netobj_val, len);
	for (pad = len; pad < NLM_XDR_RNDUP(len); pad++)
		p[4 + pad] = 0;
	nlm_xdr_put32(p + 4 + NLM_XDR_RNDUP(len), (uint32_t)r->stat.stat);
	return TRUE;
}
