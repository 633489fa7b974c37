/*
 * srv_tcp.c - TCP connections: accept (with caps per address and in
 * all), non-blocking reads into growing buffers, RFC 5531 record marking,
 * output written as the socket takes it, the idle sweep.
 */
#include "srv_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <search.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "netaddr.h"

/* Limits for messages a peer can trigger (log.h). */
static struct log_rl rl_record_size;
static struct log_rl rl_accept;
static struct log_rl rl_accept_pause;
static struct log_rl rl_unwatched;
static struct log_rl rl_idle_unread;

static void	onc_addr_put(struct onc_srv *, struct onc_addrcount *);
static void	onc_conn_unhold(struct onc_conn *);

/*
 * Make close(fd) send a reset and free the socket at once.  For peers
 * that broke the protocol or are refused: a plain close would leave the
 * socket to the kernel, in FIN_WAIT with unsent replies of a peer that
 * does not read, then TIME_WAIT for a minute -- per connection, memory
 * a peer could make this host hold by opening and abusing connections.
 */
static void
onc_fd_reset(int fd)
{
	struct linger l = { 1, 0 };

	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
}

/* Free co's memory: its socket, counts and lists are the caller's. */
static void
onc_conn_free(struct onc_conn *co)
{
	free(co->co_in);
	free(co->co_rec);
	free(co->co_out);
	free(co->co_marks);
	free(co);
}

void
onc_conn_close(struct onc_conn *co)
{
	struct onc_srv *rs = co->co_srv;

	if (co->co_isdirty) {
		/* Still on the dirty list: onc_srv_seal() closes it. */
		co->co_dead = 1;
		return;
	}
	onc_conn_wait(co, 0);
	onc_conn_unhold(co);
	rs->rs_stats.held -= co->co_outlen - co->co_safe;
	onc_addr_put(rs, co->co_addr);
	ev_fd_del(rs->rs_loop, co->co_fd);
	if (co->co_abort)
		onc_fd_reset(co->co_fd);
	close(co->co_fd);
	if (co->co_prev != NULL)
		co->co_prev->co_next = co->co_next;
	else
		rs->rs_conns = co->co_next;
	if (co->co_next != NULL)
		co->co_next->co_prev = co->co_prev;
	rs->rs_stats.conns_open--;
	onc_conn_free(co);
}

static void	onc_conn_io(struct ev_loop *, int, int, void *);

/*
 * Watch for input only while no output is pending (back-pressure), and
 * the server reads requests (rs_paused: too many replies wait for their
 * commits).  After the end of the peer's stream (co_eof), never for
 * input: it would stay readable and wake every turn.  Then for output
 * while released replies are pending, not at all while the rest waits
 * for its commit (onc_srv_release() flushes it), and close once nothing
 * more is owed: all written, no reply waiting for its commit or its
 * turn's seal.  A peer that stops reading meanwhile leaves at the idle
 * sweep, as any.
 */
static void
onc_conn_watch(struct onc_conn *co)
{
	struct ev_loop *loop = co->co_srv->rs_loop;
	int ev = co->co_outoff < co->co_safe ? EV_WRITE : EV_READ;

	if (!co->co_eof) {
		if (ev == EV_READ && co->co_srv->rs_paused)
			ev = 0;
		if (ev_fd_set(loop, co->co_fd, ev) == -1)
			co->co_dead = 1;
	} else if (co->co_outoff == co->co_outlen && co->co_nmarks == 0 &&
	    !co->co_isdirty && !co->co_held)
		co->co_dead = 1;
	else if (ev == EV_READ)
		ev_fd_del(loop, co->co_fd);
	else if (ev_fd_add(loop, co->co_fd, EV_WRITE, onc_conn_io, co) == -1)
		co->co_dead = 1;
}

/*
 * Stop (on false) or start again reading requests: every listener (a
 * TCP one whose accepting is paused for want of descriptors is left to
 * its timer) and every connection; the datagrams and calls already read
 * and left for a later turn wait too (onc_conn_resume()).  A connection
 * waits for nothing from its peer meanwhile: the idle sweep skips them
 * all, and they are active as of the restart.  Writing is not stopped:
 * released replies go out as the sockets take them.
 */
void
onc_srv_input(struct onc_srv *rs, bool on)
{
	struct onc_listener *rl;
	struct onc_conn *co, *next;
	uint64_t now = ev_now_ms();
	size_t i;

	if (on == !rs->rs_paused)
		return;
	if (on) {
		rs->rs_stats.input_paused_ms += now - rs->rs_paused;
		rs->rs_paused = 0;
	} else {
		rs->rs_paused = now > 0 ? now : 1;
		rs->rs_stats.input_paused++;
	}
	for (i = 0; i < rs->rs_nlis; i++) {
		rl = &rs->rs_lis[i];
		if (rl->rl_xport == ONC_TCP && ev_timer_armed(&rl->rl_pause))
			continue;
		if (ev_fd_set(rs->rs_loop, rl->rl_fd, on ? EV_READ : 0) == -1)
			log_warn("listener: cannot %s watching it",
			    on ? "start" : "stop");
	}
	for (co = rs->rs_conns; co != NULL; co = next) {
		next = co->co_next;
		if (on)
			co->co_active = now;
		if (co->co_dead)
			continue;
		onc_conn_watch(co);
		if (co->co_dead)
			onc_conn_close(co);
	}
	onc_srv_resume_later(rs);
}

void
onc_srv_resume_later(struct onc_srv *rs)
{
	if (!rs->rs_paused && (rs->rs_held != NULL ||
	    rs->rs_resuming != NULL || onc_udp_waiting(rs)) &&
	    !ev_timer_armed(&rs->rs_resume))
		ev_timer_set(rs->rs_loop, &rs->rs_resume, 0, onc_conn_resume,
		    rs);
}

void
onc_conn_flush(struct onc_conn *co)
{
	ssize_t n;

	/* Never past co_safe: later bytes report an uncommitted turn. */
	while (co->co_outoff < co->co_safe) {
		n = onc_stream_send(co->co_fd, co->co_out + co->co_outoff,
		    co->co_safe - co->co_outoff);
		if (n == -1) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			co->co_dead = 1;
			onc_conn_close(co);
			return;
		}
		co->co_outoff += (size_t)n;
	}
	onc_conn_trim(co);
	onc_conn_watch(co);
	if (co->co_dead)
		onc_conn_close(co);
}

/*
 * Grow *bufp (capacity *capp) to hold `need' bytes, doubling from 4 KiB,
 * never past `max'.  0, or -1 when `need' is over `max' or memory is out.
 */
static int
onc_grow(uint8_t **bufp, size_t *capp, size_t need, size_t max)
{
	size_t cap = *capp == 0 ? CONN_BUF_MIN : *capp;
	uint8_t *nb;

	if (need > max)
		return -1;
	while (cap < need)
		cap *= 2;
	if (cap > max)
		cap = max;
	if (cap == *capp)
		return 0;
	if ((nb = realloc(*bufp, cap)) == NULL)
		return -1;
	*bufp = nb;
	*capp = cap;
	return 0;
}

/*
 * At the idle sweep, a connection with no call partly read: its input
 * and record buffers, grown by a large record, go back to their first
 * size (one that once sent a 1 MiB record kept some 2 MiB for as long
 * as it stayed).  At most once a sweep, so a client that keeps sending
 * large records grows them again at most that often.
 */
static void
onc_conn_shrink(struct onc_conn *co)
{
	struct onc_srv *rs = co->co_srv;
	size_t incap = rs->rs_lim.max_record + 4, reccap = rs->rs_lim.max_record;
	uint8_t *p;

	if (incap > CONN_BUF_MIN)
		incap = CONN_BUF_MIN;
	if (reccap > CONN_BUF_MIN)
		reccap = CONN_BUF_MIN;
	if (co->co_incap > incap && (p = realloc(co->co_in, incap)) != NULL) {
		co->co_in = p;
		co->co_incap = incap;
	}
	if (co->co_reccap > reccap &&
	    (p = realloc(co->co_rec, reccap)) != NULL) {
		co->co_rec = p;
		co->co_reccap = reccap;
	}
}

/*
 * co has calls waiting past its ONC_TURN_CALLS: on rs_held (co_held 1)
 * until onc_conn_resume() moves the list to rs_resuming (co_held 2) and
 * serves it.
 */
static void
onc_conn_hold(struct onc_conn *co)
{
	struct onc_srv *rs = co->co_srv;

	if (co->co_held)
		return;
	co->co_held = 1;
	co->co_hprev = NULL;
	co->co_hnext = rs->rs_held;
	if (rs->rs_held != NULL)
		rs->rs_held->co_hprev = co;
	rs->rs_held = co;
}

static void
onc_conn_unhold(struct onc_conn *co)
{
	struct onc_srv *rs = co->co_srv;
	struct onc_conn **head = co->co_held == 2 ? &rs->rs_resuming :
	    &rs->rs_held;

	if (!co->co_held)
		return;
	if (co->co_hprev != NULL)
		co->co_hprev->co_hnext = co->co_hnext;
	else
		*head = co->co_hnext;
	if (co->co_hnext != NULL)
		co->co_hnext->co_hprev = co->co_hprev;
	co->co_hnext = co->co_hprev = NULL;
	co->co_held = 0;
}

/*
 * At the end of a turn: the next turn's share per connection, from the
 * connections busy in this one and of late (srv_impl.h, ONC_TURN_CALLS).
 */
void
onc_conn_share(struct onc_srv *rs)
{
	unsigned now = rs->rs_active << ONC_BUSY_SHIFT;
	unsigned busy = rs->rs_busy - (rs->rs_busy >> ONC_BUSY_SHIFT);

	rs->rs_busy = now > busy ? now : busy;
	busy = rs->rs_busy >> ONC_BUSY_SHIFT;
	rs->rs_share = busy <= 1 ? ONC_TURN_CALLS : busy >= ONC_TURN_CALLS ?
	    1 : ONC_TURN_CALLS / busy;
	rs->rs_active = 0;
}

/*
 * Move complete fragments from co_in into co_rec and dispatch complete
 * records, rs_share a turn at most (the connection is then held, the
 * rest left in co_in).  Returns -1 when the peer broke the framing or
 * the size limit (errno EMSGSIZE), or no memory was left for the record
 * (ENOMEM).
 */
static int
onc_conn_parse(struct onc_conn *co)
{
	struct onc_srv *rs = co->co_srv;
	size_t off = 0;

	if (co->co_turn != rs->rs_turn) {
		co->co_turn = rs->rs_turn;
		co->co_ncalls = 0;
	}
	while (co->co_inlen - off >= 4 && !co->co_dead) {
		uint32_t mark;
		size_t flen;
		int last;

		/*
		 * Its share; or the turn did enough (ev_turn_full()) and it
		 * had its one call of the turn, which a connection held
		 * with calls waiting always gets (it is served after the
		 * sockets, and they may fill every turn).
		 */
		if (co->co_ncalls >= rs->rs_share ||
		    (co->co_ncalls > 0 && ev_turn_full_p(rs->rs_loop))) {
			onc_conn_hold(co);
			break;
		}

		memcpy(&mark, co->co_in + off, 4);
		mark = ntohl(mark);
		last = (mark & 0x80000000u) != 0;
		flen = mark & 0x7fffffffu;
		if (co->co_reclen + flen > rs->rs_lim.max_record) {
			rs->rs_stats.oversize++;
			errno = EMSGSIZE;
			return -1;
		}
		if (co->co_inlen - off - 4 < flen)
			break;
		if (co->co_reclen + flen > co->co_reccap &&
		    onc_grow(&co->co_rec, &co->co_reccap, co->co_reclen + flen,
		    rs->rs_lim.max_record) == -1) {
			errno = ENOMEM;	/* within max_record: only memory */
			return -1;
		}
		memcpy(co->co_rec + co->co_reclen, co->co_in + off + 4, flen);
		co->co_reclen += flen;
		off += 4 + flen;
		if (last) {
			struct onc_ctx cx;

			memset(&cx, 0, sizeof(cx));
			cx.cx_call.rc_xport = ONC_TCP;
			cx.cx_call.rc_peer = co->co_peer;
			cx.cx_call.rc_peerlen = co->co_peerlen;
			cx.cx_call.rc_local = co->co_local;
			cx.cx_call.rc_locallen = co->co_locallen;
			cx.cx_call.rc_srv = rs;
			cx.cx_conn = co;
			cx.cx_fd = -1;
			onc_dispatch(&cx, co->co_rec, co->co_reclen);
			co->co_reclen = 0;
			if (co->co_ncalls++ == 0)
				rs->rs_active++;
		}
	}
	memmove(co->co_in, co->co_in + off, co->co_inlen - off);
	co->co_inlen -= off;
	return 0;
}

/* Parse what co_in holds; a peer that broke the framing is cut off. */
static void
onc_conn_input(struct onc_conn *co)
{
	struct onc_srv *rs = co->co_srv;

	if (onc_conn_parse(co) == -1) {
		char a[64];

		if (errno == ENOMEM)
			log_rl_warnx(&rl_record_size, "closing connection "
			    "from %s: out of memory for its record",
			    addr_str((struct sockaddr *)&co->co_peer, 1, a,
			    sizeof(a)));
		else
			log_rl_warnx(&rl_record_size, "closing connection "
			    "from %s: record over %zu bytes or bad framing",
			    addr_str((struct sockaddr *)&co->co_peer, 1, a,
			    sizeof(a)), rs->rs_lim.max_record);
		co->co_dead = co->co_abort = 1;
	}
}

static void
onc_conn_read(struct onc_conn *co)
{
	struct onc_srv *rs = co->co_srv;
	ssize_t n;

	/*
	 * Calls are waiting already: they go first (onc_conn_resume).  Or
	 * the peer has sent all it will.  Or no request is read now.
	 */
	if (co->co_held || co->co_eof || rs->rs_paused)
		return;

	/*
	 * The buffer grows (doubling, to one full record and its mark at
	 * most) only when it is full of an unfinished fragment, so an idle
	 * or small-call connection keeps 4 KiB; whole calls beyond the
	 * turn's share wait in it, and nothing more is read meanwhile.
	 */
	if (co->co_inlen == co->co_incap &&
	    onc_grow(&co->co_in, &co->co_incap, co->co_incap + 1,
	    rs->rs_lim.max_record + 4) == -1) {
		co->co_dead = co->co_abort = 1;	/* full at the limit */
		return;
	}
	n = recv(co->co_fd, co->co_in + co->co_inlen,
	    co->co_incap - co->co_inlen, MSG_DONTWAIT);
	if (n == 0) {
		/*
		 * The end of the stream, which need not be the end of the
		 * connection: a client may send its calls, shut down its
		 * sending side (as nlmctl does on the control socket), and
		 * read the replies, those whose commit is still to come
		 * included.  A part of a record left in co_in will never be
		 * complete.
		 */
		co->co_eof = 1;
		onc_conn_watch(co);
		return;
	}
	if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR) {
		co->co_dead = 1;
		return;
	}
	if (n < 0)
		return;
	co->co_inlen += (size_t)n;
	co->co_active = ev_now_ms();
	onc_conn_input(co);
}

void
onc_conn_resume(struct ev_loop *loop, void *arg)
{
	struct onc_srv *rs = arg;
	struct onc_conn *co, *prev = NULL, **tail = &rs->rs_resuming;
	int full = ev_turn_full_p(loop), served = 0;

	if (rs->rs_paused)
		return;		/* onc_srv_input() arms this again */
	onc_udp_resume(rs);
	/*
	 * Serve the connections a full turn left (still on rs_resuming,
	 * in order), then those held since: those held again (still more
	 * waiting) go on rs_held, for the next turn.  A close of any of
	 * them meanwhile takes it off rs_resuming.  One call each in a full
	 * turn (onc_conn_parse()), but not one each of all of them: once
	 * they did another turn's worth (ev_turn_full() again) the rest
	 * wait for the next, first -- each held connection with a whole-file
	 * UNLOCK waiting would otherwise add its release to every turn,
	 * however many they are.  One of them is always served: the sockets
	 * may fill every turn.
	 */
	while (*tail != NULL) {
		prev = *tail;
		tail = &prev->co_hnext;
	}
	*tail = rs->rs_held;
	if (rs->rs_held != NULL)
		rs->rs_held->co_hprev = prev;
	for (co = rs->rs_held; co != NULL; co = co->co_hnext)
		co->co_held = 2;
	rs->rs_held = NULL;
	while ((co = rs->rs_resuming) != NULL) {
		if (served++ > 0 && ev_turn_full_p(loop) > full)
			break;
		onc_conn_unhold(co);
		if (!co->co_dead)
			onc_conn_input(co);
		/* All served: what the socket has may follow this turn. */
		if (!co->co_dead && !co->co_held &&
		    co->co_outoff >= co->co_safe)
			onc_conn_read(co);
		if (co->co_dead)
			onc_conn_close(co);
	}
}

static void
onc_conn_io(struct ev_loop *loop, int fd, int events, void *arg)
{
	struct onc_conn *co = arg;

	(void)loop;
	(void)fd;
	if (events & EV_WRITE)
		onc_conn_flush(co);
	else if (events & EV_READ) {
		onc_conn_read(co);
		if (co->co_dead)
			onc_conn_close(co);
	}
}

static struct onc_conn *
onc_conn_new(struct onc_srv *rs, int fd)
{
	struct onc_conn *co;
	size_t inmax = rs->rs_lim.max_record + 4;

	if ((co = calloc(1, sizeof(*co))) == NULL)
		return NULL;
	co->co_incap = inmax < CONN_BUF_MIN ? inmax : CONN_BUF_MIN;
	co->co_reccap = rs->rs_lim.max_record < CONN_BUF_MIN ?
	    rs->rs_lim.max_record : CONN_BUF_MIN;
	co->co_in = malloc(co->co_incap);
	co->co_rec = malloc(co->co_reccap);
	if (co->co_in == NULL || co->co_rec == NULL) {
		onc_conn_free(co);
		return NULL;
	}
	co->co_fd = fd;
	co->co_srv = rs;
	co->co_active = ev_now_ms();
	return co;
}


/*
 * Connections per peer address: a binary tree (tsearch) of counts, so an
 * accept costs O(log n) in the addresses connected, not a walk of every
 * connection, and no hash an attacker could flood.
 */
static int
onc_addr_cmp(const void *a, const void *b)
{
	const struct onc_addrcount *x = a, *y = b;
	int c;

	if (x->ac_family != y->ac_family)
		return x->ac_family < y->ac_family ? -1 : 1;
	if ((c = memcmp(x->ac_addr, y->ac_addr, sizeof(x->ac_addr))) != 0)
		return c;
	if (x->ac_scope != y->ac_scope)
		return x->ac_scope < y->ac_scope ? -1 : 1;
	return 0;
}

static void
onc_addr_key(const struct sockaddr_storage *ss, socklen_t sl,
    struct onc_addrcount *k)
{
	struct sockaddr_storage a = *ss;

	addr_unmap(&a, &sl);
	memset(k, 0, sizeof(*k));
	k->ac_family = (uint8_t)a.ss_family;
	if (a.ss_family == AF_INET)
		memcpy(k->ac_addr, &((struct sockaddr_in *)&a)->sin_addr, 4);
	else if (a.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a;

		memcpy(k->ac_addr, &s6->sin6_addr, 16);
		/*
		 * fe80::1 on two links is two machines, each with its own
		 * budget (as nlm_addr_equal() keeps them two hosts): a
		 * link-local address is one peer only with its interface.
		 */
		if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) ||
		    IN6_IS_ADDR_MC_LINKLOCAL(&s6->sin6_addr))
			k->ac_scope = s6->sin6_scope_id;
	}
}

/*
 * One more connection from ss, unless `max' (0: no cap) are open from
 * there already.  The count, or NULL: over the cap, or out of memory
 * (*nomem true).
 */
static struct onc_addrcount *
onc_addr_get(struct onc_srv *rs, const struct sockaddr_storage *ss,
    socklen_t sl, unsigned max, bool *nomem)
{
	struct onc_addrcount key, *ac, **slot;

	*nomem = false;
	onc_addr_key(ss, sl, &key);
	if ((slot = tfind(&key, &rs->rs_addrs, onc_addr_cmp)) != NULL) {
		ac = *slot;
		if (max > 0 && ac->ac_conns >= max)
			return NULL;
		ac->ac_conns++;
		return ac;
	}
	if ((ac = malloc(sizeof(*ac))) == NULL) {
		*nomem = true;
		return NULL;
	}
	*ac = key;
	ac->ac_conns = 1;
	if (tsearch(ac, &rs->rs_addrs, onc_addr_cmp) == NULL) {
		free(ac);
		*nomem = true;
		return NULL;
	}
	return ac;
}

static void
onc_addr_put(struct onc_srv *rs, struct onc_addrcount *ac)
{
	if (ac == NULL || --ac->ac_conns > 0)
		return;
	(void)tdelete(ac, &rs->rs_addrs, onc_addr_cmp);
	free(ac);
}

static void
onc_tcp_resume(struct ev_loop *loop, void *arg)
{
	struct onc_listener *rl = arg;

	if (rl->rl_srv->rs_paused)
		return;		/* onc_srv_input() watches it again */
	if (ev_fd_set(loop, rl->rl_fd, EV_READ) == -1)
		ev_timer_set(loop, &rl->rl_pause, ACCEPT_PAUSE_MS,
		    onc_tcp_resume, rl);
}

/*
 * Out of descriptors (EMFILE, ENFILE) or memory (ENOBUFS, ENOMEM; or
 * epoll's watches, ENOSPC), as `why' says: stop watching the listener
 * for ACCEPT_PAUSE_MS, while connections that end give descriptors and
 * memory back; the clients wait in the backlog meanwhile.
 */
static void
onc_tcp_pause(struct onc_listener *rl, const char *why)
{
	struct onc_srv *rs = rl->rl_srv;

	rs->rs_stats.accept_paused++;
	log_rl_warnx(&rl_accept_pause, "%s; not accepting for %d ms "
	    "(%u connections open)", why, ACCEPT_PAUSE_MS,
	    (unsigned)rs->rs_stats.conns_open);
	if (ev_fd_set(rs->rs_loop, rl->rl_fd, 0) == -1)
		return;		/* still watched: it retries next turn */
	ev_timer_set(rs->rs_loop, &rl->rl_pause, ACCEPT_PAUSE_MS,
	    onc_tcp_resume, rl);
}

/*
 * Reset fd, a connection just accepted (its address's count ac given
 * back, if taken), counted as refused.  If the server is out of memory
 * or epoll watches for it (`why': what failed, for the log; NULL: over
 * a cap, or another failure), accepting pauses as for accept4()'s
 * errors: the clients behind it in the backlog would meet the same
 * failure, reset one by one, and wait there instead.
 */
static void
onc_tcp_refuse(struct onc_listener *rl, int fd, struct onc_addrcount *ac,
    const char *why)
{
	struct onc_srv *rs = rl->rl_srv;

	onc_addr_put(rs, ac);
	rs->rs_stats.conns_refused++;
	onc_fd_reset(fd);
	close(fd);
	if (why != NULL)
		onc_tcp_pause(rl, why);
}

/*
 * Serve fd, the connection accepted from ss, or refuse it.  False when
 * that paused the listener: accept no more this turn.
 */
static bool
onc_tcp_take(struct onc_listener *rl, int fd,
    const struct sockaddr_storage *ss, socklen_t sl)
{
	struct onc_srv *rs = rl->rl_srv;
	struct onc_addrcount *ac = NULL;
	struct onc_conn *co = NULL;
	bool nomem = false;
	int err, one = 1;
	char a[64], why[160];

	if (rs->rs_stats.conns_open < rs->rs_lim.max_conns)
		ac = onc_addr_get(rs, ss, sl, rs->rs_lim.max_conns_per_addr,
		    &nomem);
	if (ac == NULL && !nomem) {
		/* Over a cap. */
		onc_tcp_refuse(rl, fd, NULL, NULL);
		return true;
	}
	if (ac == NULL || (co = onc_conn_new(rs, fd)) == NULL) {
		snprintf(why, sizeof(why), "refusing connection from %s: out "
		    "of memory", addr_str((const struct sockaddr *)ss, 1, a,
		    sizeof(a)));
		onc_tcp_refuse(rl, fd, ac, why);
		return false;
	}
	co->co_addr = ac;
	co->co_peer = *ss;
	co->co_peerlen = sl;
	co->co_locallen = sizeof(co->co_local);
	if (getsockname(fd, (struct sockaddr *)&co->co_local,
	    &co->co_locallen) == -1)
		co->co_locallen = 0;
	/*
	 * A turn's replies leave in one write already; Nagle would only
	 * hold the next turn's back until the peer ACKs, and a peer with
	 * many calls in flight on one connection (the Linux client's
	 * lockd) ACKs late: up to 40 ms a turn.
	 */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (ev_fd_add(rs->rs_loop, fd, EV_READ, onc_conn_io, co) == -1) {
		err = errno;
		onc_conn_free(co);
		(void)addr_str((const struct sockaddr *)ss, 1, a, sizeof(a));
		/* ENOSPC: fs.epoll.max_user_watches reached. */
		if (err != ENOMEM && err != ENOSPC) {
			log_rl_warnx(&rl_unwatched, "refusing connection from "
			    "%s: cannot watch it: %s", a, strerror(err));
			onc_tcp_refuse(rl, fd, ac, NULL);
			return true;
		}
		snprintf(why, sizeof(why), "refusing connection from %s: "
		    "cannot watch it: %s", a, strerror(err));
		onc_tcp_refuse(rl, fd, ac, why);
		return false;
	}
	co->co_next = rs->rs_conns;
	if (rs->rs_conns != NULL)
		rs->rs_conns->co_prev = co;
	rs->rs_conns = co;
	rs->rs_stats.conns_open++;
	rs->rs_stats.conns_total++;
	return true;
}

void
onc_tcp_accept(struct ev_loop *loop, int lfd, int events, void *arg)
{
	struct onc_listener *rl = arg;
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, i;
	char why[96];

	(void)loop;
	(void)events;
	for (i = 0; i < 64; i++) {
		sl = sizeof(ss);
		fd = accept4(lfd, (struct sockaddr *)&ss, &sl,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				snprintf(why, sizeof(why), "accept: %s",
				    strerror(errno));
				onc_tcp_pause(rl, why);
			} else if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				log_rl_warnx(&rl_accept, "accept: %s",
				    strerror(errno));
			return;
		}
		if (!onc_tcp_take(rl, fd, &ss, sl))
			return;
	}
}

/*
 * Close co, idle past idle_sec.  If its peer has left released replies
 * unread (in co_out, or in the socket's send queue: SIOCOUTQ, bytes not
 * sent or not acknowledged) it stopped reading: reset it.  Closed, the
 * socket would stay with the kernel in FIN_WAIT_1 holding those bytes
 * until its orphan retries give up (minutes), counted by no connection
 * cap.  (A connection with replies still waiting for their commit is not
 * idle: onc_sweep() leaves it.)
 */
static void
onc_conn_idle(struct onc_conn *co)
{
	struct onc_srv *rs = co->co_srv;
	size_t unread = co->co_safe - co->co_outoff;
	int inq = 0;
	char a[64];

	if (ioctl(co->co_fd, SIOCOUTQ, &inq) == 0 && inq > 0)
		unread += (size_t)inq;
	rs->rs_stats.conns_idle++;
	if (unread > 0) {
		log_rl_warnx(&rl_idle_unread, "closing connection from %s: "
		    "idle, %zu reply bytes unread", addr_str((struct sockaddr *)
		    &co->co_peer, 1, a, sizeof(a)), unread);
		co->co_abort = 1;
	}
	onc_conn_close(co);
}

void
onc_sweep(struct ev_loop *loop, void *arg)
{
	struct onc_srv *rs = arg;
	struct onc_conn *co, *next;
	uint64_t now = ev_now_ms();
	uint64_t idle = (uint64_t)rs->rs_lim.idle_sec * 1000;

	for (co = rs->rs_conns; co != NULL && !rs->rs_paused; co = next) {
		next = co->co_next;
		/*
		 * Not while replies wait for a commit (co_waiting): the
		 * client waits for us, however long the commit takes.
		 */
		if (now - co->co_active > idle && !co->co_isdirty &&
		    !co->co_waiting)
			onc_conn_idle(co);
		else if (co->co_inlen == 0 && co->co_reclen == 0 &&
		    !co->co_held)
			onc_conn_shrink(co);
	}
	ev_timer_set(loop, &rs->rs_sweep, SWEEP_MS, onc_sweep, rs);
}
