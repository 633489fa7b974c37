/*
 * ev.c - see ev.h.
 *
 * HOW IT WORKS.  Descriptors live in an array indexed by fd (grown on
 * demand) holding the callback, its argument and the events asked for;
 * epoll carries the fd number as its data.  Timers form a binary min-heap
 * of pointers to caller-owned struct ev_timer, each remembering its slot,
 * so cancel and re-arm are O(log n) with no search; arming never fails
 * (below).  One turn: wait for min(next timer, requested timeout), call
 * every ready fd callback, then every expired timer, then the
 * before-sleep hook.  A callback may delete any fd, including ones still
 * in this turn's ready list: the fd slot is checked again before each
 * call.  A registered fd watched for nothing (ev_fd_set(fd, 0)) keeps its
 * slot but leaves the epoll set: epoll reports EPOLLHUP and EPOLLERR
 * whatever it is asked for, and a peer that hung up would otherwise wake
 * every turn.
 *
 * A turn that did enough (ev_turn_full: the caller's measure, say the
 * records its requests changed) stops calling fd callbacks; the ready
 * descriptors it did not serve are kept (el_defer) and served first in
 * the next turn, before what epoll_wait reports then (which reports them
 * again: level-triggered; ef_turn keeps one call per turn).  Otherwise
 * epoll's order, which puts descriptors still ready at the back in the
 * order they came, would let the same few at the front fill every turn.
 */
#include "ev.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define EV_MAXEVENTS	256
#define EV_TIMERS_PER_TURN 1024	/* ... and EV_TIMERS_TURN_US (ev.h) */

struct ev_fd {
	ev_fd_cb	*ef_cb;
	void		*ef_arg;
	int		 ef_events;	/* 0: not watched (paused or unused) */
	bool		 ef_used;	/* registered (ev_fd_add) */
	uint64_t	 ef_turn;	/* the turn it was last served in */
	uint64_t	 ef_deferred;	/* ... and last deferred in */
	uint64_t	 ef_gen;	/* which registration of the number */
};

/* A ready descriptor a full turn left for the next. */
struct ev_deferred {
	int		 ed_fd;
	int		 ed_ready;	/* EV_READ | EV_WRITE */
	uint64_t	 ed_gen;	/* not served if fd was deleted since */
};

struct ev_loop {
	int		  el_epfd;
	int		  el_stop;
	struct ev_fd	 *el_fds;
	size_t		  el_nfds;
	struct ev_timer	**el_heap;
	size_t		  el_nheap;
	size_t		  el_capheap;
	struct ev_timer	 *el_over;	/* armed when the heap could not grow */
	uint64_t	  el_seq;	/* timers armed so far */
	ev_hook_cb	 *el_hook;
	void		 *el_hookarg;
	uint64_t	  el_turn;	/* turns so far */
	uint64_t	  el_gen;	/* registrations so far */
	uint64_t	  el_turn_gen;	/* ... when this turn's wait ended */
	int		  el_full;	/* ev_turn_full() calls this turn */
	struct ev_deferred el_defer[EV_MAXEVENTS];
	int		  el_ndefer;
};

static uint64_t (*ev_clock)(void);
static uint64_t ev_timers_turn_us = EV_TIMERS_TURN_US;
/* Time read once per turn (0: not in a turn); saves a syscall per use. */
static uint64_t ev_turn_now;

/* The longest turn so far, from epoll_wait's return to the hook's end. */
static uint64_t ev_turn_max;
/* Turns by duration (ev_turn_hist) and their sum, us. */
const uint32_t ev_turn_bounds_us[EV_TURN_BUCKETS] = {
	50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 100000
};
static uint64_t ev_turns[EV_TURN_BUCKETS + 1];
static uint64_t ev_turn_sum;

uint64_t
ev_monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t
ev_monotonic(void)
{
	return ev_monotonic_us() / 1000;
}

uint64_t
ev_turn_max_us(void)
{
	return ev_turn_max;
}

uint64_t
ev_turn_hist(uint64_t hist[EV_TURN_BUCKETS + 1])
{
	memcpy(hist, ev_turns, sizeof(ev_turns));
	return ev_turn_sum;
}

static void
ev_turn_note(uint64_t d)
{
	unsigned i = 0;

	while (i < EV_TURN_BUCKETS && d > ev_turn_bounds_us[i])
		i++;
	ev_turns[i]++;
	ev_turn_sum += d;
	if (d > ev_turn_max)
		ev_turn_max = d;
}

uint64_t
ev_now_ms(void)
{
	if (ev_clock != NULL)
		return ev_clock();
	return ev_turn_now != 0 ? ev_turn_now : ev_monotonic();
}

void
ev_set_clock(uint64_t (*clock)(void))
{
	ev_clock = clock;
}

void
ev_set_timers_turn_us(uint64_t us)
{
	ev_timers_turn_us = us;
}

struct ev_loop *
ev_loop_new(void)
{
	struct ev_loop *el;

	if ((el = calloc(1, sizeof(*el))) == NULL)
		return NULL;
	if ((el->el_epfd = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		free(el);
		return NULL;
	}
	return el;
}

void
ev_loop_free(struct ev_loop *el)
{
	if (el == NULL)
		return;
	close(el->el_epfd);
	free(el->el_fds);
	free(el->el_heap);
	free(el);
}

static uint32_t
ev_epoll_events(int events)
{
	return ((events & EV_READ) ? EPOLLIN : 0) |
	    ((events & EV_WRITE) ? EPOLLOUT : 0);
}

static int
ev_fds_grow(struct ev_loop *el, int fd)
{
	size_t n = el->el_nfds ? el->el_nfds : 64;
	struct ev_fd *fds;

	while (n <= (size_t)fd)
		n *= 2;
	if ((fds = realloc(el->el_fds, n * sizeof(*fds))) == NULL)
		return -1;
	memset(fds + el->el_nfds, 0, (n - el->el_nfds) * sizeof(*fds));
	el->el_fds = fds;
	el->el_nfds = n;
	return 0;
}

int
ev_fd_add(struct ev_loop *el, int fd, int events, ev_fd_cb *cb, void *arg)
{
	struct epoll_event ee = { 0 };
	int op;

	if (fd < 0 || events == 0) {
		errno = EINVAL;
		return -1;
	}
	if ((size_t)fd >= el->el_nfds && ev_fds_grow(el, fd) == -1)
		return -1;
	op = el->el_fds[fd].ef_events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	ee.events = ev_epoll_events(events);
	ee.data.fd = fd;
	if (epoll_ctl(el->el_epfd, op, fd, &ee) == -1)
		return -1;
	el->el_fds[fd].ef_cb = cb;
	el->el_fds[fd].ef_arg = arg;
	el->el_fds[fd].ef_events = events;
	if (!el->el_fds[fd].ef_used)
		el->el_fds[fd].ef_gen = ++el->el_gen;
	el->el_fds[fd].ef_used = true;
	return 0;
}

int
ev_fd_set(struct ev_loop *el, int fd, int events)
{
	struct epoll_event ee = { 0 };
	struct ev_fd *ef;
	int op;

	if (fd < 0 || (size_t)fd >= el->el_nfds || !el->el_fds[fd].ef_used) {
		errno = EINVAL;
		return -1;
	}
	ef = &el->el_fds[fd];
	if (ef->ef_events == events)
		return 0;
	if (events == 0) {
		if (epoll_ctl(el->el_epfd, EPOLL_CTL_DEL, fd, NULL) == -1)
			return -1;
		ef->ef_events = 0;
		return 0;
	}
	op = ef->ef_events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	ee.events = ev_epoll_events(events);
	ee.data.fd = fd;
	if (epoll_ctl(el->el_epfd, op, fd, &ee) == -1)
		return -1;
	ef->ef_events = events;
	return 0;
}

void
ev_fd_del(struct ev_loop *el, int fd)
{
	if (fd < 0 || (size_t)fd >= el->el_nfds || !el->el_fds[fd].ef_used)
		return;
	if (el->el_fds[fd].ef_events != 0)
		(void)epoll_ctl(el->el_epfd, EPOLL_CTL_DEL, fd, NULL);
	memset(&el->el_fds[fd], 0, sizeof(el->el_fds[fd]));
}

/*
 * ---- timers: a binary heap in an array, and a list for when it cannot
 * grow ----
 *
 * Armed timers are kept in a binary min-heap of pointers (slots 0-based;
 * et_idx holds the slot + 1), ordered by expiry, then arming order (a
 * total order: equal expiries fire as they were armed).  The array grows
 * by doubling; when it is full and cannot grow (out of memory), the timer
 * goes on el_over instead, a list linked through the timers themselves
 * (et_idx EV_OVER), so that arming never fails: its callers (a grant's
 * callback retry, the grace timer, an outgoing call's timeout) could only
 * give up, or exit.  The earliest timer is then the heap's top or one of
 * the list, which is scanned; each turn moves what it can of the list
 * into the heap before running timers.  Allocation-free structures were
 * measured and not kept: a pairing heap melds the n timers armed since
 * the last expiry at once (6 ms in one turn at 100,000 timers, 179 ms at
 * a million), a treap arms in 360 ns at 100,000 against 60 here.
 */
#define EV_OVER		SIZE_MAX

static void
ev_heap_put(struct ev_loop *el, size_t i, struct ev_timer *t)
{
	el->el_heap[i] = t;
	t->et_idx = i + 1;
}

/* Heap order: expiry, then arming order. */
static bool
ev_before(const struct ev_timer *a, const struct ev_timer *b)
{
	return a->et_when < b->et_when ||
	    (a->et_when == b->et_when && a->et_seq < b->et_seq);
}

static void
ev_heap_up(struct ev_loop *el, size_t i)
{
	struct ev_timer *t = el->el_heap[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!ev_before(t, el->el_heap[p]))
			break;
		ev_heap_put(el, i, el->el_heap[p]);
		i = p;
	}
	ev_heap_put(el, i, t);
}

static void
ev_heap_down(struct ev_loop *el, size_t i)
{
	struct ev_timer *t = el->el_heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= el->el_nheap)
			break;
		if (c + 1 < el->el_nheap &&
		    ev_before(el->el_heap[c + 1], el->el_heap[c]))
			c++;
		if (!ev_before(el->el_heap[c], t))
			break;
		ev_heap_put(el, i, el->el_heap[c]);
		i = c;
	}
	ev_heap_put(el, i, t);
}

/* Room for one more in the heap: 0, or -1 when it cannot grow. */
static int
ev_heap_room(struct ev_loop *el)
{
	size_t n = el->el_capheap ? el->el_capheap * 2 : 64;
	struct ev_timer **h;

	if (el->el_nheap < el->el_capheap)
		return 0;
	if ((h = realloc(el->el_heap, n * sizeof(*h))) == NULL)
		return -1;
	el->el_heap = h;
	el->el_capheap = n;
	return 0;
}

static void
ev_heap_add(struct ev_loop *el, struct ev_timer *t)
{
	ev_heap_put(el, el->el_nheap++, t);
	ev_heap_up(el, el->el_nheap - 1);
}

static void
ev_over_del(struct ev_loop *el, struct ev_timer *t)
{
	if (t->et_oprev != NULL)
		t->et_oprev->et_onext = t->et_onext;
	else
		el->el_over = t->et_onext;
	if (t->et_onext != NULL)
		t->et_onext->et_oprev = t->et_oprev;
	t->et_onext = t->et_oprev = NULL;
}

/* What the list holds, into the heap while it grows. */
static void
ev_over_drain(struct ev_loop *el)
{
	struct ev_timer *t;

	while ((t = el->el_over) != NULL && ev_heap_room(el) == 0) {
		ev_over_del(el, t);
		ev_heap_add(el, t);
	}
}

/* The earliest armed timer, or NULL. */
static struct ev_timer *
ev_timer_first(const struct ev_loop *el)
{
	struct ev_timer *first = el->el_nheap > 0 ? el->el_heap[0] : NULL, *t;

	for (t = el->el_over; t != NULL; t = t->et_onext)
		if (first == NULL || ev_before(t, first))
			first = t;
	return first;
}

void
ev_timer_cancel(struct ev_loop *el, struct ev_timer *t)
{
	size_t i;
	struct ev_timer *last;

	if (t == NULL || t->et_idx == 0)
		return;
	if (t->et_idx == EV_OVER) {
		ev_over_del(el, t);
		t->et_idx = 0;
		return;
	}
	i = t->et_idx - 1;
	t->et_idx = 0;
	last = el->el_heap[--el->el_nheap];
	if (i == el->el_nheap)
		return;
	ev_heap_put(el, i, last);
	ev_heap_up(el, i);
	ev_heap_down(el, last->et_idx - 1);
}

void
ev_timer_set(struct ev_loop *el, struct ev_timer *t, uint64_t delay_ms,
    ev_timer_cb *cb, void *arg)
{
	ev_timer_cancel(el, t);
	/* A delay past the clock's end is "never", not a wrap to now. */
	t->et_when = delay_ms > UINT64_MAX - ev_now_ms() ? UINT64_MAX :
	    ev_now_ms() + delay_ms;
	t->et_seq = ++el->el_seq;
	t->et_cb = cb;
	t->et_arg = arg;
	if (el->el_over == NULL && ev_heap_room(el) == 0) {
		ev_heap_add(el, t);
		return;
	}
	/* No room, or others wait already: the heap takes them first. */
	t->et_idx = EV_OVER;
	t->et_onext = el->el_over;
	t->et_oprev = NULL;
	if (el->el_over != NULL)
		el->el_over->et_oprev = t;
	el->el_over = t;
}

int
ev_timer_armed(const struct ev_timer *t)
{
	return t->et_idx != 0;
}

void
ev_set_beforesleep(struct ev_loop *el, ev_hook_cb *cb, void *arg)
{
	el->el_hook = cb;
	el->el_hookarg = arg;
}

void
ev_stop(struct ev_loop *el)
{
	el->el_stop = 1;
}

static void
ev_run_timers(struct ev_loop *el)
{
	uint64_t now = ev_now_ms(), armed = el->el_seq, t0 = 0;
	size_t n = EV_TIMERS_PER_TURN;
	struct ev_timer *t;

	/*
	 * Only timers armed before this run: one that re-arms itself with
	 * delay 0 runs again next turn, not over and over in this one (equal
	 * expiries are in arming order, so the first such timer ends the
	 * run).  And at most EV_TIMERS_PER_TURN, stopping once they took
	 * EV_TIMERS_TURN_US: 100,000 callback retries due at once (each a
	 * send) run over many short turns with the sockets served in
	 * between (what is left is due, so the next epoll_wait does not
	 * sleep).  Measured before the time bound (bench-queue.sh 100000,
	 * shared): turns that spent 5-11 ms in due timers, callback retries.
	 * Timers armed while the heap could not grow go into it first.
	 */
	ev_over_drain(el);
	while (n-- > 0 && (t = ev_timer_first(el)) != NULL &&
	    t->et_when <= now && t->et_seq <= armed) {
		if (t0 == 0)	/* the clock only in turns that run timers */
			t0 = ev_monotonic_us();
		ev_timer_cancel(el, t);
		t->et_cb(el, t->et_arg);
		if (ev_timers_turn_us != 0 &&
		    ev_monotonic_us() - t0 >= ev_timers_turn_us)
			break;
	}
}

static int
ev_wait_ms(struct ev_loop *el, int timeout_ms)
{
	const struct ev_timer *first;
	uint64_t now, when;
	int t;

	if ((first = ev_timer_first(el)) == NULL)
		return timeout_ms;
	now = ev_now_ms();
	when = first->et_when;
	t = when <= now ? 0 : (when - now > 60000 ? 60000 : (int)(when - now));
	return (timeout_ms >= 0 && timeout_ms < t) ? timeout_ms : t;
}

void
ev_turn_full(struct ev_loop *el)
{
	el->el_full++;
}

int
ev_turn_full_p(const struct ev_loop *el)
{
	return el->el_full;
}

/*
 * Serve fd (ready: EV_READ | EV_WRITE as epoll said) once this turn; in a
 * full turn keep it for the next.  gen: the registration deferred (0:
 * whichever is current); a number deleted and registered again since is
 * another descriptor.  So is one registered after the wait ended: a
 * callback that closed a ready descriptor and opened another that got
 * its number would have the new one called with the old one's readiness.
 */
static void
ev_serve(struct ev_loop *el, int fd, int ready, uint64_t gen)
{
	struct ev_fd *ef;

	if (fd < 0 || (size_t)fd >= el->el_nfds ||
	    el->el_fds[fd].ef_events == 0)
		return;
	ef = &el->el_fds[fd];
	if ((gen != 0 && ef->ef_gen != gen) || ef->ef_gen > el->el_turn_gen ||
	    ef->ef_turn == el->el_turn || (ready &= ef->ef_events) == 0)
		return;
	if (el->el_full) {
		/*
		 * Once: a descriptor deferred from the last turn, not reached
		 * again, is also in what epoll reported in this one.
		 */
		if (ef->ef_deferred == el->el_turn)
			return;
		ef->ef_deferred = el->el_turn;
		if (el->el_ndefer < EV_MAXEVENTS) {
			el->el_defer[el->el_ndefer].ed_fd = fd;
			el->el_defer[el->el_ndefer].ed_gen = ef->ef_gen;
			el->el_defer[el->el_ndefer++].ed_ready = ready;
		}
		return;
	}
	ef->ef_turn = el->el_turn;
	ef->ef_cb(el, fd, ready, ef->ef_arg);
}

int
ev_run_once(struct ev_loop *el, int timeout_ms)
{
	struct epoll_event evs[EV_MAXEVENTS];
	struct ev_deferred defer[EV_MAXEVENTS];
	uint64_t t0;
	int i, n, ndefer;

	ev_turn_now = 0;
	/* Descriptors left waiting: no sleep, they are ready. */
	n = epoll_wait(el->el_epfd, evs, EV_MAXEVENTS, el->el_ndefer > 0 ? 0 :
	    ev_wait_ms(el, timeout_ms));
	if (n == -1 && errno != EINTR)
		return -1;
	t0 = ev_monotonic_us();
	ev_turn_now = t0 / 1000;
	el->el_turn++;
	el->el_turn_gen = el->el_gen;
	el->el_full = 0;
	ndefer = el->el_ndefer;
	memcpy(defer, el->el_defer, (size_t)ndefer * sizeof(defer[0]));
	el->el_ndefer = 0;
	for (i = 0; i < ndefer; i++)
		ev_serve(el, defer[i].ed_fd, defer[i].ed_ready,
		    defer[i].ed_gen);
	for (i = 0; i < n; i++) {
		int ready = 0;

		if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
			ready |= EV_READ;
		if (evs[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			ready |= EV_WRITE;
		ev_serve(el, evs[i].data.fd, ready, 0);
	}
	ev_run_timers(el);
	if (el->el_hook != NULL)
		el->el_hook(el, el->el_hookarg);
	ev_turn_note(ev_monotonic_us() - t0);
	ev_turn_now = 0;	/* outside a turn, ev_now_ms() reads the clock */
	return 0;
}

int
ev_run(struct ev_loop *el)
{
	el->el_stop = 0;
	while (!el->el_stop)
		if (ev_run_once(el, -1) == -1)
			return -1;
	return 0;
}
