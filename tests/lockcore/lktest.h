/*
 * lktest.h - helpers shared by the lockcore unit tests.
 */
#ifndef NLMD_TESTS_LOCKCORE_LKTEST_H
#define NLMD_TESTS_LOCKCORE_LKTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lockcore.h"

/* The result of the last lt_* call. */
extern const struct lk_result *lt_res;

/* Build a request; oh and fh are NUL-terminated strings. */
struct lk_lockreq lt_req(uint64_t host, int32_t svid, const char *oh,
	    const char *fh, uint64_t start, uint64_t len, bool excl, bool block);

/* Each runs the call, stores lt_res, and checks lk_table_check(). */
enum lk_status lt_lock(struct lk_table *t, struct lk_lockreq rq, void *udata);
enum lk_status lt_test(struct lk_table *t, struct lk_lockreq rq);
enum lk_status lt_unlock(struct lk_table *t, struct lk_lockreq rq);
enum lk_status lt_cancel(struct lk_table *t, struct lk_lockreq rq);
enum lk_status lt_unlock_cancel(struct lk_table *t, struct lk_lockreq rq);
enum lk_status lt_confirm(struct lk_table *t, struct lk_lockreq rq);
enum lk_status lt_undo(struct lk_table *t, struct lk_lockreq rq);
struct lk_sharereq lt_sreq(uint64_t host, const char *oh, const char *fh,
	    uint8_t access, uint8_t deny);
enum lk_status lt_share(struct lk_table *t, uint64_t host, const char *oh,
	    const char *fh, uint8_t access, uint8_t deny);
enum lk_status lt_unshare(struct lk_table *t, uint64_t host, const char *oh,
	    const char *fh);

/* Number of lock records held by (host, svid, oh) on fh. */
size_t	lt_nlocks(struct lk_table *t, uint64_t host, int32_t svid,
	    const char *oh, const char *fh);
/* Is there a lock record exactly (owner, fh, start, len, excl)? */
bool	lt_has(struct lk_table *t, uint64_t host, int32_t svid, const char *oh,
	    const char *fh, uint64_t start, uint64_t len, bool excl);
/* Token of that record, 0 if none. */
uint64_t lt_token(struct lk_table *t, uint64_t host, int32_t svid,
	    const char *oh, const char *fh, uint64_t start, uint64_t len,
	    bool excl);
bool	lt_dropped(const void *udata);
bool	lt_granted(const void *udata);

/* Deterministic PRNG (splitmix64). */
uint64_t lt_rand(uint64_t *state);
/* Seed from NLMD_TEST_SEED or the default; long mode from NLMD_TEST_LONG. */
uint64_t lt_seed(uint64_t def);
bool	lt_long(void);

/*
 * An allocator whose countdown-th call (counting from 0) fails; countdown
 * < 0: none.  lt_failer_init() sets al (for cf_alloc) and countdown -1.
 */
struct lt_failer {
	struct lk_allocator al;
	long		 countdown;
	long		 failed;	/* failures injected */
};
void	lt_failer_init(struct lt_failer *f);

/* Every record, waiter and count of a table as text (for comparisons). */
struct lt_snap {
	char		 buf[16384];
	size_t		 len;
};
void	lt_snapshot(struct lk_table *t, struct lt_snap *s);

/* Suite registration, one per test file. */
int	lt_register_rules(void);
int	lt_register_wait(void);
int	lt_register_misc(void);
int	lt_register_model(void);
int	lt_register_grace(void);

#endif
