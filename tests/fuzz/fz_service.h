/*
 * fz_service.h - what the whole-service harnesses (fuzz_dispatch.c,
 * fuzz_ctl.c) share: the NLM and NSM service over tests/fakes/store_fake.c
 * on a fake clock, a loop turn that checks the lock table after it, and
 * calls from peers put through the server's dispatch.  The harness defines
 * the sending functions of rpc/rpcsend.h itself (what it checks of what
 * would leave differs).
 */
#ifndef NLMD_TESTS_FUZZ_FZ_SERVICE_H
#define NLMD_TESTS_FUZZ_FZ_SERVICE_H

#include <sys/socket.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nlm.h"
#include "srv_impl.h"

/* An invariant of the harness: a report and abort() (libFuzzer's crash). */
#define FZ_CHECK(c)	do {						\
	if (!(c)) {							\
		fprintf(stderr, "fuzz: %s:%d: %s\n", __FILE__,		\
		    __LINE__, #c);					\
		abort();						\
	}								\
} while (0)

/* A peer calling the server: its address and source port. */
struct fz_peer {
	int		 fam;
	const char	*addr;
	uint16_t	 port;
	uint32_t	 scope;	/* an IPv6 link-local address's interface */
};

/* The service under test, between fz_svc_start() and fz_svc_stop(). */
struct fz_svc {
	struct ev_loop	*loop;
	struct onc_srv	*srv;
	struct onc_out	*clnt;
	uint64_t	 clock;	/* the loop's clock (ms); the harness moves it */
	char		 dir[64];	/* nsm_init()'s (never made) */
	bool		 up;
};

extern struct fz_svc fzs;

/*
 * Once, from LLVMFuzzerInitialize(): as root, a network namespace of the
 * process's own for the outgoing client's sockets; the loop's clock is
 * fzs.clock.
 */
void	fz_svc_init(void);
/*
 * The configuration both harnesses start from: small limits, so that
 * inputs reach them.  The caller sets what it varies (nc_max_hosts,
 * nc_cbmode, nc_cb_give_up_sec, nc_reclaim_check).
 */
void	fz_svc_config(struct nlm_config *);
/*
 * Start the service with nc (its epoch and NSM state are nsm_init()'s):
 * what the fake store holds comes back reclaimable, as after a restart.
 * Its first turn (the load, the start of grace) is over on return.
 */
void	fz_svc_start(const struct nlm_config *nc);
/* Drain and stop it; nothing once stopped. */
void	fz_svc_stop(void);
/* One turn of the loop after the clock moved: events, timers, its end. */
void	fz_turn(uint64_t advance_ms);
/* lk_table_check() holds. */
void	fz_check_table(void);
/* rc's peer address is p's, its local address loopback of p's family. */
void	fz_peer_addr(const struct fz_peer *p, struct onc_call *rc);
/*
 * A datagram from p through the server's dispatch, in a buffer of its own
 * freed right after: anything the service kept pointing into it is a use
 * after free.
 */
void	fz_dispatch(const uint8_t *msg, size_t len, const struct fz_peer *p);

#endif
