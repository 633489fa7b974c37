/*
 * ctlsrv.h - nlmd's side of the control socket (protocol: ctl.h).
 *
 * A Unix stream socket served by the event loop.  Only root, or members
 * of one configured group, may connect (peer credentials); the socket is
 * mode 0600 (0660 with a group).  A client sends one request line; the
 * command registered for its name answers with body lines, which are
 * produced in pieces -- a producer is called again only when what it
 * produced before has been written -- so a large dump never holds the
 * loop for long, and a slow reader only slows itself.
 */
#ifndef NLMD_CTL_CTLSRV_H
#define NLMD_CTL_CTLSRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl.h"

struct ev_loop;
struct ctl_srv;
struct ctl_conn;

/* Who is asking (from SO_PEERCRED). */
struct ctl_peer {
	pid_t	pid;
	uid_t	uid;
	gid_t	gid;
};

/*
 * A command: answer through the ctl_* calls below, at once or by
 * installing a producer.  Returning without either ends the answer with
 * no body.
 */
typedef void	ctl_cmd_fn(struct ctl_conn *, const struct ctl_req *, void *arg);
/*
 * Produce the next piece of body lines; return true when there is more,
 * false when done.  Called again once the piece has been written.  A
 * piece that calls ctl_hold() is written once the hold is over (a piece
 * of a release: once its commit is durable).
 */
typedef bool	ctl_fill_fn(struct ctl_conn *, void *state);
typedef void	ctl_free_fn(void *state);
/* Output is held until this says true (polled). */
typedef bool	ctl_ready_fn(void *arg);

/*
 * Listen on `path' (a stale socket there is replaced; the directory is
 * created, mode 0755).  `group' < 0: root only.  NULL with a reason in
 * err[errlen] on failure.
 */
struct ctl_srv	*ctl_srv_new(struct ev_loop *, const char *path, long group,
		    char *err, size_t errlen);
/*
 * Close every connection, remove the socket, free.  NULL ok.  A held answer
 * whose hold is over by now is sent first, as far as its socket takes it.
 */
void		 ctl_srv_free(struct ctl_srv *);
/*
 * Register a command and the arguments it takes: `keys' (NULL-terminated;
 * NULL: none at all) and, among them, the `flags', given "0" or "1"
 * (NULL-terminated, or NULL).  The server refuses a request with any
 * other argument, or a flag with another value, before the command runs
 * (ctl_req_check()): a typo ("dryrun=1") or "dry-run=yes" must not be a
 * real release.  The two lists are kept, not copied (static arrays).  0,
 * or -1 when out of memory.
 */
int		 ctl_srv_command(struct ctl_srv *, const char *name,
		    const char *const *keys, const char *const *flags,
		    ctl_cmd_fn *, void *arg);
/*
 * Times accepting paused for want of a descriptor, memory or an epoll
 * watch (at accept, or for the connection just accepted).  NULL: 0.
 */
uint64_t	 ctl_srv_accept_paused(const struct ctl_srv *);

/* ---- for commands ---- */
const struct ctl_peer *ctl_peer(const struct ctl_conn *);
/* Refuse the request (only before any body line): the error line. */
void		 ctl_error(struct ctl_conn *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
/* A body line: ctl_line(kind), then fields, then ctl_line_end(). */
void		 ctl_line(struct ctl_conn *, const char *kind);
void		 ctl_kv(struct ctl_conn *, const char *key, const char *val);
void		 ctl_kv_bytes(struct ctl_conn *, const char *key,
		    const void *val, size_t len);
void		 ctl_kv_u64(struct ctl_conn *, const char *key, uint64_t v);
void		 ctl_kv_i64(struct ctl_conn *, const char *key, int64_t v);
void		 ctl_kv_hex(struct ctl_conn *, const char *key,
		    const void *p, size_t len);
void		 ctl_line_end(struct ctl_conn *);
/* A body line as it is (printf; metrics text).  No TAB or newline. */
void		 ctl_raw(struct ctl_conn *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
/* Bytes buffered and not yet written (a producer's budget). */
size_t		 ctl_pending(const struct ctl_conn *);
/* Continue the answer with `fill' (state freed by `free_fn', may be NULL). */
void		 ctl_produce(struct ctl_conn *, ctl_fill_fn *fill, void *state,
		    ctl_free_fn *free_fn);
/*
 * ctl_produce() for a producer whose next piece is the answer's last,
 * written once a hold is over (grace-end's one line): at a stop
 * (ctl_srv_free()) it is still called if its hold is over by then, where
 * the next piece of another producer is not (it would release more).
 */
void		 ctl_produce_last(struct ctl_conn *, ctl_fill_fn *fill,
		    void *state, ctl_free_fn *free_fn);
/* Hold the whole answer until ready(arg) (e.g. a commit is durable). */
void		 ctl_hold(struct ctl_conn *, ctl_ready_fn *ready, void *arg);

#endif
