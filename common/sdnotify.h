/*
 * sdnotify.h - telling the service manager (systemd) how the daemon is
 * doing: the sd_notify(3) protocol, implemented here without libsystemd.
 *
 * PROTOCOL (sd_notify(3), systemd's "interface portability and stability"
 * promise covers it).  The manager passes $NOTIFY_SOCKET: the path of an
 * AF_UNIX datagram socket, or "@name" for a name in the abstract
 * namespace.  Each message is one datagram of newline-separated
 * VARIABLE=VALUE assignments: READY=1 (startup finished), STATUS=text
 * (free-form, shown by `systemctl status'), STOPPING=1 (shutdown began),
 * WATCHDOG=1 (keep-alive ping).  The manager identifies the sender by the
 * credentials the kernel attaches (SO_PASSCRED on its side).  When it asks
 * for keep-alive pings it sets $WATCHDOG_USEC (the interval after which it
 * declares the service hung) and $WATCHDOG_PID (the process meant).
 *
 * Without $NOTIFY_SOCKET there is no manager to tell: sdnotify_open()
 * returns NULL and every other function is a no-op on NULL.
 */
#ifndef NLMD_COMMON_SDNOTIFY_H
#define NLMD_COMMON_SDNOTIFY_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

struct sdnotify;

/*
 * Read $NOTIFY_SOCKET and make a socket to send to it.  CM_OK with *out
 * set (NULL when the variable is unset or empty: not under a manager), or
 * with a reason in err[errlen] and *out NULL: CM_INVALID (a malformed
 * address), CM_NOMEM, or the socket's failure.  The caller owns *out
 * (sdnotify_free()).
 */
enum cm_status sdnotify_open(struct sdnotify **out, char *err, size_t errlen);

/*
 * Send `msg' (assignments separated by '\n') as one datagram.  Never
 * blocks for long: when the manager's queue is full it retries for at most
 * about 100 ms, then gives up.  CM_OK, or (the message was not delivered,
 * errno set) CM_BUSY when the queue stayed full, another status for a
 * failed send.  CM_OK and a no-op when `n' is NULL.
 */
enum cm_status sdnotify_send(struct sdnotify *n, const char *msg);

/* sdnotify_send() of a formatted message (truncated at 1024 bytes). */
enum cm_status sdnotify_sendf(struct sdnotify *n, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/*
 * The watchdog interval the manager asked for, in microseconds: the value
 * of $WATCHDOG_USEC when it is a positive number and $WATCHDOG_PID is
 * unset or our pid; 0 otherwise (no pings wanted).
 */
uint64_t sdnotify_watchdog_usec(void);

/* Close and free; safe on NULL. */
void	sdnotify_free(struct sdnotify *n);

#endif
