/*
 * ctlsrv.c - the control socket in nlmd (see ctlsrv.h, ctl.h).
 *
 * A connection goes: accepted (credentials checked) -> reading its one
 * request (bounded: CTL_REQ_MAX bytes, CTL_REQ_TIMEOUT_MS) -> answering:
 * the "ok" line, the command's body lines, the "end N" line -> closed.
 * Output is buffered per connection and written when the socket takes
 * it; a producer (ctl_produce) is asked for its next piece at most once
 * per turn of the event loop, and only once the previous piece is out,
 * so a dump of any size runs in pieces between everything else the loop
 * does.
 *
 * At most CTL_MAX_CONNS connections at once.  One whose reader has taken
 * nothing for CTL_STALL_MS (while its producer goes on being asked for
 * pieces, empty or not, it has taken all there was), or that has sent no
 * request for CTL_REQ_STALL_MS (nlmctl sends its request as soon as it
 * is connected), keeps its place until the slots run out; then a
 * newcomer allowed to use the socket takes the place of the one stalled
 * longest (before, sixteen nlmctl processes stopped at a full pipe, or
 * that never read, locked the operator out until nlmd restarted; sixteen
 * that never wrote did for 10 s after each of them).  A newcomer that
 * finds no place, no memory for its state, or a loop that cannot watch
 * it is told so before it is closed, and so is one whose groups cannot be
 * read (whether it may use the socket is unknown; it is not told
 * "permission denied"); one whose credentials cannot be read is closed
 * untold (it may not be allowed to know), and logged.  Out of memory or
 * epoll watches for a newcomer, as out of descriptors at accept, the
 * socket is left alone for CTL_ACCEPT_PAUSE_MS: the clients behind it
 * wait in the backlog rather than each being told "try again".
 */
#include "ctlsrv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ev.h"
#include "log.h"

/* Limits for messages a peer can trigger (log.h). */
static struct log_rl rl_refused;
static struct log_rl rl_accept;
static struct log_rl rl_nomem;
static struct log_rl rl_cred;
static struct log_rl rl_unwatched;

#define CTL_MAX_CONNS		16
#define CTL_REQ_TIMEOUT_MS	10000
#define CTL_STALL_MS		10000
#define CTL_REQ_STALL_MS	1000
#define CTL_HOLD_POLL_MS	5
/* Out of descriptors or memory: the listener is left alone this long. */
#define CTL_ACCEPT_PAUSE_MS	100
#define CTL_LINE_MAX		8192

struct ctl_cmd {
	char		*cc_name;
	const char *const *cc_keys;	/* the arguments it takes */
	const char *const *cc_flags;	/* those of them that are 0 or 1 */
	ctl_cmd_fn	*cc_fn;
	void		*cc_arg;
	struct ctl_cmd	*cc_next;
};

struct ctl_conn {
	struct ctl_srv	*c_srv;
	int		 c_fd;
	struct ctl_peer	 c_peer;
	char		 c_in[CTL_REQ_MAX + 1];
	size_t		 c_inlen;
	bool		 c_answering;	/* request read */
	bool		 c_sent;	/* some bytes written */
	bool		 c_done;	/* end line queued: close when out */
	bool		 c_failed;	/* error line queued */
	bool		 c_cut;		/* c_out could not grow: nothing more
					   is added (but an error line) */
	char		*c_out;
	size_t		 c_outlen;
	size_t		 c_outoff;
	size_t		 c_outcap;
	size_t		 c_lines;	/* body lines */
	bool		 c_inline;	/* a body line is open */
	ctl_fill_fn	*c_fill;
	bool		 c_last;	/* its next piece is the last */
	void		*c_state;
	ctl_free_fn	*c_free;
	ctl_ready_fn	*c_ready;
	void		*c_ready_arg;
	struct ev_timer	 c_timer;
	uint64_t	 c_progress;	/* ev_now_ms() of the last bytes out,
					   or piece asked for */
	struct ctl_conn	*c_next;
};

struct ctl_srv {
	struct ev_loop	*s_loop;
	int		 s_fd;
	char		 s_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	long		 s_group;
	struct ctl_cmd	*s_cmds;
	struct ctl_conn	*s_conns;
	unsigned	 s_nconns;
	struct ev_timer	 s_pause;	/* accept paused until then */
	uint64_t	 s_paused;	/* times it was */
	dev_t		 s_dev;		/* the socket file bound: only it */
	ino_t		 s_ino;		/* is removed at the end */
};

static void	conn_close(struct ctl_conn *);
static void	conn_flush(struct ctl_conn *);

/* ---- output buffer ---- */

static void
out_add(struct ctl_conn *c, const char *p, size_t n)
{
	char *nb;
	size_t cap;

	/*
	 * Cut off at the piece that did not fit: what follows it (a shorter
	 * line that fits, or a later growth that works) would reach the
	 * reader with a hole before it.
	 */
	if (c->c_cut)
		return;
	if (c->c_outlen + n > c->c_outcap) {
		cap = c->c_outcap == 0 ? 65536 : c->c_outcap;
		while (cap < c->c_outlen + n)
			cap *= 2;
		if ((nb = realloc(c->c_out, cap)) == NULL) {
			/* The answer would be wrong: cut it off. */
			c->c_failed = c->c_cut = true;
			return;
		}
		c->c_out = nb;
		c->c_outcap = cap;
	}
	memcpy(c->c_out + c->c_outlen, p, n);
	c->c_outlen += n;
}

const struct ctl_peer *
ctl_peer(const struct ctl_conn *c)
{
	return &c->c_peer;
}

size_t
ctl_pending(const struct ctl_conn *c)
{
	return c->c_outlen - c->c_outoff;
}

void
ctl_error(struct ctl_conn *c, const char *fmt, ...)
{
	char msg[512], line[64 + 4 * sizeof(msg)];
	const unsigned char *p;
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->c_sent) {
		/* Too late for an error line: the reader sees no end. */
		c->c_failed = true;
		return;
	}
	/*
	 * One line whatever the message quotes: a request's values are
	 * percent-decoded, and "no host named x\nnlmctl 1 end 0" forged an
	 * end line (and an escape sequence reached the operator's
	 * terminal).  Control characters, bytes outside ASCII and '\' are
	 * written \ooo, as ctl_vis() does.
	 */
	n = snprintf(line, sizeof(line), CTL_MAGIC " %d error ", CTL_VERSION);
	for (p = (const unsigned char *)msg; *p != '\0'; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			line[n++] = (char)*p;
		else {
			line[n++] = '\\';
			line[n++] = (char)('0' + (*p >> 6));
			line[n++] = (char)('0' + ((*p >> 3) & 7));
			line[n++] = (char)('0' + (*p & 7));
		}
	}
	line[n++] = '\n';
	/* The error line takes the place of all (of a part cut off too). */
	c->c_outlen = c->c_outoff = 0;
	c->c_cut = false;
	out_add(c, line, (size_t)n);
	c->c_done = true;
	c->c_fill = NULL;
}

void
ctl_line(struct ctl_conn *c, const char *kind)
{
	if (c->c_inline)
		ctl_line_end(c);
	out_add(c, kind, strlen(kind));
	c->c_inline = true;
}

void
ctl_kv_bytes(struct ctl_conn *c, const char *key, const void *val,
    size_t len)
{
	char enc[CTL_LINE_MAX];
	size_t n;

	out_add(c, "\t", 1);
	out_add(c, key, strlen(key));
	out_add(c, "=", 1);
	if ((n = ctl_enc(val, len, enc, sizeof(enc))) == (size_t)-1)
		n = ctl_enc("?", 1, enc, sizeof(enc));
	out_add(c, enc, n);
}

void
ctl_kv(struct ctl_conn *c, const char *key, const char *val)
{
	ctl_kv_bytes(c, key, val, strlen(val));
}

/* "\tkey=" */
static void
kv_key(struct ctl_conn *c, const char *key)
{
	size_t kl = strlen(key);
	char b[64];

	if (kl > sizeof(b) - 2)
		kl = sizeof(b) - 2;
	b[0] = '\t';
	memcpy(b + 1, key, kl);
	b[kl + 1] = '=';
	out_add(c, b, kl + 2);
}

/* Numbers and hex need no escaping: written straight (dumps are big). */
void
ctl_kv_u64(struct ctl_conn *c, const char *key, uint64_t v)
{
	char b[24];
	size_t i = sizeof(b);

	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	kv_key(c, key);
	out_add(c, b + i, sizeof(b) - i);
}

void
ctl_kv_i64(struct ctl_conn *c, const char *key, int64_t v)
{
	char b[32];

	if (v >= 0) {
		ctl_kv_u64(c, key, (uint64_t)v);
		return;
	}
	snprintf(b, sizeof(b), "%lld", (long long)v);
	ctl_kv(c, key, b);
}

void
ctl_kv_hex(struct ctl_conn *c, const char *key, const void *p, size_t len)
{
	char b[2 * 1024 + 1];

	ctl_hex(p, len > 1024 ? 1024 : len, b, sizeof(b));
	kv_key(c, key);
	out_add(c, b, strlen(b));
}

void
ctl_line_end(struct ctl_conn *c)
{
	if (!c->c_inline)
		return;
	out_add(c, "\n", 1);
	c->c_inline = false;
	c->c_lines++;
}

void
ctl_raw(struct ctl_conn *c, const char *fmt, ...)
{
	char b[CTL_LINE_MAX];
	va_list ap;
	int n;

	if (c->c_inline)
		ctl_line_end(c);
	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(b) - 2)
		n = (int)sizeof(b) - 2;
	b[n++] = '\n';
	out_add(c, b, (size_t)n);
	c->c_lines++;
}

void
ctl_produce(struct ctl_conn *c, ctl_fill_fn *fill, void *state,
    ctl_free_fn *free_fn)
{
	c->c_fill = fill;
	c->c_last = false;
	c->c_state = state;
	c->c_free = free_fn;
}

void
ctl_produce_last(struct ctl_conn *c, ctl_fill_fn *fill, void *state,
    ctl_free_fn *free_fn)
{
	ctl_produce(c, fill, state, free_fn);
	c->c_last = true;
}

void
ctl_hold(struct ctl_conn *c, ctl_ready_fn *ready, void *arg)
{
	c->c_ready = ready;
	c->c_ready_arg = arg;
}

/* ---- connections ---- */

static void
conn_finish(struct ctl_conn *c)
{
	char line[64];
	int n;

	/*
	 * An answer cut off (its buffer could not grow) gets no end line:
	 * the reader must not take what it got for all of it.
	 */
	if (c->c_done || c->c_failed)
		return;
	ctl_line_end(c);
	n = snprintf(line, sizeof(line), CTL_MAGIC " %d end %zu\n",
	    CTL_VERSION, c->c_lines);
	out_add(c, line, (size_t)n);
	c->c_done = true;
}

static void
conn_close(struct ctl_conn *c)
{
	struct ctl_srv *s = c->c_srv;
	struct ctl_conn **pp;

	for (pp = &s->s_conns; *pp != NULL; pp = &(*pp)->c_next)
		if (*pp == c) {
			*pp = c->c_next;
			break;
		}
	s->s_nconns--;
	ev_timer_cancel(s->s_loop, &c->c_timer);
	ev_fd_del(s->s_loop, c->c_fd);
	close(c->c_fd);
	if (c->c_free != NULL)
		c->c_free(c->c_state);
	free(c->c_out);
	free(c);
}

static void
conn_hold_timer(struct ev_loop *loop, void *arg)
{
	(void)loop;
	conn_flush(arg);
}

static void
conn_flush(struct ctl_conn *c)
{
	struct ev_loop *loop = c->c_srv->s_loop;
	ssize_t n;

	if (c->c_failed && !c->c_done) {
		conn_close(c);
		return;
	}
again:
	if (c->c_ready != NULL) {
		if (!c->c_ready(c->c_ready_arg)) {
			/*
			 * Watch nothing while the answer waits: nlmctl shut
			 * down its sending side, so the socket stays readable
			 * (or hung up, if nlmctl died) and would wake every
			 * turn until the commit is durable.
			 */
			if (ev_fd_set(loop, c->c_fd, 0) == -1)
				conn_close(c);
			else
				ev_timer_set(loop, &c->c_timer,
				    CTL_HOLD_POLL_MS, conn_hold_timer, c);
			return;
		}
		c->c_ready = NULL;
	}
	/* One piece of a producer per turn, and only once the last is out. */
	if (c->c_fill != NULL && ctl_pending(c) == 0) {
		/*
		 * The reader has taken everything: not stalled, even if the
		 * piece is empty (status --host walking a huge table where
		 * nothing matches).  Counted by bytes out only, sixteen such
		 * walks lost their places after 10 s to newcomers.
		 */
		c->c_progress = ev_now_ms();
		c->c_outlen = c->c_outoff = 0;
		if (!c->c_fill(c, c->c_state)) {
			c->c_fill = NULL;
			conn_finish(c);
		}
		/* The piece holds itself until ready (its commit). */
		if (c->c_ready != NULL)
			goto again;
	}
	while (c->c_outoff < c->c_outlen) {
		n = send(c->c_fd, c->c_out + c->c_outoff,
		    c->c_outlen - c->c_outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			c->c_outoff += (size_t)n;
			c->c_sent = true;
			c->c_progress = ev_now_ms();
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n == -1 && errno == EINTR)
			continue;
		conn_close(c);	/* the reader went away */
		return;
	}
	if (c->c_outoff == c->c_outlen && c->c_done) {
		conn_close(c);
		return;
	}
	/* More to write, or more to produce: when the socket takes it. */
	if (ev_fd_set(loop, c->c_fd, EV_WRITE) == -1)
		conn_close(c);
}

static void
conn_request(struct ctl_conn *c)
{
	struct ctl_cmd *cmd;
	struct ctl_req rq;
	char err[256], line[64];
	int n;

	c->c_answering = true;
	ev_timer_cancel(c->c_srv->s_loop, &c->c_timer);
	if (ctl_req_parse(c->c_in, &rq, err, sizeof(err)) == -1) {
		ctl_error(c, "%s", err);
		conn_flush(c);
		return;
	}
	for (cmd = c->c_srv->s_cmds; cmd != NULL; cmd = cmd->cc_next)
		if (strcmp(cmd->cc_name, rq.cr_cmd) == 0)
			break;
	if (cmd == NULL) {
		ctl_error(c, "unknown command '%s'", rq.cr_cmd);
		conn_flush(c);
		return;
	}
	if (ctl_req_check(&rq, cmd->cc_keys, cmd->cc_flags, err,
	    sizeof(err)) == -1) {
		ctl_error(c, "%s", err);
		conn_flush(c);
		return;
	}
	n = snprintf(line, sizeof(line), CTL_MAGIC " %d ok\n", CTL_VERSION);
	out_add(c, line, (size_t)n);
	cmd->cc_fn(c, &rq, cmd->cc_arg);
	if (c->c_fill == NULL)
		conn_finish(c);
	conn_flush(c);
}

static void
conn_io(struct ev_loop *loop, int fd, int events, void *arg)
{
	struct ctl_conn *c = arg;
	char *nl;
	ssize_t n;

	(void)loop;
	if (c->c_answering) {
		if (events & EV_WRITE)
			conn_flush(c);
		return;
	}
	n = recv(fd, c->c_in + c->c_inlen, CTL_REQ_MAX - c->c_inlen,
	    MSG_DONTWAIT);
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
		conn_close(c);
		return;
	}
	if (n < 0)
		return;
	c->c_inlen += (size_t)n;
	c->c_in[c->c_inlen] = '\0';
	if ((nl = memchr(c->c_in, '\n', c->c_inlen)) != NULL) {
		*nl = '\0';
		if (memchr(c->c_in, '\0', (size_t)(nl - c->c_in)) != NULL) {
			ctl_error(c, "request contains a NUL byte");
			c->c_answering = true;
			conn_flush(c);
			return;
		}
		conn_request(c);
		return;
	}
	if (c->c_inlen >= CTL_REQ_MAX) {
		c->c_answering = true;
		ctl_error(c, "request longer than %d bytes", CTL_REQ_MAX);
		conn_flush(c);
	}
}

static void
conn_timeout(struct ev_loop *loop, void *arg)
{
	(void)loop;
	conn_close(arg);
}

/* What peer_allowed() found. */
enum peer_verdict {
	PEER_ALLOWED,
	PEER_DENIED,
	PEER_UNKNOWN		/* its groups could not be read */
};

/*
 * Root, or the configured group, primary or supplementary, as the kernel
 * recorded them for the peer when it connected (SO_PEERCRED,
 * SO_PEERGROUPS): the groups the process really has, which decided
 * whether it could open the socket at all, and no look-up in the user
 * and group databases -- on a host with LDAP or NIS those could hold the
 * event loop, and they list memberships a process may not have (or
 * lack ones it was given, setgroups(), newgrp).  PEER_UNKNOWN, with the
 * errno in *errp, when its groups were needed and could not be read (no
 * memory for a long list, SO_PEERGROUPS failed): not a refusal, the
 * peer may well be a member -- unless the kernel has no SO_PEERGROUPS
 * (before 4.13): then only the primary group counts, as it always will.
 */
static enum peer_verdict
peer_allowed(const struct ctl_srv *s, int fd, const struct ctl_peer *p,
    int *errp)
{
	gid_t small[64], *groups = small;
	socklen_t len = sizeof(small);
	enum peer_verdict v = PEER_DENIED;
	size_t i;

	if (p->uid == 0)
		return PEER_ALLOWED;
	if (s->s_group < 0)
		return PEER_DENIED;
	if (p->gid == (gid_t)s->s_group)
		return PEER_ALLOWED;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == -1) {
		/* A kernel before 4.13: no supplementary groups, ever. */
		if (errno == ENOPROTOOPT)
			return PEER_DENIED;
		/* ERANGE: len says how much it takes (NGROUPS_MAX at most). */
		if (errno != ERANGE || (groups = malloc(len)) == NULL) {
			*errp = errno;
			return PEER_UNKNOWN;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups,
		    &len) == -1) {
			*errp = errno;
			free(groups);
			return PEER_UNKNOWN;
		}
	}
	for (i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == (gid_t)s->s_group)
			v = PEER_ALLOWED;
	if (groups != small)
		free(groups);
	return v;
}

static void
srv_resume(struct ev_loop *loop, void *arg)
{
	struct ctl_srv *s = arg;

	if (ev_fd_set(loop, s->s_fd, EV_READ) == -1)
		ev_timer_set(loop, &s->s_pause, CTL_ACCEPT_PAUSE_MS,
		    srv_resume, s);
}

/*
 * Out of descriptors or memory, as `why' says: accept4() found no
 * descriptor (EMFILE, ENFILE) or no memory (ENOBUFS, ENOMEM) -- the
 * connection stays in the backlog and the socket readable, so watching
 * it would wake every turn only to fail again -- or there was no memory
 * or epoll watch for the newcomer just accepted, which every client
 * behind it in the backlog would meet too, refused one a turn.  Leave the
 * socket alone for CTL_ACCEPT_PAUSE_MS; nlmctl waits in the backlog.
 */
static void
srv_pause(struct ctl_srv *s, const char *why)
{
	s->s_paused++;
	log_rl_warnx(&rl_accept, "control socket: %s; not accepting for %d "
	    "ms", why, CTL_ACCEPT_PAUSE_MS);
	if (ev_fd_set(s->s_loop, s->s_fd, 0) == -1)
		return;		/* still watched: it retries next turn */
	ev_timer_set(s->s_loop, &s->s_pause, CTL_ACCEPT_PAUSE_MS, srv_resume,
	    s);
}

/*
 * Has c stalled: its reader has taken nothing of its answer for
 * CTL_STALL_MS (nor has its producer been asked for a piece, which it
 * is once all before is taken), or it has sent no whole request for
 * CTL_REQ_STALL_MS (c_progress is then the time it was accepted)?
 */
static bool
conn_stalled(const struct ctl_conn *c, uint64_t now)
{
	if (!c->c_answering)
		return now - c->c_progress >= CTL_REQ_STALL_MS;
	return c->c_ready == NULL &&
	    (c->c_outoff < c->c_outlen || c->c_fill != NULL) &&
	    now - c->c_progress >= CTL_STALL_MS;
}

/*
 * All places taken: close the connection stalled longest, if any is.
 * True if one was.
 */
static bool
srv_evict(struct ctl_srv *s)
{
	struct ctl_conn *c, *v = NULL;
	uint64_t now = ev_now_ms();

	for (c = s->s_conns; c != NULL; c = c->c_next)
		if (conn_stalled(c, now) &&
		    (v == NULL || c->c_progress < v->c_progress))
			v = c;
	if (v == NULL)
		return false;
	log_rl_warnx(&rl_refused, "control socket: all %d places taken; "
	    "closing the connection of pid %d, which has %s for %llu ms",
	    CTL_MAX_CONNS, (int)v->c_peer.pid, v->c_answering ?
	    "taken nothing of its answer" : "sent no request",
	    (unsigned long long)(now - v->c_progress));
	conn_close(v);
	return true;
}

/*
 * An allowed newcomer that cannot be served (no place, no memory, not
 * watched by the loop): say why in an error line (a fresh socket takes a
 * line) rather than close it without a word, which nlmctl can only report
 * as an answer that never came.  `why': one line of printable ASCII.
 */
static void
srv_refuse(int fd, const char *why)
{
	char line[160];
	int n;

	n = snprintf(line, sizeof(line), CTL_MAGIC " %d error %s\n",
	    CTL_VERSION, why);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	(void)send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void
srv_busy(int fd)
{
	char why[96];

	snprintf(why, sizeof(why), "busy: all %d places taken by other "
	    "clients; try again", CTL_MAX_CONNS);
	srv_refuse(fd, why);
}

/*
 * The loop cannot watch a newcomer's connection c (ev_fd_add() failed
 * with err: its descriptor table could not grow, or epoll refused it):
 * logged, an allowed peer told why, c closed.  Out of memory or epoll
 * watches (ENOMEM; ENOSPC: fs.epoll.max_user_watches reached), accepting
 * pauses (srv_pause()).
 */
static void
conn_unwatched(struct ctl_conn *c, bool allowed, int err)
{
	struct ctl_srv *s = c->c_srv;
	char why[128];

	if (allowed) {
		snprintf(why, sizeof(why), "cannot take the connection (%s); "
		    "try again", strerror(err));
		srv_refuse(c->c_fd, why);
	}
	snprintf(why, sizeof(why), "cannot watch the connection of uid %u "
	    "(pid %d): %s; closed", (unsigned)c->c_peer.uid,
	    (int)c->c_peer.pid, strerror(err));
	conn_close(c);
	if (err == ENOMEM || err == ENOSPC)
		srv_pause(s, why);
	else
		log_rl_warnx(&rl_unwatched, "control socket: %s", why);
}

/*
 * Whether the newcomer p on fd may use the socket is unknown: its groups
 * could not be read (err; ENOMEM: as no memory for its state).  Logged,
 * and it is told why -- its uid and gid were read -- rather than
 * "permission denied", which a member of control-group would take for
 * final.  fd is left open.
 */
static void
srv_unknown(int fd, const struct ctl_peer *p, int err)
{
	char why[128];

	if (err == ENOMEM) {
		log_rl_warnx(&rl_nomem, "control socket: out of memory: "
		    "connection of uid %u (pid %d) closed", (unsigned)p->uid,
		    (int)p->pid);
		srv_refuse(fd, "out of memory; try again");
		return;
	}
	log_rl_warnx(&rl_cred, "control socket: cannot read the groups of "
	    "uid %u (pid %d) (SO_PEERGROUPS: %s); connection closed",
	    (unsigned)p->uid, (int)p->pid, strerror(err));
	snprintf(why, sizeof(why), "cannot read the groups of the connection "
	    "(%s); try again", strerror(err));
	srv_refuse(fd, why);
}

static void
srv_accept(struct ev_loop *loop, int fd, int events, void *arg)
{
	struct ctl_srv *s = arg;
	struct ctl_peer peer;
	struct ucred uc;
	socklen_t ul = sizeof(uc);
	struct ctl_conn *c;
	enum peer_verdict v;
	bool allowed;
	int cfd, err = 0;
	char why[96];

	(void)events;
	if ((cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) ==
	    -1) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			snprintf(why, sizeof(why), "accept: %s",
			    strerror(errno));
			srv_pause(s, why);
		}
		return;
	}
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) == -1) {
		/* Whether it may use the socket is unknown: no answer. */
		log_rl_warnx(&rl_cred, "control socket: cannot tell who "
		    "connected (SO_PEERCRED: %s); connection closed",
		    strerror(errno));
		close(cfd);
		return;
	}
	peer.pid = uc.pid;
	peer.uid = uc.uid;
	peer.gid = uc.gid;
	if ((v = peer_allowed(s, cfd, &peer, &err)) == PEER_UNKNOWN) {
		srv_unknown(cfd, &peer, err);
		close(cfd);
		return;
	}
	allowed = v == PEER_ALLOWED;
	/* Only a peer that may use the socket takes a stalled one's place. */
	if (s->s_nconns >= CTL_MAX_CONNS && (!allowed || !srv_evict(s))) {
		if (allowed)
			srv_busy(cfd);
		close(cfd);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		if (allowed)
			srv_refuse(cfd, "out of memory; try again");
		close(cfd);
		snprintf(why, sizeof(why), "out of memory: connection of uid "
		    "%u (pid %d) closed", (unsigned)uc.uid, (int)uc.pid);
		srv_pause(s, why);
		return;
	}
	c->c_srv = s;
	c->c_fd = cfd;
	c->c_peer = peer;
	c->c_progress = ev_now_ms();
	c->c_next = s->s_conns;
	s->s_conns = c;
	s->s_nconns++;
	if (ev_fd_add(loop, cfd, EV_READ, conn_io, c) == -1) {
		conn_unwatched(c, allowed, errno);
		return;
	}
	if (!allowed) {
		log_rl_warnx(&rl_refused,
		    "control socket: uid %u (pid %d) refused: not root%s",
		    (unsigned)uc.uid, (int)uc.pid, s->s_group >= 0 ?
		    " nor in control-group" : "");
		c->c_answering = true;
		ctl_error(c, "permission denied: only root%s may use nlmd's "
		    "control socket", s->s_group >= 0 ?
		    " and members of control-group" : "");
		conn_flush(c);
		return;
	}
	ev_timer_set(loop, &c->c_timer, CTL_REQ_TIMEOUT_MS, conn_timeout, c);
}

/*
 * Is the path taken: something other than a socket (never removed), a
 * socket another process still listens on (another nlmd, with another
 * state directory, whose lock does not keep this one away), or one we
 * cannot probe (another user's: EACCES)?  True, with the reason in err.
 * Before, the path was unlinked whatever it was: a second nlmd silently
 * took the first one's control socket.
 */
static bool
srv_path_taken(const struct sockaddr_un *sun, char *err, size_t errlen)
{
	struct stat sb;
	int fd, rc, e;

	if (lstat(sun->sun_path, &sb) == -1)
		return false;
	if (!S_ISSOCK(sb.st_mode)) {
		snprintf(err, errlen, "control socket %s: exists and is not a "
		    "socket; not removed", sun->sun_path);
		return true;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return false;
	rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	e = errno;
	close(fd);
	/* Nobody listens: left by a crash, replaced. */
	if (rc == -1 && (e == ECONNREFUSED || e == ENOENT))
		return false;
	/* A full backlog (EAGAIN) is a listener too. */
	if (rc == 0 || e == EAGAIN)
		snprintf(err, errlen, "control socket %s: another process "
		    "(another nlmd?) listens on it; set control-socket to "
		    "another path", sun->sun_path);
	else	/* EACCES: another user's socket, say; never taken over */
		snprintf(err, errlen, "control socket %s: cannot tell whether "
		    "another process listens on it (%s); not removed",
		    sun->sun_path, strerror(e));
	return true;
}

struct ctl_srv *
ctl_srv_new(struct ev_loop *loop, const char *path, long group, char *err,
    size_t errlen)
{
	struct sockaddr_un sun;
	struct ctl_srv *s;
	struct stat sb;
	char dir[sizeof(sun.sun_path)], *slash;
	mode_t mode = group >= 0 ? 0660 : 0600;
	int bound = -1;

	memset(&sun, 0, sizeof(sun));
	if (strlen(path) >= sizeof(sun.sun_path) || path[0] != '/') {
		snprintf(err, errlen, "control-socket %s: not an absolute path "
		    "of at most %zu bytes", path, sizeof(sun.sun_path) - 1);
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->s_loop = loop;
	s->s_group = group;
	snprintf(s->s_path, sizeof(s->s_path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
			snprintf(err, errlen, "control socket directory %s: %s",
			    dir, strerror(errno));
			free(s);
			return NULL;
		}
	}
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	if (srv_path_taken(&sun, err, errlen)) {
		free(s);
		return NULL;
	}
	s->s_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	/* A socket nobody listens on any more: left by a crash. */
	(void)unlink(path);
	/*
	 * Made with its mode (the umask around bind()), its group set
	 * without following a link: a chmod() and chown() by name after
	 * bind() follow one that another user put there meanwhile, in a
	 * directory that user may write.
	 */
	if (s->s_fd != -1) {
		mode_t omask = umask(0777 & ~mode);

		bound = bind(s->s_fd, (struct sockaddr *)&sun, sizeof(sun));
		(void)umask(omask);
	}
	if (s->s_fd == -1 || bound == -1 ||
	    (group >= 0 && lchown(path, (uid_t)-1, (gid_t)group) == -1) ||
	    listen(s->s_fd, 16) == -1 ||
	    ev_fd_add(loop, s->s_fd, EV_READ, srv_accept, s) == -1) {
		snprintf(err, errlen, "control socket %s: %s", path,
		    strerror(errno));
		if (s->s_fd != -1)
			close(s->s_fd);
		free(s);
		return NULL;
	}
	if (lstat(path, &sb) == 0) {
		s->s_dev = sb.st_dev;
		s->s_ino = sb.st_ino;
	}
	return s;
}

int
ctl_srv_command(struct ctl_srv *s, const char *name, const char *const *keys,
    const char *const *flags, ctl_cmd_fn *fn, void *arg)
{
	struct ctl_cmd *c;

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->cc_name = strdup(name)) == NULL) {
		free(c);
		return -1;
	}
	c->cc_keys = keys;
	c->cc_flags = flags;
	c->cc_fn = fn;
	c->cc_arg = arg;
	c->cc_next = s->s_cmds;
	s->s_cmds = c;
	return 0;
}

uint64_t
ctl_srv_accept_paused(const struct ctl_srv *s)
{
	return s != NULL ? s->s_paused : 0;
}

void
ctl_srv_free(struct ctl_srv *s)
{
	struct ctl_conn *c0, *next;
	struct ctl_cmd *c;
	struct stat sb;

	if (s == NULL)
		return;
	/*
	 * An answer held for a commit that the stop has made durable since
	 * (the daemon drains its last turns first) goes out if the socket
	 * takes it now: the release it reports did happen.  So does a held
	 * piece of one being produced (a release in pieces), with no piece
	 * after it: before, the lines of that committed piece were lost.
	 * The rest is cut off (no end line).
	 */
	for (c0 = s->s_conns; c0 != NULL; c0 = next) {
		next = c0->c_next;
		if (c0->c_ready != NULL && c0->c_ready(c0->c_ready_arg)) {
			/*
			 * The answer's last piece, after what is buffered
			 * (grace-end's line): before, the stop cut it off.
			 */
			if (c0->c_fill != NULL && c0->c_last &&
			    !c0->c_fill(c0, c0->c_state)) {
				c0->c_fill = NULL;
				conn_finish(c0);
			}
			c0->c_fill = NULL;	/* c_free frees its state */
			c0->c_ready = NULL;
			conn_flush(c0);		/* may close it */
		}
	}
	while (s->s_conns != NULL)
		conn_close(s->s_conns);
	while ((c = s->s_cmds) != NULL) {
		s->s_cmds = c->cc_next;
		free(c->cc_name);
		free(c);
	}
	ev_timer_cancel(s->s_loop, &s->s_pause);
	ev_fd_del(s->s_loop, s->s_fd);
	/*
	 * Ours only: a path removed and taken by another server since is
	 * that server's (unlinked before the close, so a server starting
	 * meanwhile finds it listened on, or gone).
	 */
	if (lstat(s->s_path, &sb) == 0 && sb.st_dev == s->s_dev &&
	    sb.st_ino == s->s_ino)
		(void)unlink(s->s_path);
	close(s->s_fd);
	free(s);
}
