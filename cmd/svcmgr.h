/*
 * svcmgr.h - what nlmd tells its service manager (systemd, Type=notify):
 * READY=1 once the listeners are open and registered, a STATUS= line that
 * follows the grace period ("grace: N locks, M shares to reclaim ...",
 * then "serving, epoch E"), STOPPING=1 at shutdown, and WATCHDOG=1 pings
 * from a timer of the event loop when the manager asks for them
 * (WatchdogSec=).
 *
 * Without a manager ($NOTIFY_SOCKET unset) svcmgr_new() returns NULL and
 * every other function is a no-op on NULL: nlmd behaves as it always did.
 */
#ifndef NLMD_CMD_SVCMGR_H
#define NLMD_CMD_SVCMGR_H

#include <stdint.h>

struct ev_loop;
struct svcmgr;

/*
 * Find the manager's socket.  Returns NULL when there is none (or it is
 * unusable: logged as a warning).  The caller owns the result.
 */
struct svcmgr	*svcmgr_new(struct ev_loop *loop);

/*
 * Startup is finished: send READY=1 with the first
 * STATUS, and arm the grace-progress and watchdog timers.
 */
void	svcmgr_ready(struct svcmgr *m);

/*
 * The end of a turn (call from the before-sleep hook, after the NLM
 * service's own end of turn): if the grace period ended since the last
 * STATUS, say so now.  Cheap: two loads and a compare otherwise.
 */
void	svcmgr_turn(struct svcmgr *m);

/* Shutdown began: STOPPING=1; the timers stop. */
void	svcmgr_stopping(struct svcmgr *m);

/* Disarm the timers and free; safe on NULL. */
void	svcmgr_free(struct svcmgr *m);

#endif
