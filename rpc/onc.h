/*
 * onc.h - what every part of rpc/ (the ONC RPC transport) shares: its
 * status codes.
 *
 * Functions of rpc/ that can fail return an enum onc_status (0 = ONC_OK),
 * never -1 with the reason left in errno; where the cause needs more than
 * a code (which address, which system call, what errno said), they also
 * fill a message buffer the caller passes.  onc_strerror() names a code.
 */
#ifndef NLMD_RPC_ONC_H
#define NLMD_RPC_ONC_H

#include <stdbool.h>

enum onc_status {
	ONC_OK = 0,
	ONC_FULL,	/* a fixed table is full (programs, decoders,
			   listeners): a programming error */
	ONC_NOMEM,	/* out of memory */
	ONC_BADADDR,	/* not a numeric address of a family we serve */
	ONC_SOCKET,	/* socket(), bind() or listen() failed */
	ONC_ENCODE,	/* the call's arguments cannot be encoded */
	ONC_SEND,	/* the kernel refused to send (no socket, an error
			   other than a full buffer) */
	ONC_RPCBIND	/* rpcbind refused a registration or did not answer */
};

/* A short English description of `s' (static storage). */
const char	*onc_strerror(enum onc_status s);

/*
 * Does a failed IPv6 socket, bind or listen (errno `e') mean that the
 * host has no IPv6 (the kernel without it, or no address for it)?
 * Anything else -- above all EADDRINUSE: another process holds the port
 * on [::] -- is an error: going on without IPv6 would leave IPv6 clients
 * without lock service (or callbacks), with one warning as the only sign.
 */
bool		 onc_no_ipv6(int e);

#endif
