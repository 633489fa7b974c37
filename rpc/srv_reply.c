/*
 * srv_reply.c - reply queues: replies made in a turn are held, sealed at
 * its end with its commit number, and released when that commit is
 * durable (UDP sent at once; TCP appended to the connection's output).
 */
#include "srv_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "netaddr.h"

/* Limits for messages a peer can trigger (log.h). */
static struct log_rl rl_reply_backlog;
static struct log_rl rl_input_paused;
static struct log_rl rl_input_resumed;

/*
 * Move co's unsent bytes down to the start of co_out, and the offsets
 * that point into them (co_safe, the marks), forgetting what was sent.
 * The replies of a connection that always has a call waiting for its
 * commit (one in flight under durability = sync) never all leave at
 * once: a buffer rewound only when nothing at all is left would keep
 * every reply ever sent on it.
 */
static void
onc_conn_compact(struct onc_conn *co)
{
	size_t d = co->co_outoff, i;

	if (d == 0)
		return;
	memmove(co->co_out, co->co_out + d, co->co_outlen - d);
	co->co_outlen -= d;
	co->co_safe -= d;
	co->co_outoff = 0;
	for (i = 0; i < co->co_nmarks; i++)
		co->co_marks[i].rm_off -= d;
}

void
onc_conn_trim(struct onc_conn *co)
{
	size_t cap;
	uint8_t *o;

	/*
	 * Only once the sent part is as large as the rest, so that no more
	 * is moved than was sent since the last move.
	 */
	if (co->co_outoff > 0 && co->co_outoff >= co->co_outlen -
	    co->co_outoff)
		onc_conn_compact(co);
	/*
	 * A burst (a peer slow to read, a slow commit) grew the buffer:
	 * give the memory back once three quarters are free, keeping twice
	 * what is left so that the next turns do not grow it at once.
	 */
	if (co->co_outcap <= CONN_BUF_MIN || co->co_outlen > co->co_outcap / 4)
		return;
	for (cap = CONN_BUF_MIN; cap < 2 * co->co_outlen; cap *= 2)
		;
	if ((o = realloc(co->co_out, cap)) == NULL)
		return;			/* the larger one will do */
	co->co_out = o;
	co->co_outcap = cap;
}

/*
 * Append a reply of n bytes to co's output, as one record: its mark,
 * then its bytes.  Room for both is made before either is copied, so
 * that a failure leaves the stream as it was: a mark without its body
 * would have the peer take what follows (the error reply the dispatcher
 * sends instead, later replies) for that body, and lose the framing for
 * the rest of the connection.  ONC_SEND when the peer has left too much
 * unread (the connection is then reset), ONC_NOMEM.
 */
static enum onc_status
onc_conn_append(struct onc_conn *co, const uint8_t *p, size_t n)
{
	struct onc_srv *rs = co->co_srv;
	uint32_t mark = htonl(0x80000000u | (uint32_t)n);
	size_t need;

	need = co->co_outlen + sizeof(mark) + n;
	if (need - co->co_outoff > rs->rs_lim.max_outq) {
		char a[64];

		log_rl_warnx(&rl_reply_backlog,
		    "closing connection from %s: %zu reply bytes "
		    "unread", addr_str((struct sockaddr *)&co->co_peer, 1,
		    a, sizeof(a)), co->co_outlen - co->co_outoff);
		rs->rs_stats.conns_slow++;
		co->co_dead = co->co_abort = 1;
		return ONC_SEND;
	}
	/* Room where the sent bytes were, before any more memory. */
	if (need > co->co_outcap && co->co_outoff > 0) {
		onc_conn_compact(co);
		need = co->co_outlen + sizeof(mark) + n;
	}
	if (need > co->co_outcap) {
		size_t cap = co->co_outcap ? co->co_outcap : CONN_BUF_MIN;
		uint8_t *o;

		while (cap < need)
			cap *= 2;
		/* Nothing sent is left: need is within max_outq. */
		if (cap > rs->rs_lim.max_outq)
			cap = rs->rs_lim.max_outq;
		if ((o = realloc(co->co_out, cap)) == NULL)
			return ONC_NOMEM;
		co->co_out = o;
		co->co_outcap = cap;
	}
	memcpy(co->co_out + co->co_outlen, &mark, sizeof(mark));
	memcpy(co->co_out + co->co_outlen + sizeof(mark), p, n);
	co->co_outlen += sizeof(mark) + n;
	rs->rs_stats.held += sizeof(mark) + n;
	if (!co->co_isdirty) {
		co->co_isdirty = 1;
		co->co_dirty = rs->rs_dirty;
		rs->rs_dirty = co;
	}
	return ONC_OK;
}

enum onc_status
onc_queue_reply(struct onc_ctx *cx, const uint8_t *p, size_t n)
{
	struct onc_srv *rs = cx->cx_call.rc_srv;
	struct onc_udpreply *ur;

	if (cx->cx_conn != NULL) {
		if (cx->cx_conn->co_dead)
			return ONC_SEND;
		return onc_conn_append(cx->cx_conn, p, n);
	}
	if (n <= UDP_REPLY_SMALL && (ur = rs->rs_udpfree) != NULL) {
		rs->rs_udpfree = ur->ur_next;
		rs->rs_nudpfree--;
	} else {
		size_t cap = n <= UDP_REPLY_SMALL ? UDP_REPLY_SMALL : n;

		if ((ur = malloc(sizeof(*ur) + cap)) == NULL)
			return ONC_NOMEM;
		ur->ur_cap = cap;
	}
	ur->ur_fd = cx->cx_fd;
	ur->ur_peer = cx->cx_call.rc_peer;
	ur->ur_peerlen = cx->cx_call.rc_peerlen;
	ur->ur_local = cx->cx_call.rc_local;
	ur->ur_len = n;
	ur->ur_next = NULL;
	memcpy(ur->ur_buf, p, n);
	rs->rs_stats.held += n;
	*rs->rs_udpnewtail = ur;
	rs->rs_udpnewtail = &ur->ur_next;
	return ONC_OK;
}

void
onc_udp_put(struct onc_srv *rs, struct onc_udpreply *ur)
{
	if (ur->ur_cap == UDP_REPLY_SMALL && rs->rs_nudpfree < UDP_REPLY_FREE) {
		ur->ur_next = rs->rs_udpfree;
		rs->rs_udpfree = ur;
		rs->rs_nudpfree++;
	} else
		free(ur);
}

/* Replies sent with one onc_send_many() at the most. */
#define UDP_SEND_BATCH	64

/*
 * Send n released replies that share a socket, from the local addresses
 * their requests came to, and free them.
 */
static void
onc_udp_send(struct onc_srv *rs, int fd, struct onc_udpreply **ur, size_t n)
{
	struct onc_dgram dg[UDP_SEND_BATCH] = { { 0 } };
	size_t i, full;

	for (i = 0; i < n; i++) {
		dg[i].dg_buf = ur[i]->ur_buf;
		dg[i].dg_len = ur[i]->ur_len;
		dg[i].dg_dst = &ur[i]->ur_peer;
		dg[i].dg_dstlen = ur[i]->ur_peerlen;
		dg[i].dg_src = ur[i]->ur_local.ss_family != AF_UNSPEC ?
		    &ur[i]->ur_local : NULL;
	}
	rs->rs_stats.udp_send_fail += onc_send_many(fd, dg, n, &full);
	rs->rs_stats.udp_send_full += full;
	for (i = 0; i < n; i++)
		onc_udp_put(rs, ur[i]);
}

/* Put co on (or take it off) the list of connections with marks. */
void
onc_conn_wait(struct onc_conn *co, int on)
{
	struct onc_srv *rs = co->co_srv;

	if (on == co->co_waiting)
		return;
	if (on) {
		co->co_wprev = NULL;
		co->co_wnext = rs->rs_waiting;
		if (rs->rs_waiting != NULL)
			rs->rs_waiting->co_wprev = co;
		rs->rs_waiting = co;
	} else {
		if (co->co_wprev != NULL)
			co->co_wprev->co_wnext = co->co_wnext;
		else
			rs->rs_waiting = co->co_wnext;
		if (co->co_wnext != NULL)
			co->co_wnext->co_wprev = co->co_wprev;
	}
	co->co_waiting = on;
}

/* Everything co queued so far waits for commit seq.  Or ONC_NOMEM. */
static enum onc_status
onc_conn_mark(struct onc_conn *co, uint64_t seq)
{
	struct onc_mark *m;
	size_t cap;

	if (co->co_nmarks > 0 &&
	    co->co_marks[co->co_nmarks - 1].rm_off == co->co_outlen)
		return ONC_OK;
	if (co->co_nmarks == co->co_capmarks) {
		cap = co->co_capmarks ? co->co_capmarks * 2 : 4;
		if ((m = realloc(co->co_marks, cap * sizeof(*m))) == NULL)
			return ONC_NOMEM;
		co->co_marks = m;
		co->co_capmarks = cap;
	}
	co->co_marks[co->co_nmarks].rm_off = co->co_outlen;
	co->co_marks[co->co_nmarks++].rm_seq = seq;
	onc_conn_wait(co, 1);
	return ONC_OK;
}

void
onc_srv_seal(struct onc_srv *rs, uint64_t seq)
{
	struct onc_udpreply *ur;
	struct onc_conn *co, *cnext;

	for (ur = rs->rs_udpnew; ur != NULL; ur = ur->ur_next)
		ur->ur_seq = seq;
	if (rs->rs_udpnew != NULL) {
		*rs->rs_udptail = rs->rs_udpnew;
		rs->rs_udptail = rs->rs_udpnewtail;
	}
	rs->rs_udpnew = NULL;
	rs->rs_udpnewtail = &rs->rs_udpnew;
	for (co = rs->rs_dirty; co != NULL; co = cnext) {
		cnext = co->co_dirty;
		co->co_dirty = NULL;
		co->co_isdirty = 0;
		if (!co->co_dead && onc_conn_mark(co, seq) != ONC_OK)
			co->co_dead = 1;
		if (co->co_dead)
			onc_conn_close(co);
	}
	rs->rs_dirty = NULL;
	/*
	 * Calls over a connection's share, datagrams a full turn left:
	 * served next turn.
	 */
	onc_conn_share(rs);
	rs->rs_turn++;
	if (!rs->rs_paused && rs->rs_stats.held > rs->rs_lim.max_held) {
		log_rl_warnx(&rl_input_paused, "%llu reply bytes wait for "
		    "commits (more than %zu): not reading requests until "
		    "half of them are written", (unsigned long long)
		    rs->rs_stats.held, rs->rs_lim.max_held);
		onc_srv_input(rs, false);
	}
	onc_srv_resume_later(rs);
}

void
onc_srv_release(struct onc_srv *rs, uint64_t committed)
{
	struct onc_udpreply *ur, *batch[UDP_SEND_BATCH];
	struct onc_conn *co, *cnext;
	size_t i, n = 0;
	int fd = -1;

	/* Released UDP replies, in order, a batch per run on one socket. */
	while ((ur = rs->rs_udpq) != NULL && ur->ur_seq <= committed) {
		rs->rs_udpq = ur->ur_next;
		if (rs->rs_udpq == NULL)
			rs->rs_udptail = &rs->rs_udpq;
		if (n == UDP_SEND_BATCH || (n > 0 && ur->ur_fd != fd)) {
			onc_udp_send(rs, fd, batch, n);
			n = 0;
		}
		fd = ur->ur_fd;
		rs->rs_stats.held -= ur->ur_len;
		batch[n++] = ur;
	}
	if (n > 0)
		onc_udp_send(rs, fd, batch, n);
	for (co = rs->rs_waiting; co != NULL; co = cnext) {
		size_t safe = co->co_safe;

		cnext = co->co_wnext;
		for (i = 0; i < co->co_nmarks &&
		    co->co_marks[i].rm_seq <= committed; i++)
			co->co_safe = co->co_marks[i].rm_off;
		if (i == 0)
			continue;
		rs->rs_stats.held -= co->co_safe - safe;
		co->co_nmarks -= i;
		memmove(co->co_marks, co->co_marks + i,
		    co->co_nmarks * sizeof(*co->co_marks));
		if (co->co_nmarks == 0)
			onc_conn_wait(co, 0);
		onc_conn_flush(co);
	}
	if (rs->rs_paused && rs->rs_stats.held <= rs->rs_lim.max_held / 2) {
		log_rl_info(&rl_input_resumed, "reading requests again after %.3f s (%llu reply "
		    "bytes wait for commits)", (double)(ev_now_ms() -
		    rs->rs_paused) / 1000, (unsigned long long)
		    rs->rs_stats.held);
		onc_srv_input(rs, true);
	}
}
