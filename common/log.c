/*
 * log.c - see log.h.
 */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

static const char *log_ident = "nlmd";
static int log_foreground = 1;
static int log_verbose;

void
log_init(const char *ident, int foreground, int verbose)
{
	log_ident = ident;
	log_foreground = foreground;
	log_verbose = verbose;
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

int
log_getverbose(void)
{
	return log_verbose;
}

static void
vlog(int pri, const char *fmt, va_list ap, const char *err)
{
	char msg[1024];
	struct timespec ts;
	struct tm tm;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!log_foreground) {
		if (err != NULL)
			syslog(pri, "%s: %s", msg, err);
		else
			syslog(pri, "%s", msg);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	fprintf(stderr, "%02d:%02d:%02d.%03ld %s: %s%s%s\n", tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, log_ident, msg,
	    err != NULL ? ": " : "", err != NULL ? err : "");
}

#define LOG_BODY(pri, err)			\
	do {					\
		va_list ap;			\
		va_start(ap, fmt);		\
		vlog((pri), fmt, ap, (err));	\
		va_end(ap);			\
	} while (0)

void
log_warn(const char *fmt, ...)
{
	const char *err = strerror(errno);

	LOG_BODY(LOG_WARNING, err);
}

void
log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_WARNING, NULL);
}

void
log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_INFO, NULL);
}

void
log_debug(const char *fmt, ...)
{
	if (log_verbose <= 0)
		return;
	LOG_BODY(LOG_DEBUG, NULL);
}

void
fatal(const char *fmt, ...)
{
	const char *err = strerror(errno);

	LOG_BODY(LOG_CRIT, err);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_CRIT, NULL);
	exit(1);
}

/* ---- rate-limited messages ---- */

static unsigned long long (*rl_clock)(void);

void
log_rl_set_clock(unsigned long long (*clock)(void))
{
	rl_clock = clock;
}

static unsigned long long
rl_now(void)
{
	struct timespec ts;

	if (rl_clock != NULL)
		return rl_clock();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 +
	    (unsigned long long)ts.tv_nsec / 1000000;
}

/* Limiters with drops not reported yet (the loop's thread only). */
static struct log_rl *rl_list;

/* Say how many lines rl's window dropped, and start a new window. */
static void
rl_report(struct log_rl *rl, unsigned long long now)
{
	char what[64];

	if (rl->rl_dropped > 0) {
		/* Name the message by the start of its format. */
		snprintf(what, sizeof(what), "%s", rl->rl_fmt);
		if (log_foreground)
			fprintf(stderr, "%s: %lu more message(s) like "
			    "\"%s...\" dropped (over %d in %d s)\n",
			    log_ident, rl->rl_dropped, what,
			    LOG_RL_BURST, LOG_RL_WINDOW_MS / 1000);
		else
			syslog(rl->rl_pri, "%lu more message(s) like \"%s...\" "
			    "dropped (over %d in %d s)", rl->rl_dropped,
			    what, LOG_RL_BURST, LOG_RL_WINDOW_MS / 1000);
	}
	rl->rl_start_ms = now;
	rl->rl_count = 0;
	rl->rl_dropped = 0;
}

/* May this line go out?  Reports what the last window dropped. */
static int
rl_pass(struct log_rl *rl, int pri, const char *fmt)
{
	unsigned long long now = rl_now();

	if (rl->rl_count == 0 || now - rl->rl_start_ms >= LOG_RL_WINDOW_MS)
		rl_report(rl, now);
	if (rl->rl_count >= LOG_RL_BURST) {
		if (rl->rl_dropped++ == 0) {
			rl->rl_fmt = fmt;
			rl->rl_pri = pri;
			if (!rl->rl_listed) {
				rl->rl_listed = 1;
				rl->rl_next = rl_list;
				rl_list = rl;
			}
		}
		return 0;
	}
	rl->rl_count++;
	return 1;
}

void
log_rl_flush(void)
{
	unsigned long long now = rl_now();
	struct log_rl **pp = &rl_list, *rl;

	while ((rl = *pp) != NULL) {
		if (rl->rl_dropped > 0 &&
		    now - rl->rl_start_ms < LOG_RL_WINDOW_MS) {
			pp = &rl->rl_next;	/* its window goes on */
			continue;
		}
		/*
		 * The window is over: report; the next line opens a new
		 * window (rl_count 0), and nothing is reported twice.
		 */
		rl_report(rl, now);
		*pp = rl->rl_next;
		rl->rl_next = NULL;
		rl->rl_listed = 0;
	}
}

void
log_rl_warnx(struct log_rl *rl, const char *fmt, ...)
{
	if (!rl_pass(rl, LOG_WARNING, fmt))
		return;
	LOG_BODY(LOG_WARNING, NULL);
}

void
log_rl_info(struct log_rl *rl, const char *fmt, ...)
{
	if (!rl_pass(rl, LOG_INFO, fmt))
		return;
	LOG_BODY(LOG_INFO, NULL);
}
