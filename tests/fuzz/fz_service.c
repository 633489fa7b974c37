/*
 * fz_service.c - see fz_service.h.
 */
#include <arpa/inet.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "lockcore.h"
#include "nlm.h"
#include "nsm.h"
#include "rpcout.h"
#include "srv_impl.h"
#include "tests/fakes/fakes.h"
#include "tests/fuzz/fz_service.h"

struct fz_svc fzs;

static uint64_t
fz_now(void)
{
	return fzs.clock;
}

static void
fz_hook(struct ev_loop *l, void *arg)
{
	(void)l;
	nlm_turn_end(arg);
}

void
fz_svc_init(void)
{
	if (getuid() == 0)
		(void)unshare(CLONE_NEWNET);
	snprintf(fzs.dir, sizeof(fzs.dir), "/tmp/nlmd-fuzz.XXXXXX");
	FZ_CHECK(mkdtemp(fzs.dir) != NULL);
	/* nsm_init() only looks for a legacy state file there. */
	FZ_CHECK(rmdir(fzs.dir) == 0);
	ev_set_clock(fz_now);
}

void
fz_svc_config(struct nlm_config *nc)
{
	memset(nc, 0, sizeof(*nc));
	nc->nc_max_name = 255;
	nc->nc_max_fh = 1024;
	nc->nc_max_oh = 1024;
	nc->nc_max_hosts = 16;
	nc->nc_cbmode = NLM_CB_MSG;
	nc->nc_cb_retry_min_ms = 1000;
	nc->nc_cb_retry_max_ms = 8000;
	nc->nc_cb_max_per_host = 4;
	nc->nc_max_locks = 256;
	nc->nc_max_locks_per_host = 64;
	nc->nc_max_waiters_per_host = 16;
	nc->nc_grace_sec = 90;
	nc->nc_reclaim_check = LK_RECLAIM_CONFLICT;
	nc->nc_notify_give_up_sec = 600;
	nc->nc_host_idle_sec = 600;
}

void
fz_check_table(void)
{
	FZ_CHECK(lk_table_check(nlm_get_table()) == LK_OK);
}

void
fz_svc_start(const struct nlm_config *base)
{
	struct onc_srv_limits lim;
	struct nlm_config nc = *base;
	uint64_t epoch;
	char err[256];

	fzs.loop = ev_loop_new();
	memset(&lim, 0, sizeof(lim));
	lim.max_record = 65536;
	lim.max_conns = 16;
	lim.idle_sec = 600;
	fzs.srv = onc_srv_new(fzs.loop, &lim);
	fzs.clnt = onc_out_new(fzs.loop, 0, err, sizeof(err));
	FZ_CHECK(fzs.loop != NULL && fzs.srv != NULL && fzs.clnt != NULL);
	FZ_CHECK(nsm_init(fzs.dir, fake_store(), &epoch, err,
	    sizeof(err)) == 0);
	nc.nc_epoch = epoch;
	nc.nc_nsm_state = nsm_state();
	if (nlm_init(fzs.loop, fzs.clnt, fake_store(), &nc, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "fuzz: nlm_init: %s\n", err);
		abort();
	}
	FZ_CHECK(nlm_register(fzs.srv) == ONC_OK &&
	    nsm_register(fzs.srv) == ONC_OK);
	ev_set_beforesleep(fzs.loop, fz_hook, fzs.srv);
	/* The load and grace start of nlm_init() are a turn of their own. */
	nlm_turn_end(fzs.srv);
	fz_check_table();
	fzs.up = true;
}

void
fz_svc_stop(void)
{
	if (!fzs.up)
		return;
	nlm_drain();
	nlm_shutdown();
	onc_srv_free(fzs.srv);
	onc_out_free(fzs.clnt);
	ev_loop_free(fzs.loop);
	fzs.up = false;
}

void
fz_turn(uint64_t advance_ms)
{
	fzs.clock += advance_ms;
	(void)ev_run_once(fzs.loop, 0);
	fz_check_table();
}

void
fz_peer_addr(const struct fz_peer *p, struct onc_call *rc)
{
	memset(&rc->rc_peer, 0, sizeof(rc->rc_peer));
	memset(&rc->rc_local, 0, sizeof(rc->rc_local));
	if (p->fam == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&rc->rc_peer;
		struct sockaddr_in *l = (struct sockaddr_in *)&rc->rc_local;

		s->sin_family = l->sin_family = AF_INET;
		s->sin_port = htons(p->port);
		FZ_CHECK(inet_pton(AF_INET, p->addr, &s->sin_addr) == 1);
		l->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		rc->rc_peerlen = rc->rc_locallen = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&rc->rc_peer;
		struct sockaddr_in6 *l = (struct sockaddr_in6 *)&rc->rc_local;

		s->sin6_family = l->sin6_family = AF_INET6;
		s->sin6_port = htons(p->port);
		s->sin6_scope_id = p->scope;
		FZ_CHECK(inet_pton(AF_INET6, p->addr, &s->sin6_addr) == 1);
		l->sin6_addr = in6addr_loopback;
		rc->rc_peerlen = rc->rc_locallen = sizeof(*s);
	}
}

void
fz_dispatch(const uint8_t *msg, size_t len, const struct fz_peer *p)
{
	struct onc_ctx cx;
	uint8_t *buf;

	FZ_CHECK((buf = malloc(len ? len : 1)) != NULL);
	memcpy(buf, msg, len);
	memset(&cx, 0, sizeof(cx));
	cx.cx_call.rc_xport = ONC_UDP;
	fz_peer_addr(p, &cx.cx_call);
	cx.cx_call.rc_srv = fzs.srv;
	cx.cx_fd = -1;
	onc_dispatch(&cx, buf, len);
	free(buf);
}
