/*
 * nlm_impl.h - what the files of nlm/ share.
 *
 * Layers (FreeBSD's shape):
 *   nlm_svc.c    the handlers rpcgen's dispatchers call, one per version
 *                and procedure: convert v1/v3 arguments to v4, build a
 *                struct nlm_ctx from the transport, call nlm_proc.c,
 *                convert the result back.  No decisions.
 *   nlm_proc.c   the semantics of each procedure over lockcore, on v4
 *                types and a protocol-neutral context: testable without
 *                sockets.
 *   nlm_host.c   hosts: (source address, caller_name) -> lockcore host id,
 *                the client's NSM state, its NLM port (rpcbind cache).
 *   nlm_out.c    outbound calls to a client's NLM: rpcbind look-up on the
 *                client's address, then the call, all non-blocking.
 *   nlm_grant.c  GRANTED callbacks: one record per blocked request, sent
 *                with backoff until acknowledged, released on refusal.
 *
 * Ownership legend: a struct nlm_grant is created for every blocking LOCK
 * and given to lockcore as the waiter's udata; lockcore hands it back in
 * rs_granted (start calling back) and, exactly once, in rs_dropped (free
 * it).  Everything else belongs to the service singleton `nlm'.
 */
#ifndef NLMD_NLM_NLM_IMPL_H
#define NLMD_NLM_NLM_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ev.h"
#include "lockcore.h"
#include "nlm.h"
#include "rpc/nlm_prot.h"
#include "rpcout.h"

struct rpc_clnt;
struct nlm_host;

/* Who is asking, and how: filled by the adapters (or by tests). */
struct nlm_ctx {
	uint32_t		 cx_vers;	/* 1, 3 or 4 */
	uint32_t		 cx_proc;
	struct sockaddr_storage	 cx_peer;	/* source, v4-mapped undone */
	socklen_t		 cx_peerlen;
	struct sockaddr_storage	 cx_local;	/* address the client used */
	socklen_t		 cx_locallen;
	bool			 cx_monitored;	/* LOCK, not NM_LOCK */
	/* The range exactly as on the wire, for GRANTED to echo. */
	uint64_t		 cx_wire_off;
	uint64_t		 cx_wire_len;
};

struct nlm_host {
	uint64_t		 h_id;		/* lockcore host id */
	char			*h_name;	/* caller_name */
	struct sockaddr_storage	 h_addr;	/* port 0 */
	socklen_t		 h_addrlen;
	int32_t			 h_state;	/* client's NSM state, 0 unknown */
	bool			 h_monitored;
	uint64_t		 h_seen;	/* last request, ev_now_ms() */
	unsigned		 h_grants;	/* callbacks in flight */
	struct nlm_host		*h_next;	/* hash chain */
};

/* A blocked request and, once granted, its callback.  See legend. */
struct nlm_grant {
	struct nlm_host		*g_host;
	uint32_t		 g_vers;	/* version the client used */
	struct sockaddr_storage	 g_local;	/* call back from here */
	socklen_t		 g_locallen;
	int32_t			 g_svid;
	bool			 g_excl;
	uint64_t		 g_start;	/* as lockcore knows it */
	uint64_t		 g_len;
	uint64_t		 g_wire_off;	/* as the client sent it */
	uint64_t		 g_wire_len;
	uint8_t			*g_fh;
	size_t			 g_fhlen;
	uint8_t			*g_oh;
	size_t			 g_ohlen;
	char			*g_caller;	/* our name for the callback */
	uint8_t			 g_cookie[8];
	bool			 g_active;	/* granted: calling back */
	unsigned		 g_attempts;
	uint32_t		 g_proc;	/* procedure of the last send */
	unsigned		 g_delay_ms;	/* next backoff */
	uint64_t		 g_granted_at;
	struct ev_timer		 g_timer;
	struct nlm_send		*g_send;	/* transmission in flight */
	struct nlm_grant	*g_next;	/* cookie hash chain */
};

typedef void	nlm_send_cb(void *arg, int ok, XDR *res);

struct nlm_peer;

/* One outbound call to a client's NLM (see nlm_out.c). */
struct nlm_send {
	struct sockaddr_storage	 s_peer;	/* the client (port ignored) */
	socklen_t		 s_peerlen;
	struct nlm_peer		*s_waiton;	/* port look-up it waits for */
	uint32_t		 s_vers;
	uint32_t		 s_proc;
	struct sockaddr_storage	 s_local;
	socklen_t		 s_locallen;
	unsigned		 s_timeout_ms;
	unsigned		 s_tries;
	nlm_send_cb		*s_cb;
	void			*s_arg;
	uint32_t		 s_xid;		/* 0: not on the wire yet */
	struct nlm_send		*s_next;	/* waiting list */
	size_t			 s_len;
	uint8_t			 s_args[];	/* encoded arguments */
};

#define NLM_HOST_BUCKETS	1024
#define NLM_GRANT_BUCKETS	1024

struct nlm_service {
	struct ev_loop		*n_loop;
	struct rpc_clnt		*n_clnt;
	struct nlm_config	 n_conf;
	struct lk_table		*n_table;
	struct nlm_host		*n_hosts[NLM_HOST_BUCKETS];
	unsigned		 n_nhosts;
	uint64_t		 n_next_host;
	struct nlm_grant	*n_grants[NLM_GRANT_BUCKETS]; /* by cookie */
	uint64_t		 n_cookie;
	char			 n_myname[256];	/* caller_name in GRANTED */
	struct ev_timer		 n_gc;
	struct nlm_counters	 n_stats;
};

extern struct nlm_service *nlm;

/* ---- nlm_proc.c: the procedures, on v4 types ---- */
void	nlm_proc_test(const struct nlm_ctx *, const nlm4_testargs *,
	    nlm4_testres *);
void	nlm_proc_lock(const struct nlm_ctx *, const nlm4_lockargs *,
	    nlm4_res *);
void	nlm_proc_cancel(const struct nlm_ctx *, const nlm4_cancargs *,
	    nlm4_res *);
void	nlm_proc_unlock(const struct nlm_ctx *, const nlm4_unlockargs *,
	    nlm4_res *);
void	nlm_proc_granted(const struct nlm_ctx *, const nlm4_testargs *,
	    nlm4_res *);
void	nlm_proc_share(const struct nlm_ctx *, const nlm4_shareargs *,
	    nlm4_shareres *);
void	nlm_proc_unshare(const struct nlm_ctx *, const nlm4_shareargs *,
	    nlm4_shareres *);
void	nlm_proc_free_all(const struct nlm_ctx *, const nlm4_notify *);
void	nlm_proc_granted_res(const struct nlm_ctx *, const nlm4_res *);
void	nlm_proc_sm_notify(const struct nlm_ctx *, const nlm_sm_status *);
/* Apply a lockcore result's grants and drops (every mutating call). */
void	nlm_apply(const struct lk_result *);
/* The one lockcore -> wire mapping. */
nlm4_stats nlm_stat_from_lk(enum lk_status);
/* Send a _RES message of `proc' carrying `res' (encoded by `xres'). */
void	nlm_send_res(const struct nlm_ctx *, uint32_t proc, xdrproc_t xres,
	    const void *res);

/* ---- nlm_xdr.c: in-place decoders (same wire format as rpcgen's) ---- */
bool_t	nlm_xdr_lockargs(XDR *, nlm4_lockargs *);
bool_t	nlm_xdr_unlockargs(XDR *, nlm4_unlockargs *);
bool_t	nlm_xdr_testargs(XDR *, nlm4_testargs *);
bool_t	nlm_xdr_cancargs(XDR *, nlm4_cancargs *);

/* ---- nlm_host.c ---- */
struct nlm_host	*nlm_host_get(const struct sockaddr_storage *,
		    socklen_t, const char *name, bool create);
/* Release everything the host holds in the lock table. */
void		 nlm_host_release(struct nlm_host *, const char *why);
/* Call fn for every host; fn may release (not free) the host. */
void		 nlm_host_foreach(void (*fn)(struct nlm_host *, void *),
		    void *arg);
/* "name@address" for logs. */
const char	*nlm_host_str(const struct nlm_host *, char *, size_t);
void		 nlm_host_gc_start(void);
void		 nlm_host_free_all(void);
/* Same address (ignoring port)? */
bool		 nlm_addr_equal(const struct sockaddr_storage *,
		    const struct sockaddr_storage *);

/* ---- nlm_out.c ---- */
struct nlm_send	*nlm_send_new(const struct sockaddr_storage *peer,
		    socklen_t peerlen, uint32_t vers, uint32_t proc,
		    xdrproc_t xargs, const void *args,
		    const struct sockaddr_storage *local, socklen_t locallen);
/* Start it: look up the port if needed, call; cb runs exactly once. */
void		 nlm_send_start(struct nlm_send *, unsigned timeout_ms,
		    unsigned tries, nlm_send_cb *cb, void *arg);
/* Abandon a started send: its callback will not run; frees it. */
void		 nlm_send_cancel(struct nlm_send *);
/* Forget the cached NLM port of a client (after failures). */
void		 nlm_port_forget(const struct sockaddr_storage *, uint32_t vers);
/* Free port cache entries that expired and wait for nothing. */
void		 nlm_out_gc(void);
/* Free the port cache and abandon waiting sends (shutdown). */
void		 nlm_out_shutdown(void);

/* ---- nlm_grant.c ---- */
struct nlm_grant *nlm_grant_new(const struct nlm_ctx *, struct nlm_host *,
		    const nlm4_lockargs *);
void		 nlm_grant_free(struct nlm_grant *);
void		 nlm_grant_start(struct nlm_grant *);
/* The client answered a GRANTED callback with `st'. */
void		 nlm_grant_answer(struct nlm_grant *, nlm4_stats st);
struct nlm_grant *nlm_grant_by_cookie(const nlm_netobj *);
/* Fill a lockcore request describing the grant's lock. */
void		 nlm_grant_lockreq(const struct nlm_grant *,
		    struct lk_lockreq *);

#endif
