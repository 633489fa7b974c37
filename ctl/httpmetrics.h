/*
 * httpmetrics.h - the Prometheus endpoint: GET /metrics over HTTP on a
 * configured address (metrics-address), served by libmicrohttpd without
 * a thread of its own: its epoll descriptor and its timeout are driven by
 * nlmd's event loop.  Anything but GET /metrics gets 404 (405 for other
 * methods); at most 16 connections, 4 from one address, 10 s idle
 * timeout.
 */
#ifndef NLMD_CTL_HTTPMETRICS_H
#define NLMD_CTL_HTTPMETRICS_H

#include <stddef.h>

struct ev_loop;
struct sbuf;
struct http_metrics;

/* Append the whole exposition to `sb'. */
typedef void	http_metrics_fn(struct sbuf *sb, void *arg);

/*
 * Listen on `addr' ("IPv4:PORT", "[IPv6]:PORT" or ":PORT" for all
 * addresses).  NULL with a reason in err[errlen].
 */
struct http_metrics *http_metrics_new(struct ev_loop *, const char *addr,
		    http_metrics_fn *fn, void *arg, char *err, size_t errlen);
/* The port listened on (useful with port 0). */
/* Is addr ADDRESS:PORT as http_metrics_new() takes it?  0, or -1 (err). */
int		 http_metrics_check(const char *addr, char *err, size_t errlen);
unsigned	 http_metrics_port(const struct http_metrics *);
void		 http_metrics_free(struct http_metrics *);

#endif
