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
/*
 * RATE-LIMITED LOGGING for everything a remote peer can trigger: each
 * limiter (one per message site, static, zero-initialised) lets
 * LOG_RL_BURST lines through per LOG_RL_WINDOW_MS, drops the rest, and
 * when a window with drops is over says how many it dropped.  A flood of
 * bad requests then costs a few lines, never a loop blocked on the log.
 */
#define LOG_RL_BURST		10
#define LOG_RL_WINDOW_MS	10000

struct log_rl {
	unsigned long long	 rl_start_ms;
	unsigned		 rl_count;
	unsigned long		 rl_dropped;
	/* While it has drops to report: on log_rl_flush()'s list. */
	struct log_rl		*rl_next;
	const char		*rl_fmt;
	int			 rl_pri;
	int			 rl_listed;
};

void	log_rl_warnx(struct log_rl *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	log_rl_info(struct log_rl *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/*
 * Report what every limiter whose window is over dropped: called by the
 * event loop every few seconds, so that a flood that stops is reported
 * then, not at the next line of its kind.
 */
void	log_rl_flush(void);
/* Replace the limiter's clock, milliseconds (tests); NULL: monotonic. */
void	log_rl_set_clock(unsigned long long (*clock)(void));

/* Log (with / without errno) and exit(1). */
void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
