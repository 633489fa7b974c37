/*
 * sdnotify.c - see sdnotify.h.
 *
 * Why not libsystemd's sd_notify(): the protocol is one sendto() of a
 * text datagram to an address taken from the environment, documented and
 * promised stable by systemd; linking libsystemd for it would add a
 * library (and its own dependencies) to a daemon that needs none of the
 * rest, and a build dependency on every machine.
 *
 * The socket is not connected: each message is sent to the address anew,
 * so a manager that re-executes itself (and re-creates its socket) still
 * hears us.  It is non-blocking: a full queue on the manager's side is
 * retried for at most NOTIFY_TRIES * NOTIFY_WAIT_MS, so the event loop is
 * never held for long by a manager that does not read.
 */
#include "sdnotify.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NOTIFY_TRIES	10
#define NOTIFY_WAIT_MS	10

struct sdnotify {
	int			sn_fd;
	struct sockaddr_un	sn_addr;
	socklen_t		sn_addrlen;
};

enum cm_status
sdnotify_open(struct sdnotify **out, char *err, size_t errlen)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sdnotify *n;
	size_t len;

	*out = NULL;
	if (path == NULL || path[0] == '\0')
		return CM_OK;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len < 2 ||
	    len > sizeof(n->sn_addr.sun_path)) {
		snprintf(err, errlen, "NOTIFY_SOCKET '%s' is neither an "
		    "absolute path nor an abstract name", path);
		return CM_INVALID;
	}
	/* A path needs its terminating NUL in sun_path. */
	if (path[0] == '/' && len == sizeof(n->sn_addr.sun_path)) {
		snprintf(err, errlen, "NOTIFY_SOCKET '%s' is too long", path);
		return CM_INVALID;
	}
	if ((n = calloc(1, sizeof(*n))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return CM_NOMEM;
	}
	n->sn_addr.sun_family = AF_UNIX;
	memcpy(n->sn_addr.sun_path, path, len);
	if (path[0] == '@') {
		/* Abstract: a leading NUL, and no terminating one. */
		n->sn_addr.sun_path[0] = '\0';
		n->sn_addrlen = (socklen_t)(offsetof(struct sockaddr_un,
		    sun_path) + len);
	} else
		n->sn_addrlen = (socklen_t)(offsetof(struct sockaddr_un,
		    sun_path) + len + 1);
	n->sn_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	if (n->sn_fd == -1) {
		snprintf(err, errlen, "socket for NOTIFY_SOCKET: %s",
		    strerror(errno));
		free(n);
		return cm_status_of_errno(errno);
	}
	*out = n;
	return CM_OK;
}

enum cm_status
sdnotify_send(struct sdnotify *n, const char *msg)
{
	struct timespec wait = { 0, NOTIFY_WAIT_MS * 1000000L };
	size_t len = strlen(msg);
	int i;

	if (n == NULL)
		return CM_OK;
	for (i = 0; i < NOTIFY_TRIES; i++) {
		ssize_t r = sendto(n->sn_fd, msg, len, MSG_NOSIGNAL,
		    (const struct sockaddr *)&n->sn_addr, n->sn_addrlen);

		if (r == (ssize_t)len)
			return CM_OK;
		if (r >= 0) {
			errno = EMSGSIZE;
			return CM_SYSTEM;
		}
		if (errno != EAGAIN && errno != EINTR)
			return cm_status_of_errno(errno);
		nanosleep(&wait, NULL);
	}
	errno = EAGAIN;
	return CM_BUSY;
}

enum cm_status
sdnotify_sendf(struct sdnotify *n, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (n == NULL)
		return CM_OK;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return sdnotify_send(n, msg);
}

uint64_t
sdnotify_watchdog_usec(void)
{
	const char *us = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	unsigned long long v;
	char *end;

	if (us == NULL || us[0] < '0' || us[0] > '9')
		return 0;
	errno = 0;
	v = strtoull(us, &end, 10);
	if (*end != '\0' || errno != 0 || v == 0)
		return 0;
	if (pid != NULL && pid[0] != '\0') {
		long p;

		errno = 0;
		p = strtol(pid, &end, 10);
		if (*end != '\0' || errno != 0 || p != (long)getpid())
			return 0;
	}
	return (uint64_t)v;
}

void
sdnotify_free(struct sdnotify *n)
{
	if (n == NULL)
		return;
	close(n->sn_fd);
	free(n);
}
