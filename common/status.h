/*
 * status.h - what went wrong in common/: one status for every function
 * here that can fail, as lockcore has enum lk_status, rpc/ enum
 * onc_status and db/ enum store_status.  Functions that take err[errlen]
 * still write the particulars there (which file, which line, which
 * value); the status says the kind, for the caller to act on, and
 * cm_strerror() names it.  The event loop (ev.h) is the exception: it
 * returns -1 with errno, being a thin layer over epoll and timerfd.
 */
#ifndef NLMD_COMMON_STATUS_H
#define NLMD_COMMON_STATUS_H

enum cm_status {
	CM_OK = 0,
	CM_INVALID,	/* a bad value, name or syntax */
	CM_NOTFOUND,	/* no such file, user or setting */
	CM_BUSY,	/* held by another process (the state directory) */
	CM_DENIED,	/* not permitted, or root could be regained */
	CM_NOMEM,	/* out of memory */
	CM_SYSTEM	/* a system call failed (errno, in err[], says why) */
};

/* "invalid", "not found", ...: a constant string, never NULL. */
const char	*cm_strerror(enum cm_status);
/* The status for a failed system call's errno e. */
enum cm_status	 cm_status_of_errno(int e);

#endif
