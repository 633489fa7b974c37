/*
 * rpcreg.c - see rpcreg.h.
 */
#include "rpcreg.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>

#include "rpcout.h"	/* XDRPROC */

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

/* A client of 127.0.0.1:port over UDP or TCP; NULL if none can be made. */
static CLIENT *
onc_rpcb_client(unsigned port, int proto, uint32_t prog, uint32_t vers)
{
	struct timeval wait = { 0, 250000 };
	struct sockaddr_in sin;
	int sock = RPC_ANYSOCK;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)port);
	if (proto == IPPROTO_UDP)
		return clntudp_create(&sin, prog, vers, wait, &sock);
	return clnttcp_create(&sin, prog, vers, &sock, 0, 0);
}

bool
onc_rpcb_live(uint32_t prog, uint32_t vers, unsigned ours, char *who,
    size_t wholen)
{
	static const int protos[] = { IPPROTO_UDP, IPPROTO_TCP };
	struct timeval tv = { 1, 0 };
	struct pmap pm;
	u_long port;
	CLIENT *c;
	size_t i;
	bool live;

	for (i = 0; i < 2; i++) {
		/* rpcbind's portmapper view: the IPv4 registrations. */
		if ((c = onc_rpcb_client(PMAPPORT, IPPROTO_UDP, PMAPPROG,
		    PMAPVERS)) == NULL)
			return false;
		memset(&pm, 0, sizeof(pm));
		pm.pm_prog = prog;
		pm.pm_vers = vers;
		pm.pm_prot = (u_long)protos[i];
		port = 0;
		if (clnt_call(c, PMAPPROC_GETPORT, XDRPROC(xdr_pmap),
		    (char *)&pm, XDRPROC(xdr_u_long), (char *)&port, tv) !=
		    RPC_SUCCESS)
			port = 0;
		clnt_destroy(c);
		if (port == 0 || port > 65535 || (ours != 0 && port == ours))
			continue;
		if ((c = onc_rpcb_client((unsigned)port, protos[i], prog,
		    vers)) == NULL)
			continue;		/* nobody listens there */
		live = clnt_call(c, NULLPROC, XDRPROC(xdr_void), NULL,
		    XDRPROC(xdr_void), NULL, tv) == RPC_SUCCESS;
		clnt_destroy(c);
		if (live) {
			snprintf(who, wholen, "%s port %lu", protos[i] ==
			    IPPROTO_UDP ? "udp" : "tcp", port);
			return true;
		}
	}
	return false;
}
