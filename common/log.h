/*
 * log.h - logging with the OpenBSD vocabulary.
 *
 * Messages go to stderr when running in the foreground (systemd/journald
 * or a terminal) and to syslog(LOG_DAEMON) otherwise.  Never call these
 * from a signal handler.  Remote peers' strings are passed as arguments,
 * never as the format.
 */
#ifndef NLMD_COMMON_LOG_H
#define NLMD_COMMON_LOG_H

#include <stdarg.h>

/*
 * Start logging as `ident'.  `foreground' non-zero logs to stderr,
 * otherwise to syslog.  `verbose' > 0 enables log_debug().
 */
void	log_init(const char *ident, int foreground, int verbose);

/* Change the debug level at run time (SIGHUP reload). */
void	log_setverbose(int verbose);
int	log_getverbose(void);

/* Warning followed by ": strerror(errno)". */
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Warning without errno. */
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Log (with / without errno) and exit(1). */
void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
