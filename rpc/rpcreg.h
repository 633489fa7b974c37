/*
 * rpcreg.h - registering our programs with the local rpcbind.
 *
 * These calls talk to rpcbind on this host (its AF_LOCAL socket, falling
 * back to loopback) with libtirpc's blocking client: they are made only at
 * start and at exit, never from a request path.
 */
#ifndef NLMD_RPC_RPCREG_H
#define NLMD_RPC_RPCREG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onc.h"

/*
 * Register prog/vers at `port' for udp and tcp (`v4') and udp6 and tcp6
 * (`v6').  Any earlier registration of prog/vers is removed first.
 * Returns ONC_OK, or ONC_RPCBIND with the details in err[errlen].
 */
enum onc_status onc_rpcb_set(uint32_t prog, uint32_t vers, unsigned port,
	    int v4, int v6, char *err, size_t errlen);

/*
 * Is prog/vers registered with the local rpcbind (its IPv4 UDP and TCP
 * registrations) by a server other than us that answers a NULL call -- the
 * kernel's lockd, rpc.statd, another nlmd?  Registrations at port `ours'
 * (0: none is ours) and those nobody answers (a server gone without
 * unregistering, an nlmd killed with -9) do not count; nor does anything
 * when rpcbind does not answer.  true with "PROTO port N" in who[wholen].
 * Blocks for up to a few seconds.
 */
bool	onc_rpcb_live(uint32_t prog, uint32_t vers, unsigned ours, char *who,
	    size_t wholen);

/* Remove every registration of prog/vers.  Quietly ignores failure. */
void	onc_rpcb_unset(uint32_t prog, uint32_t vers);

#endif
