/*
 * fakes.h - link seams for unit tests of the NLM service.
 *
 *   store_fake.c  the whole of db/store.h in memory: staged operations are
 *                 kept per turn, sealed, and committed at once or when the
 *                 test says (fake_store_defer()); the test can look at what
 *                 is committed and make a commit fail.
 *   send_fake.c   onc_send_from() and onc_stream_send() (rpc/rpcsend.h):
 *                 every send is recorded together with the fake store's
 *                 state at that moment, then really made (the real code is
 *                 compiled in under another name); a hook lets the test
 *                 check each message against the committed records.
 *
 * Linked before librpc.a and instead of libstore.a, they replace the real
 * functions: the linker takes the first definition it sees.
 */
#ifndef NLMD_TESTS_FAKES_FAKES_H
#define NLMD_TESTS_FAKES_FAKES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct store_host;

/* ---- store ---- */
/* The one fake store (created empty on first use). */
struct store	*fake_store(void);
/* Forget everything (committed and staged), counters included. */
void		 fake_store_reset(void);
/* Operations staged this turn (not sealed). */
size_t		 fake_store_staged(void);
/* Operations sealed and not yet committed. */
size_t		 fake_store_uncommitted(void);
/* Defer commits until fake_store_complete() (off: commit at the seal). */
void		 fake_store_defer(bool on);
/* Commit everything sealed now (writes the store's eventfd). */
void		 fake_store_complete(void);
/* Commit the oldest sealed turn only, as a committer's run may. */
void		 fake_store_complete_one(void);
/* Committed lock / share records, hosts. */
size_t		 fake_store_nlocks(void);
size_t		 fake_store_nshares(void);
size_t		 fake_store_nhosts(void);
/*
 * Is this lock committed (exact key and range -- a length to the end of
 * the file spelt either way; host 0: any host)?
 */
bool		 fake_store_has_lock(uint64_t host, int32_t svid,
		    const void *oh, size_t ohlen, const void *fh,
		    size_t fhlen, uint64_t start, uint64_t len, bool excl);
/* The committed record of host `id' (name borrowed); false: none. */
bool		 fake_store_host(uint64_t id, struct store_host *out);
uint64_t	 fake_store_commits(void);
uint64_t	 fake_store_flushes(void);	/* commits required to flush */
uint64_t	 fake_store_token(void);	/* committed high-water mark */
uint64_t	 fake_store_max_token(void);	/* largest of the locks' tokens */
uint64_t	 fake_store_epoch(void);
/* Make the next commit fail with STORE_IO (latched, as the real one). */
void		 fake_store_fail_next_commit(void);

/* ---- sender ---- */
struct fake_send {
	int		 fs_stream;	/* 1: TCP bytes, 0: a datagram */
	uint16_t	 fs_dport;	/* datagrams: destination port */
	size_t		 fs_len;
	size_t		 fs_staged;	/* fake_store_staged() when sent */
	size_t		 fs_uncommitted; /* fake_store_uncommitted() then */
	uint64_t	 fs_commits;	/* fake_store_commits() when sent */
	uint8_t		 fs_buf[2048];	/* first bytes */
};

/* Sends recorded since the last reset. */
size_t		 fake_sends(void);
const struct fake_send *fake_send_get(size_t i);
void		 fake_send_reset(void);
/* When set, each send's record is also written to this fd (fork tests). */
void		 fake_send_mirror(int fd);
/*
 * The next n datagrams to destination port `port' fail as sendmsg(2)
 * failing with a hard error would (recorded, not sent; 0: none).
 */
void		 fake_send_fail(uint16_t port, unsigned n);
/* Called at each send, after recording (NULL: none). */
void		 fake_send_hook(void (*fn)(const struct fake_send *));

#endif
