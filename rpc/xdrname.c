/*
 * xdrname.c - the XDR routines of the host names in our .x files
 * (nlm_prot.x's nlm_name, sm_inter.x's sm_hostname), which rpcgen leaves
 * to us.
 *
 * On the wire a name is an XDR string; in C it is a NUL-terminated
 * string, so a name holding a NUL cannot be what it says: xdr_string()
 * takes it and the name ends at the NUL ("a\0b" is decoded as "a", a
 * name other than the one sent).  These refuse it as malformed, as the
 * in-place decoders of LOCK, TEST, UNLOCK and CANCEL do (nlm/nlm_xdr.c):
 * every procedure of every version, and the status monitor, read a name
 * the same way.  Encoding and freeing are xdr_string()'s.
 */
#include <rpc/rpc.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/nlm_prot.h"
#include "rpc/sm_inter.h"

/* A name of at most max bytes, none of them NUL, into *sp. */
static bool_t
onc_xdr_name(XDR *x, char **sp, u_int max)
{
	char *s = *sp;
	u_int len;

	if (x->x_op != XDR_DECODE)
		return xdr_string(x, sp, max);
	if (!xdr_u_int(x, &len) || len > max)
		return FALSE;
	/* Into the caller's buffer if it gave one, as xdr_string() does. */
	if (s == NULL && (s = malloc((size_t)len + 1)) == NULL)
		return FALSE;
	if (!xdr_opaque(x, s, len) || memchr(s, '\0', len) != NULL) {
		if (*sp == NULL)
			free(s);
		return FALSE;
	}
	s[len] = '\0';
	*sp = s;
	return TRUE;
}

bool_t
xdr_nlm_name(XDR *x, nlm_name *sp)
{
	return onc_xdr_name(x, sp, LM_MAXSTRLEN);
}

bool_t
xdr_sm_hostname(XDR *x, sm_hostname *sp)
{
	return onc_xdr_name(x, sp, SM_MAXSTRLEN);
}
