/*
 * nlmt.h - what the files of the NLM integration test share.
 *
 * The test plays the client side of NLM against a running nlmd:
 *   nlmt_wire.c  the check harness, client handles bound to a chosen
 *                source address (rpcgen client stubs from rpc/nlm_prot.x),
 *                one helper per procedure, and the callback receiver: an
 *                RPC server for NLM v1/v3/v4 (UDP and TCP) registered with
 *                the client host's rpcbind, recording every GRANTED,
 *                GRANTED_MSG and _RES nlmd sends.
 *   nlmtest.c    the tests, in groups matched to nlmd's callback mode.
 *
 * The client host is a network namespace of its own with two addresses
 * (two client hosts as far as nlmd can tell) and its own rpcbind, so that
 * nlmd's look-up of the client's NLM on the request's source address finds
 * this receiver (see tests/integration/test_nlm.sh).
 */
#ifndef NLMD_TESTS_NLM_NLMT_H
#define NLMD_TESTS_NLM_NLMT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "rpc/nlm_prot.h"

/* A cast between XDR routine types that -Wcast-function-type accepts. */
#define XDRPROC(fn)	((xdrproc_t)(void (*)(void))(fn))

/* ---- harness ---- */
void	 t_check(bool ok, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* A check comparing integers; prints both on failure. */
void	 t_eq(long long got, long long want, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
void	 t_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int	 t_summary(const char *name);
uint64_t t_now_ms(void);
void	 t_sleep_ms(unsigned ms);

/* ---- clients ---- */
struct t_cfg {
	const char	*srv;		/* server address used by default */
	const char	*srv2;		/* a second address of the server */
	const char	*cli[2];	/* the two client addresses */
	const char	*srv6;		/* IPv6 address of the server, or NULL */
	const char	*cli6;		/* IPv6 address of client host A */
	const char	*srvll;		/* the server's link-local address,
					   with its interface (fe80::1%if) */
	const char	*clill;		/* client host A's, likewise */
	uint16_t	 port;		/* nlmd's NLM port */
};
extern struct t_cfg tcfg;

/* A client handle: NLM version vers, from src to dst (IPv4 or IPv6
 * literals), UDP or TCP. */
CLIENT	*t_clnt(const char *src, const char *dst, rpcvers_t vers, bool tcp);
void	 t_clnt_free(CLIENT *);
int	 t_clnt_fd(CLIENT *);

/* A lock as the client describes it (strings for fh and oh). */
struct t_lk {
	const char	*name;		/* caller_name */
	const char	*fh;
	const char	*oh;
	int32_t		 svid;
	uint64_t	 off;
	uint64_t	 len;
};

/* A TEST holder, copied out of the reply. */
struct t_holder {
	bool		 excl;
	int32_t		 svid;
	char		 oh[1025];
	unsigned	 ohlen;
	uint64_t	 off;
	uint64_t	 len;
};

/*
 * Every helper returns the reply's status (nlm4_stats or nlm_stats), or -1
 * when the RPC itself failed (reported as a FAIL line).  Every reply's
 * cookie is compared with the one sent; mismatches are counted and show up
 * in t_cookie_summary().
 */
int	 l4_test(CLIENT *, const struct t_lk *, bool excl, struct t_holder *);
int	 l4_lock(CLIENT *, const struct t_lk *, bool excl, bool block,
	    int state);
/* LOCK with reclaim = TRUE (non-blocking). */
int	 l4_lock_reclaim(CLIENT *, const struct t_lk *, bool excl);
int	 l4_nm_lock(CLIENT *, const struct t_lk *, bool excl, bool block);
int	 l4_cancel(CLIENT *, const struct t_lk *, bool excl, bool block);
int	 l4_unlock(CLIENT *, const struct t_lk *);
int	 l4_granted(CLIENT *, const struct t_lk *, bool excl);
int	 l4_share(CLIENT *, const struct t_lk *, int mode, int access);
int	 l4_unshare(CLIENT *, const struct t_lk *, int mode, int access);
/* SHARE with reclaim = TRUE. */
int	 l4_share_reclaim(CLIENT *, const struct t_lk *, int mode, int access);
enum clnt_stat l4_free_all(CLIENT *, const char *name, int state);
enum clnt_stat l4_granted_res(CLIENT *, const void *cookie, unsigned len,
	    int stat);
/* The _MSG forms: returns the RPC status of the call (void reply). */
enum clnt_stat l4_msg(CLIENT *, int proc, const struct t_lk *, bool excl,
	    bool block, const void *cookie, unsigned cookielen);
/* A LOCK with a given cookie; *echo gets the reply's cookie. */
int	 l4_lock_cookie(CLIENT *, const struct t_lk *, const void *cookie,
	    unsigned len, void *echo, unsigned *echolen);

/* Versions 1 and 3 (32-bit ranges). */
int	 l1_test(CLIENT *, const struct t_lk *, bool excl, struct t_holder *);
int	 l1_lock(CLIENT *, const struct t_lk *, bool excl, bool block,
	    int state);
int	 l1_nm_lock(CLIENT *, const struct t_lk *, bool excl, bool block);
int	 l1_cancel(CLIENT *, const struct t_lk *, bool excl, bool block);
int	 l1_unlock(CLIENT *, const struct t_lk *);
int	 l1_granted(CLIENT *, const struct t_lk *, bool excl);
int	 l1_share(CLIENT *, const struct t_lk *, int mode, int access);
int	 l1_unshare(CLIENT *, const struct t_lk *, int mode, int access);
enum clnt_stat l1_free_all(CLIENT *, const char *name, int state);
enum clnt_stat l1_granted_res(CLIENT *, const void *cookie, unsigned len,
	    int stat);
enum clnt_stat l1_msg(CLIENT *, int proc, const struct t_lk *, bool excl,
	    bool block);

/* NULL procedure; any procedure with raw, pre-encoded arguments. */
enum clnt_stat t_null(CLIENT *);
enum clnt_stat t_raw(CLIENT *, rpcproc_t proc, const void *args, size_t len);
/* Encode LOCK (v4) arguments with chosen field lengths, unchecked. */
size_t	 t_enc_lock4(uint8_t *buf, size_t cap, unsigned cookielen,
	    unsigned namelen, unsigned fhlen, unsigned ohlen);
void	 t_cookie_summary(void);

/* ---- the callback receiver ---- */
struct t_cb {
	int		 vers;
	int		 proc;
	bool		 tcp;
	char		 from[64];	/* source address, no port */
	uint64_t	 t_ms;
	uint8_t		 cookie[1024];
	unsigned	 cookielen;
	/* GRANTED / GRANTED_MSG arguments */
	bool		 excl;
	char		 caller[1025];
	uint8_t		 fh[1024];
	unsigned	 fhlen;
	uint8_t		 oh[1024];
	unsigned	 ohlen;
	int32_t		 svid;
	uint64_t	 off;
	uint64_t	 len;
	/* _RES arguments */
	int		 stat;
	struct t_holder	 holder;	/* TEST_RES denied */
	bool		 used;
};

/* Start the receiver thread and register NLM v1/v3/v4 with rpcbind. */
int	 cb_start(void);
void	 cb_stop(void);
uint16_t cb_udp_port(void);
uint16_t cb_udp6_port(void);
/* Register (on) or unregister the receiver's IPv4 NLM with rpcbind. */
bool	 cb_register(bool on);
/* Wait up to ms for an unused record of (vers, proc); vers 0 = any. */
struct t_cb *cb_wait(int vers, int proc, unsigned ms);
/* Unused records of (vers, proc) so far (vers 0 = any, proc -1 = any). */
int	 cb_count(int vers, int proc);
/* Mark everything received so far as used. */
void	 cb_flush(void);
/* What the receiver answers a synchronous GRANTED with. */
void	 cb_set_sync_reply(int stat);

/* ---- nlmt_grace.c: the groups run around restarts of nlmd ---- */
/* Each returns true when the host's state must be left as it is (no
 * clean-up at the end of the run). */
bool	 group_grace_hold(CLIENT *a4, CLIENT *b4);
bool	 group_grace_conflict(CLIENT *a4, CLIENT *b4, unsigned grace_sec);
bool	 group_grace_strict(CLIENT *a4, CLIENT *b4);
bool	 group_grace_none(CLIENT *a4, CLIENT *b4);

#endif
