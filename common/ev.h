/*
 * ev.h - the single-threaded event loop (epoll), in the style of Redis ae.
 *
 * File descriptors get a callback for readiness; timers are structures the
 * caller embeds in its own objects (arming cannot fail; cancel in
 * O(log n)); a before-sleep hook runs once per turn, after all ready
 * callbacks and expired timers, before the loop waits again.  That hook
 * is where work batched during a turn is finished (one commit, then all
 * replies).
 *
 * Time comes from ev_now_ms(), a monotonic millisecond clock that tests
 * can replace through ev_set_clock().
 */
#ifndef NLMD_COMMON_EV_H
#define NLMD_COMMON_EV_H

#include <stddef.h>
#include <stdint.h>

#define EV_READ		0x1
#define EV_WRITE	0x2

struct ev_loop;

/* Called with the events that are ready (EV_READ, EV_WRITE). */
typedef void	ev_fd_cb(struct ev_loop *, int fd, int events, void *arg);
typedef void	ev_timer_cb(struct ev_loop *, void *arg);
typedef void	ev_hook_cb(struct ev_loop *, void *arg);

/* A timer embedded in the caller's object.  Zero-initialise before use. */
struct ev_timer {
	uint64_t	 et_when;	/* expiry, ev_now_ms() scale */
	uint64_t	 et_seq;	/* when armed: equal expiries in order */
	size_t		 et_idx;	/* heap slot + 1; 0 when not armed */
	struct ev_timer	*et_onext;	/* when the heap could not grow */
	struct ev_timer	*et_oprev;
	ev_timer_cb	*et_cb;
	void		*et_arg;
};

/* Create a loop.  Returns NULL (errno set) on failure. */
struct ev_loop	*ev_loop_new(void);
/* Free a loop; safe on NULL.  Does not close registered descriptors. */
void		 ev_loop_free(struct ev_loop *);

/*
 * Watch `fd' for `events'.  Replaces an earlier registration of the same
 * fd.  Returns 0, or -1 (errno set, logged by caller): no events or a
 * negative fd (EINVAL), the loop's table could not grow for fd (ENOMEM),
 * or epoll refused (its errno: ENOMEM, ENOSPC at
 * fs.epoll.max_user_watches, ...).
 */
int	ev_fd_add(struct ev_loop *, int fd, int events, ev_fd_cb *, void *arg);
/*
 * Change the events watched for a registered fd.  0 watches nothing for
 * now (not even a hang-up or an error) until a later ev_fd_set() with
 * events; the callback and its argument stay.  0, or -1 when fd is not
 * registered (EINVAL) or epoll refused (errno set).
 */
int	ev_fd_set(struct ev_loop *, int fd, int events);
/* Stop watching fd (call before close()).  Safe if fd is not watched. */
void	ev_fd_del(struct ev_loop *, int fd);

/*
 * Arm `t' to call cb(loop, arg) once, `delay_ms' from now.  Re-arming an
 * armed timer moves it.  Allocates nothing and cannot fail.
 */
void	ev_timer_set(struct ev_loop *, struct ev_timer *t, uint64_t delay_ms,
	    ev_timer_cb *cb, void *arg);
/* Disarm; safe on a timer that is not armed. */
void	ev_timer_cancel(struct ev_loop *, struct ev_timer *t);
/* Non-zero while armed. */
int	ev_timer_armed(const struct ev_timer *t);

/* Run `cb' before every wait (one hook per loop; NULL removes it). */
void	ev_set_beforesleep(struct ev_loop *, ev_hook_cb *cb, void *arg);

/* Run until ev_stop().  Returns 0, or -1 if epoll_wait failed. */
int	ev_run(struct ev_loop *);
/* Make ev_run() return after the current turn. */
void	ev_stop(struct ev_loop *);
/* Run one turn, waiting at most timeout_ms (-1: until something happens). */
int	ev_run_once(struct ev_loop *, int timeout_ms);
/*
 * The turn has done enough: the ready descriptors not yet served this turn
 * are served first in the next one (their callbacks are not called now);
 * timers and the before-sleep hook run as usual.  ev_turn_full_p() says
 * how many times it was called in this turn (0: not full), so that work
 * served after the descriptors can tell whether it did another turn's
 * worth itself.
 */
void	ev_turn_full(struct ev_loop *);
int	ev_turn_full_p(const struct ev_loop *);

/*
 * Monotonic milliseconds.  Inside a turn of the loop this is the time the
 * turn started (read once after waking), so callbacks of one turn agree.
 */
uint64_t	ev_now_ms(void);
/* The longest loop turn so far (handlers, timers and hook), microseconds. */
uint64_t	ev_turn_max_us(void);
/*
 * Turns by duration: ev_turn_bounds_us[i] is bucket i's upper bound
 * (inclusive); hist[EV_TURN_BUCKETS] counts the longer ones.  Fills hist
 * (not cumulative) and returns the sum of all turns' durations, us.
 */
#define EV_TURN_BUCKETS	10
extern const uint32_t ev_turn_bounds_us[EV_TURN_BUCKETS];
uint64_t	ev_turn_hist(uint64_t hist[EV_TURN_BUCKETS + 1]);
/* CLOCK_MONOTONIC now, in microseconds, read fresh (for timing work). */
uint64_t	ev_monotonic_us(void);
/* Replace the clock (tests); NULL restores CLOCK_MONOTONIC. */
void		ev_set_clock(uint64_t (*clock)(void));
/*
 * The real time due timers may take in one turn (default
 * EV_TIMERS_TURN_US); 0: no bound but their count (tests whose turns must
 * not depend on how busy the machine is).
 */
#define EV_TIMERS_TURN_US	1000
void		ev_set_timers_turn_us(uint64_t us);

#endif
