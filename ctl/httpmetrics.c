/*
 * httpmetrics.c - see httpmetrics.h.
 *
 * libmicrohttpd (Debian libmicrohttpd-dev) runs in its "external epoll"
 * mode (MHD_USE_EPOLL without an internal thread): it keeps its sockets in
 * an epoll set of its own, whose descriptor we watch; whenever that is
 * readable, and when the timeout libmicrohttpd asks for expires, the loop
 * calls MHD_run(), which does what is ready and never waits.
 */
#include "httpmetrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "ev.h"
#include "netaddr.h"
#include "sbuf.h"

/*
 * Connections at once, and from one address: one peer holding every place
 * (16 connections left open, each closed by the idle timeout and opened
 * again) kept the scraper out for as long as it liked.
 */
#define HM_MAX_CONNS		16
#define HM_MAX_PER_ADDR		4

struct http_metrics {
	struct ev_loop		*hm_loop;
	struct MHD_Daemon	*hm_mhd;
	int			 hm_epfd;
	unsigned		 hm_port;
	http_metrics_fn		*hm_fn;
	void			*hm_arg;
	struct ev_timer		 hm_timer;
};

static void	hm_run(struct http_metrics *);

static void
hm_timer_cb(struct ev_loop *loop, void *arg)
{
	(void)loop;
	hm_run(arg);
}

static void
hm_ready(struct ev_loop *loop, int fd, int events, void *arg)
{
	(void)loop;
	(void)fd;
	(void)events;
	hm_run(arg);
}

/* Connections open now. */
static unsigned
hm_conns(const struct http_metrics *hm)
{
	const union MHD_DaemonInfo *di;

	di = MHD_get_daemon_info(hm->hm_mhd,
	    MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return di != NULL ? di->num_connections : 0;
}

/*
 * Do what is ready, then wait for the timeout libmicrohttpd wants.
 *
 * A run that starts at the connection limit takes the listener out of
 * libmicrohttpd's epoll set; only a run that starts below it puts the
 * listener back.  A place given back during a run that started full
 * waited for the next event or idle timeout (up to 10 s), and the
 * scraper in the backlog with it: such a run is followed by another one
 * at once.
 */
static void
hm_run(struct http_metrics *hm)
{
	MHD_UNSIGNED_LONG_LONG to;
	bool full;

	full = hm_conns(hm) >= HM_MAX_CONNS;
	(void)MHD_run(hm->hm_mhd);
	if (full && hm_conns(hm) < HM_MAX_CONNS)
		ev_timer_set(hm->hm_loop, &hm->hm_timer, 0, hm_timer_cb, hm);
	else if (MHD_get_timeout(hm->hm_mhd, &to) == MHD_YES)
		ev_timer_set(hm->hm_loop, &hm->hm_timer, to, hm_timer_cb, hm);
	else
		ev_timer_cancel(hm->hm_loop, &hm->hm_timer);
}

static enum MHD_Result
hm_plain(struct MHD_Connection *conn, unsigned status, const char *text)
{
	struct MHD_Response *r;
	enum MHD_Result rc;

	r = MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)
	    text, MHD_RESPMEM_PERSISTENT);
	if (r == NULL)
		return MHD_NO;
	/* RFC 9110, 15.5.6: a 405 must name the methods that are allowed. */
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		(void)MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW,
		    "GET, HEAD");
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result
hm_request(void *arg, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *data,
    size_t *datalen, void **state)
{
	struct http_metrics *hm = arg;
	struct MHD_Response *r;
	struct sbuf sb;
	enum MHD_Result rc;

	(void)version;
	(void)data;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return hm_plain(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
		    "only GET /metrics\n");
	/*
	 * The first call has the headers only: an answer queued there is
	 * "early" to libmicrohttpd, which then closes the connection after
	 * it (the rest of the request was not read), and a scraper opened a
	 * connection for every scrape.  GET and HEAD are answered at the
	 * last call, their connection kept; a body, if one comes, is read
	 * and dropped.  (405 stays early: its connection closes.)
	 */
	if (*state == NULL) {
		*state = hm;
		return MHD_YES;
	}
	if (*datalen != 0) {
		*datalen = 0;
		return MHD_YES;
	}
	if (strcmp(url, "/metrics") != 0)
		return hm_plain(conn, MHD_HTTP_NOT_FOUND,
		    "nothing here; see /metrics\n");
	memset(&sb, 0, sizeof(sb));
	hm->hm_fn(&sb, hm->hm_arg);
	if (sb.sb_failed || sb.sb_buf == NULL) {
		sbuf_free(&sb);
		return hm_plain(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "out of memory\n");
	}
	/* libmicrohttpd frees the text with the response. */
	r = MHD_create_response_from_buffer(sb.sb_len, sb.sb_buf,
	    MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		sbuf_free(&sb);
		return MHD_NO;
	}
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "text/plain; version=0.0.4; charset=utf-8");
	rc = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

/* "1.2.3.4:80", "[::1]:80", ":80" -> a socket address. */
static int
hm_parse(const char *s, struct sockaddr_storage *ss, char *err, size_t errlen)
{
	if (addr_parse_port(s, ss) == 0)
		return 0;
	snprintf(err, errlen, "metrics-address %s: not ADDRESS:PORT", s);
	return -1;
}

int
http_metrics_check(const char *addr, char *err, size_t errlen)
{
	struct sockaddr_storage ss;

	return hm_parse(addr, &ss, err, errlen);
}

static struct MHD_Daemon *
hm_start(struct http_metrics *hm, const struct sockaddr_storage *ss,
    uint16_t port, bool dual)
{
	return MHD_start_daemon(MHD_USE_EPOLL | (dual ? MHD_USE_DUAL_STACK :
	    ss->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0), port, NULL, NULL,
	    hm_request, hm,
	    MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)ss,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)HM_MAX_CONNS,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HM_MAX_PER_ADDR,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
	    MHD_OPTION_END);
}

/*
 * No IPv6 on this host (a kernel without it): the only reason ":PORT"
 * falls back to IPv4 -- not IPv6's port taken by another process.
 */
static bool
hm_no_ipv6(void)
{
	int fd;

	if ((fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return errno == EAFNOSUPPORT;
	close(fd);
	return false;
}

struct http_metrics *
http_metrics_new(struct ev_loop *loop, const char *addr, http_metrics_fn *fn,
    void *arg, char *err, size_t errlen)
{
	const union MHD_DaemonInfo *di;
	struct sockaddr_storage ss;
	struct http_metrics *hm;
	uint16_t port;
	bool any;

	if (hm_parse(addr, &ss, err, errlen) == -1)
		return NULL;
	if ((hm = calloc(1, sizeof(*hm))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	hm->hm_loop = loop;
	hm->hm_fn = fn;
	hm->hm_arg = arg;
	port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->
	    sin_port : ((struct sockaddr_in6 *)&ss)->sin6_port);
	/* ":PORT" only: an explicit "[::]:PORT" stays IPv6's, as before. */
	any = addr[0] == ':';
	hm->hm_mhd = hm_start(hm, &ss, port, any);
	if (hm->hm_mhd == NULL && any && hm_no_ipv6()) {
		/* No IPv6 on this host: every IPv4 address then. */
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		memset(&ss, 0, sizeof(ss));
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		hm->hm_mhd = hm_start(hm, &ss, port, false);
	}
	if (hm->hm_mhd == NULL) {
		snprintf(err, errlen, "metrics-address %s: cannot listen "
		    "(in use, or not an address of this host)", addr);
		free(hm);
		return NULL;
	}
	if ((di = MHD_get_daemon_info(hm->hm_mhd,
	    MHD_DAEMON_INFO_EPOLL_FD)) == NULL ||
	    ev_fd_add(loop, (hm->hm_epfd = di->epoll_fd), EV_READ, hm_ready,
	    hm) == -1) {
		snprintf(err, errlen, "metrics-address %s: event loop", addr);
		MHD_stop_daemon(hm->hm_mhd);
		free(hm);
		return NULL;
	}
	if ((di = MHD_get_daemon_info(hm->hm_mhd,
	    MHD_DAEMON_INFO_BIND_PORT)) != NULL)
		hm->hm_port = di->port;
	return hm;
}

unsigned
http_metrics_port(const struct http_metrics *hm)
{
	return hm->hm_port;
}

void
http_metrics_free(struct http_metrics *hm)
{
	if (hm == NULL)
		return;
	ev_timer_cancel(hm->hm_loop, &hm->hm_timer);
	ev_fd_del(hm->hm_loop, hm->hm_epfd);
	MHD_stop_daemon(hm->hm_mhd);
	free(hm);
}
