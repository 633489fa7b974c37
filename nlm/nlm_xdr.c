/*
 * nlm_xdr.c - in-place decoders for the arguments of the four NLMv4
 * procedures every Linux client sends (TEST, LOCK, CANCEL, UNLOCK).
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
 * The rpcgen decoders stay the reference: tests compare both on the same
 * bytes, and every other procedure uses them.
 */
#include "nlm_impl.h"

#include <string.h>

/* Bytes of XDR padding after `n' bytes of opaque data. */
#define NLM_XDR_RNDUP(n)	(((n) + 3u) & ~3u)

static bool_t
nlm_xdr_netobj(XDR *x, nlm_netobj *o)
{
	u_int len;
	char *p = NULL;

	if (!xdr_u_int(x, &len) || len > MAXNETOBJ_SZ)
		return FALSE;
	if (len > 0 && (p = (char *)xdr_inline(x, (int)NLM_XDR_RNDUP(len))) ==
	    NULL)
		return FALSE;
	o->nlm_netobj_len = len;
	o->nlm_netobj_val = p;
	return TRUE;
}

/* The string's bytes stay in place; *endp is where its NUL must go. */
static bool_t
nlm_xdr_string(XDR *x, char **sp, char **endp)
{
	u_int len;
	char *p;

	if (!xdr_u_int(x, &len) || len > LM_MAXSTRLEN ||
	    (p = (char *)xdr_inline(x, (int)NLM_XDR_RNDUP(len))) == NULL)
		return FALSE;
	/* An embedded NUL would make the name mean something else. */
	if (memchr(p, '\0', len) != NULL)
		return FALSE;
	*sp = p;
	*endp = p + len;
	return TRUE;
}

static bool_t
nlm_xdr_lock(XDR *x, nlm4_lock *l, char **endp)
{
	return nlm_xdr_string(x, &l->caller_name, endp) &&
	    nlm_xdr_netobj(x, &l->fh) && nlm_xdr_netobj(x, &l->oh) &&
	    xdr_int(x, &l->svid) && xdr_u_quad_t(x, &l->l_offset) &&
	    xdr_u_quad_t(x, &l->l_len);
}

bool_t
nlm_xdr_lockargs(XDR *x, nlm4_lockargs *a)
{
	char *end;

	if (x->x_op != XDR_DECODE)
		return xdr_nlm4_lockargs(x, a);
	if (!nlm_xdr_netobj(x, &a->cookie) || !xdr_bool(x, &a->block) ||
	    !xdr_bool(x, &a->exclusive) || !nlm_xdr_lock(x, &a->alock, &end) ||
	    !xdr_bool(x, &a->reclaim) || !xdr_int(x, &a->state))
		return FALSE;
	*end = '\0';
	return TRUE;
}

bool_t
nlm_xdr_unlockargs(XDR *x, nlm4_unlockargs *a)
{
	char *end;

	if (x->x_op != XDR_DECODE)
		return xdr_nlm4_unlockargs(x, a);
	if (!nlm_xdr_netobj(x, &a->cookie) || !nlm_xdr_lock(x, &a->alock, &end))
		return FALSE;
	*end = '\0';
	return TRUE;
}

bool_t
nlm_xdr_testargs(XDR *x, nlm4_testargs *a)
{
	char *end;

	if (x->x_op != XDR_DECODE)
		return xdr_nlm4_testargs(x, a);
	if (!nlm_xdr_netobj(x, &a->cookie) || !xdr_bool(x, &a->exclusive) ||
	    !nlm_xdr_lock(x, &a->alock, &end))
		return FALSE;
	*end = '\0';
	return TRUE;
}

bool_t
nlm_xdr_cancargs(XDR *x, nlm4_cancargs *a)
{
	char *end;

	if (x->x_op != XDR_DECODE)
		return xdr_nlm4_cancargs(x, a);
	if (!nlm_xdr_netobj(x, &a->cookie) || !xdr_bool(x, &a->block) ||
	    !xdr_bool(x, &a->exclusive) || !nlm_xdr_lock(x, &a->alock, &end))
		return FALSE;
	*end = '\0';
	return TRUE;
}
