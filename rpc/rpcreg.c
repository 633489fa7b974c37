/*
 * rpcreg.c - see rpcreg.h.
 */
#include "rpcreg.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <rpc/rpc.h>

static enum onc_status
onc_rpcb_one(const char *netid, uint32_t prog, uint32_t vers, unsigned port,
    char *err, size_t errlen)
{
	struct netconfig *nc;
	struct sockaddr_storage ss;
	struct netbuf nb;
	int ok;

	if ((nc = getnetconfigent(netid)) == NULL) {
		snprintf(err, errlen, "no netconfig entry for %s", netid);
		return ONC_RPCBIND;
	}
	memset(&ss, 0, sizeof(ss));
	if (strchr(netid, '6') != NULL) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		nb.len = nb.maxlen = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		nb.len = nb.maxlen = sizeof(*s4);
	}
	nb.buf = &ss;
	ok = rpcb_set(prog, vers, nc, &nb);
	freenetconfigent(nc);
	if (!ok) {
		snprintf(err, errlen, "rpcbind refused or did not answer "
		    "registering %u v%u on %s (is rpcbind running? does "
		    "another user or lock manager hold it? see rpcinfo -p; "
		    "--rpcbind=no runs without it)", prog, vers, netid);
		return ONC_RPCBIND;
	}
	return ONC_OK;
}

enum onc_status
onc_rpcb_set(uint32_t prog, uint32_t vers, unsigned port, int v4, int v6,
    char *err, size_t errlen)
{
	static const char *const ids4[] = { "udp", "tcp" };
	static const char *const ids6[] = { "udp6", "tcp6" };
	enum onc_status s;
	size_t i;

	onc_rpcb_unset(prog, vers);
	for (i = 0; i < 2; i++) {
		if (v4 && (s = onc_rpcb_one(ids4[i], prog, vers, port, err,
		    errlen)) != ONC_OK)
			return s;
		if (v6 && (s = onc_rpcb_one(ids6[i], prog, vers, port, err,
		    errlen)) != ONC_OK)
			return s;
	}
	return ONC_OK;
}

void
onc_rpcb_unset(uint32_t prog, uint32_t vers)
{
	(void)rpcb_unset(prog, vers, NULL);
}
