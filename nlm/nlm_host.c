/*
 * nlm_host.c - the hosts nlmd knows.
 *
 * A host is the pair (source address of its requests, caller_name), the
 * address with any IPv4-mapped form undone and the port ignored.  Neither
 * alone is trusted: a name is whatever a client says, an address can be
 * shared by NATed or containerised clients.  No DNS is ever consulted.
 *
 * Each host gets a lockcore host id (never 0, never reused: the next id
 * is kept in the store) and remembers the NSM state its LOCKs carried and
 * the server address it talked to.  Every host is a store record, written
 * when the host is created (flushed before it is answered, whatever the
 * durability: the monitor list must survive a power loss) and whenever
 * what it records changes; at startup the records come back first, so a
 * client reclaiming after a restart is the same host, with the same id, as
 * the one whose locks were stored.
 *
 * The host table is also the status monitor's list (nlm_notify.c sends
 * SM_NOTIFY at each start to every host on it that sent a monitored LOCK:
 * h_monitored).  A host leaves it when it
 * holds nothing in the lock table, has no callback in flight, owes no
 * SM_NOTIFY and has been idle for host-idle seconds (a periodic sweep
 * frees it and deletes its record), or at once when it tells us it
 * restarted (FREE_ALL, SM_NOTIFY: nlm_host_forget()).
 *
 * nsm/ reaches hosts only through nlm.h (nlm_host_notified()); nlm/ never
 * calls nsm/.  Hosts are created by NLM requests and are lockcore host
 * ids, so they live here, and the NSM side asks.
 */
#include "nlm_impl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "rpcsrv.h"

/* Limits for messages a peer can trigger (log.h). */
static struct log_rl rl_released;
static struct log_rl rl_table_full;
static struct log_rl rl_addr_full;
static struct log_rl rl_ambiguous;
static struct log_rl rl_release_failed;

#define HOST_GC_MS	60000

const uint8_t *
nlm_addr_bytes(const struct sockaddr_storage *ss, size_t *len)
{
	if (ss->ss_family == AF_INET) {
		*len = 4;
		return (const uint8_t *)&((const struct sockaddr_in *)
		    (const void *)ss)->sin_addr;
	}
	if (ss->ss_family == AF_INET6) {
		*len = 16;
		return (const uint8_t *)&((const struct sockaddr_in6 *)
		    (const void *)ss)->sin6_addr;
	}
	*len = 0;
	return NULL;
}

bool
nlm_addr_equal(const struct sockaddr_storage *a,
    const struct sockaddr_storage *b)
{
	const struct sockaddr_in6 *x6, *y6;
	const uint8_t *x, *y;
	size_t xl, yl;

	if (a->ss_family != b->ss_family)
		return false;
	x = nlm_addr_bytes(a, &xl);
	y = nlm_addr_bytes(b, &yl);
	if (xl != yl || xl == 0 || memcmp(x, y, xl) != 0)
		return false;
	if (a->ss_family != AF_INET6)
		return true;
	/*
	 * fe80::1 on two links is two machines: a link-local address is
	 * one host only with its interface (the scope; kept in the host's
	 * record).  A scope not known (0) matches any.
	 */
	x6 = (const struct sockaddr_in6 *)(const void *)a;
	y6 = (const struct sockaddr_in6 *)(const void *)b;
	if (!IN6_IS_ADDR_LINKLOCAL(&x6->sin6_addr) &&
	    !IN6_IS_ADDR_MC_LINKLOCAL(&x6->sin6_addr))
		return true;
	return x6->sin6_scope_id == 0 || y6->sin6_scope_id == 0 ||
	    x6->sin6_scope_id == y6->sin6_scope_id;
}

/*
 * The address bytes and the name, under the start's random key (a client
 * choosing names cannot aim at one bucket), and the table grows with the
 * hosts, so chains stay short.
 */
static uint64_t
nlm_host_hash(const struct sockaddr_storage *ss, const char *name)
{
	uint8_t buf[16 + 1024];
	const uint8_t *p;
	size_t n, nl = strlen(name);

	p = nlm_addr_bytes(ss, &n);
	if (nl > sizeof(buf) - n)
		nl = sizeof(buf) - n;
	if (n > 0)
		memcpy(buf, p, n);
	memcpy(buf + n, name, nl);
	return lk_siphash(nlm->n_conf.nc_hash_key, n, buf, n + nl);
}

/*
 * HOSTS PER SOURCE ADDRESS.  A peer that cycles through caller_names
 * from one address must not fill the host table (max-hosts) and lock
 * every new client out: each address may bring max-hosts-per-address.
 * A small keyed hash of address -> count, growing like the host table.
 */
static uint64_t
nlm_addr_hash(const struct sockaddr_storage *ss)
{
	const uint8_t *p;
	size_t n;

	p = nlm_addr_bytes(ss, &n);
	return lk_siphash(nlm->n_conf.nc_hash_key, 0x61646472, p, n);
}

static uint64_t
nlm_name_hash(const char *name)
{
	return lk_siphash(nlm->n_conf.nc_hash_key, 0x6e616d65, name,
	    strlen(name));
}

static struct nlm_addrcount *
nlm_addr_find(const struct sockaddr_storage *ss, uint64_t hv)
{
	struct nlm_addrcount *ac;

	if (nlm->n_abuckets == 0)
		return NULL;
	for (ac = nlm->n_addrs[hv & (nlm->n_abuckets - 1)]; ac != NULL;
	    ac = ac->ac_next)
		if (ac->ac_hash == hv && nlm_addr_equal(&ac->ac_addr, ss))
			return ac;
	return NULL;
}

static struct nlm_namegroup *
nlm_name_find(const char *name, uint64_t hv)
{
	struct nlm_namegroup *ng;

	if (nlm->n_nbuckets == 0)
		return NULL;
	for (ng = nlm->n_names[hv & (nlm->n_nbuckets - 1)]; ng != NULL;
	    ng = ng->ng_next)
		if (ng->ng_hash == hv &&
		    strcmp(ng->ng_hosts->h_name, name) == 0)
			return ng;
	return NULL;
}

/* How many hosts this address has now. */
static unsigned
nlm_addr_count(const struct sockaddr_storage *ss)
{
	struct nlm_addrcount *ac = nlm_addr_find(ss, nlm_addr_hash(ss));

	return ac != NULL ? ac->ac_count : 0;
}

/*
 * Make room for one more entry in a chained table of *sizep buckets
 * holding `n' (doubling from `first'): the host table and its indexes.
 * `hashof' gives an entry's hash.  A failed growth keeps the table:
 * chains get longer.  -1 only when there is no table at all.
 */
static int
nlm_index_grow(void ***tabp, size_t *sizep, size_t first, size_t n,
    uint64_t (*hashof)(void *), void *(*nextof)(void *),
    void (*setnext)(void *, void *))
{
	size_t size = *sizep == 0 ? first : *sizep * 2, b;
	void **tab, *e, *next;

	if (n < *sizep)
		return 0;
	if ((tab = calloc(size, sizeof(*tab))) == NULL)
		return *sizep == 0 ? -1 : 0;
	for (b = 0; b < *sizep; b++)
		for (e = (*tabp)[b]; e != NULL; e = next) {
			next = nextof(e);
			setnext(e, tab[hashof(e) & (size - 1)]);
			tab[hashof(e) & (size - 1)] = e;
		}
	free(*tabp);
	*tabp = tab;
	*sizep = size;
	return 0;
}

static uint64_t
h_hashof(void *e)
{
	return ((struct nlm_host *)e)->h_hash;
}

static void *
h_nextof(void *e)
{
	return ((struct nlm_host *)e)->h_next;
}

static void
h_setnext(void *e, void *n)
{
	((struct nlm_host *)e)->h_next = n;
}

static uint64_t
ac_hashof(void *e)
{
	return ((struct nlm_addrcount *)e)->ac_hash;
}

static void *
ac_nextof(void *e)
{
	return ((struct nlm_addrcount *)e)->ac_next;
}

static void
ac_setnext(void *e, void *n)
{
	((struct nlm_addrcount *)e)->ac_next = n;
}

static uint64_t
hi_hashof(void *e)
{
	return ((struct nlm_host *)e)->h_id;	/* ids are consecutive */
}

static void *
hi_nextof(void *e)
{
	return ((struct nlm_host *)e)->h_inext;
}

static void
hi_setnext(void *e, void *n)
{
	((struct nlm_host *)e)->h_inext = n;
}

static uint64_t
ng_hashof(void *e)
{
	return ((struct nlm_namegroup *)e)->ng_hash;
}

static void *
ng_nextof(void *e)
{
	return ((struct nlm_namegroup *)e)->ng_next;
}

static void
ng_setnext(void *e, void *n)
{
	((struct nlm_namegroup *)e)->ng_next = n;
}

/*
 * Put h in the indexes of its address, its name and its id (h_id set).
 * 0, or -1 (memory).
 */
static int
nlm_index_add(struct nlm_host *h)
{
	uint64_t ah = nlm_addr_hash(&h->h_addr);
	uint64_t nh = nlm_name_hash(h->h_name);
	struct nlm_addrcount *ac;
	struct nlm_namegroup *ng;
	size_t b;

	if (nlm_index_grow((void ***)&nlm->n_ids, &nlm->n_ibuckets,
	    NLM_HOST_BUCKETS, nlm->n_nhosts, hi_hashof, hi_nextof,
	    hi_setnext) == -1)
		return -1;
	if ((ac = nlm_addr_find(&h->h_addr, ah)) == NULL) {
		if (nlm_index_grow((void ***)&nlm->n_addrs, &nlm->n_abuckets,
		    256, nlm->n_naddrs, ac_hashof, ac_nextof,
		    ac_setnext) == -1 ||
		    (ac = calloc(1, sizeof(*ac))) == NULL)
			return -1;
		ac->ac_addr = h->h_addr;
		ac->ac_hash = ah;
		ac->ac_next = nlm->n_addrs[ah & (nlm->n_abuckets - 1)];
		nlm->n_addrs[ah & (nlm->n_abuckets - 1)] = ac;
		nlm->n_naddrs++;
	}
	if ((ng = nlm_name_find(h->h_name, nh)) == NULL) {
		if (nlm_index_grow((void ***)&nlm->n_names, &nlm->n_nbuckets,
		    256, nlm->n_nnames, ng_hashof, ng_nextof,
		    ng_setnext) == -1 ||
		    (ng = calloc(1, sizeof(*ng))) == NULL) {
			if (ac->ac_count == 0) {	/* just made: undo */
				struct nlm_addrcount **pp = &nlm->n_addrs[ah &
				    (nlm->n_abuckets - 1)];

				while (*pp != ac)
					pp = &(*pp)->ac_next;
				*pp = ac->ac_next;
				free(ac);
				nlm->n_naddrs--;
			}
			return -1;
		}
		ng->ng_hash = nh;
		ng->ng_next = nlm->n_names[nh & (nlm->n_nbuckets - 1)];
		nlm->n_names[nh & (nlm->n_nbuckets - 1)] = ng;
		nlm->n_nnames++;
	}
	ac->ac_count++;
	h->h_ag = ac;
	h->h_aprev = NULL;
	h->h_anext = ac->ac_hosts;
	if (ac->ac_hosts != NULL)
		ac->ac_hosts->h_aprev = h;
	ac->ac_hosts = h;
	h->h_ng = ng;
	h->h_nprev = NULL;
	h->h_nnext = ng->ng_hosts;
	if (ng->ng_hosts != NULL)
		ng->ng_hosts->h_nprev = h;
	ng->ng_hosts = h;
	b = h->h_id & (nlm->n_ibuckets - 1);
	h->h_inext = nlm->n_ids[b];
	nlm->n_ids[b] = h;
	return 0;
}

/* Take h out of the indexes; empty groups go. */
static void
nlm_index_del(struct nlm_host *h)
{
	struct nlm_addrcount *ac = h->h_ag, **app;
	struct nlm_namegroup *ng = h->h_ng, **npp;
	struct nlm_host **ipp;

	if (ac != NULL && nlm->n_ibuckets > 0) {	/* (in the indexes) */
		for (ipp = &nlm->n_ids[h->h_id & (nlm->n_ibuckets - 1)];
		    *ipp != NULL && *ipp != h; ipp = &(*ipp)->h_inext)
			;
		if (*ipp == h)
			*ipp = h->h_inext;
	}

	if (ac != NULL) {
		if (h->h_aprev != NULL)
			h->h_aprev->h_anext = h->h_anext;
		else
			ac->ac_hosts = h->h_anext;
		if (h->h_anext != NULL)
			h->h_anext->h_aprev = h->h_aprev;
		if (--ac->ac_count == 0) {
			for (app = &nlm->n_addrs[ac->ac_hash &
			    (nlm->n_abuckets - 1)]; *app != ac;
			    app = &(*app)->ac_next)
				;
			*app = ac->ac_next;
			free(ac);
			nlm->n_naddrs--;
		}
		h->h_ag = NULL;
	}
	if (ng != NULL) {
		if (h->h_nprev != NULL)
			h->h_nprev->h_nnext = h->h_nnext;
		else
			ng->ng_hosts = h->h_nnext;
		if (h->h_nnext != NULL)
			h->h_nnext->h_nprev = h->h_nprev;
		if (ng->ng_hosts == NULL) {
			for (npp = &nlm->n_names[ng->ng_hash &
			    (nlm->n_nbuckets - 1)]; *npp != ng;
			    npp = &(*npp)->ng_next)
				;
			*npp = ng->ng_next;
			free(ng);
			nlm->n_nnames--;
		}
		h->h_ng = NULL;
	}
}

static void
nlm_index_free_all(void)
{
	struct nlm_addrcount *ac;
	struct nlm_namegroup *ng;
	size_t b;

	for (b = 0; b < nlm->n_abuckets; b++)
		while ((ac = nlm->n_addrs[b]) != NULL) {
			nlm->n_addrs[b] = ac->ac_next;
			free(ac);
		}
	for (b = 0; b < nlm->n_nbuckets; b++)
		while ((ng = nlm->n_names[b]) != NULL) {
			nlm->n_names[b] = ng->ng_next;
			free(ng);
		}
	free(nlm->n_addrs);
	free(nlm->n_names);
	free(nlm->n_ids);
	nlm->n_addrs = NULL;
	nlm->n_names = NULL;
	nlm->n_ids = NULL;
	nlm->n_ibuckets = 0;
	nlm->n_abuckets = nlm->n_naddrs = 0;
	nlm->n_nbuckets = nlm->n_nnames = 0;
}

struct nlm_host *
nlm_host_named(const char *name)
{
	struct nlm_namegroup *ng = nlm_name_find(name, nlm_name_hash(name));

	return ng != NULL ? ng->ng_hosts : NULL;
}

const char *
nlm_host_str(const struct nlm_host *h, char *buf, size_t len)
{
	char a[64];

	snprintf(buf, len, "%s@%s", h->h_name[0] ? h->h_name : "-",
	    addr_str((const struct sockaddr *)&h->h_addr, 0, a, sizeof(a)));
	return buf;
}

/*
 * Copy an address with the port cleared: srclen bytes, not the whole
 * sockaddr_storage (a caller may hand a sockaddr_in6 in one).
 */
static void
nlm_addr_noport(struct sockaddr_storage *dst, socklen_t *dstlen,
    const struct sockaddr_storage *src, socklen_t srclen)
{
	if (srclen > sizeof(*dst))
		srclen = sizeof(*dst);
	memset(dst, 0, sizeof(*dst));
	memcpy(dst, src, srclen);
	*dstlen = srclen;
	if (dst->ss_family == AF_INET)
		((struct sockaddr_in *)dst)->sin_port = 0;
	else if (dst->ss_family == AF_INET6)
		((struct sockaddr_in6 *)dst)->sin6_port = 0;
}

static void
nlm_addr_to_store(const struct sockaddr_storage *ss, socklen_t len,
    struct store_addr *sa)
{
	const uint8_t *p;
	size_t n;

	memset(sa, 0, sizeof(*sa));
	if (len == 0 || (p = nlm_addr_bytes(ss, &n)) == NULL)
		return;
	memcpy(sa->sa_bytes, p, n);
	sa->sa_len = (uint8_t)n;
	if (ss->ss_family == AF_INET6)
		sa->sa_scope = ((const struct sockaddr_in6 *)(const void *)ss)->
		    sin6_scope_id;
}

socklen_t
nlm_addr_from_store(const struct store_addr *sa, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (sa->sa_len == 4) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, sa->sa_bytes, 4);
		return sizeof(*s4);
	}
	if (sa->sa_len == 16) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, sa->sa_bytes, 16);
		s6->sin6_scope_id = sa->sa_scope;
		return sizeof(*s6);
	}
	return 0;
}

void
nlm_host_stage(struct nlm_host *h)
{
	struct store_host sh;

	memset(&sh, 0, sizeof(sh));
	sh.sh_id = h->h_id;
	sh.sh_name = h->h_name;
	nlm_addr_to_store(&h->h_addr, h->h_addrlen, &sh.sh_addr);
	memcpy(sh.sh_local, h->h_local, sizeof(sh.sh_local));
	sh.sh_nlocal = h->h_nlocal;
	sh.sh_state = h->h_state;
	sh.sh_flags = h->h_monitored ? STORE_HOST_MONITORED : 0;
	sh.sh_epoch = h->h_epoch;
	sh.sh_notify_since = h->h_notify_since;
	nlm_store_check(store_put_host(nlm->n_store, &sh), "staging a host");
}

/* Put h (a host or a cursor) after `after' (NULL: first) in the list. */
static void
nlm_list_insert(struct nlm_host *after, struct nlm_host *h)
{
	h->h_lprev = after;
	h->h_lnext = after != NULL ? after->h_lnext : nlm->n_hfirst;
	if (h->h_lnext != NULL)
		h->h_lnext->h_lprev = h;
	else
		nlm->n_hlast = h;
	if (after != NULL)
		after->h_lnext = h;
	else
		nlm->n_hfirst = h;
}

static void
nlm_list_remove(struct nlm_host *h)
{
	if (h->h_lprev != NULL)
		h->h_lprev->h_lnext = h->h_lnext;
	else
		nlm->n_hfirst = h->h_lnext;
	if (h->h_lnext != NULL)
		h->h_lnext->h_lprev = h->h_lprev;
	else
		nlm->n_hlast = h->h_lprev;
	h->h_lnext = h->h_lprev = NULL;
}

struct nlm_host *
nlm_host_cursor_new(void)
{
	struct nlm_host *cur;

	if ((cur = calloc(1, sizeof(*cur))) == NULL)
		return NULL;
	cur->h_cursor = true;
	nlm_list_insert(NULL, cur);
	return cur;
}

size_t
nlm_host_cursor_next(struct nlm_host *cur, size_t max,
    void (*fn)(struct nlm_host *, void *), void *arg)
{
	struct nlm_host *h, *last = NULL;
	size_t n = 0;

	if (nlm == NULL || !cur->h_cursor)
		return 0;
	for (h = cur->h_lnext; h != NULL && n < max; h = h->h_lnext) {
		if (h->h_cursor)
			continue;
		fn(h, arg);
		last = h;
		n++;
	}
	if (last != NULL) {
		nlm_list_remove(cur);
		nlm_list_insert(last, cur);
	}
	return n;
}

void
nlm_host_cursor_free(struct nlm_host *cur)
{
	if (cur == NULL)
		return;
	/* After nlm_host_free_all() a cursor is on no list any more. */
	if (nlm != NULL && cur->h_cursor)
		nlm_list_remove(cur);
	free(cur);
}

/*
 * Enter h into the host table and its indexes.  -1 (out of memory):
 * nothing changed (a table that grew stays grown).
 */
static int
nlm_host_link(struct nlm_host *h)
{
	size_t b;

	h->h_hash = nlm_host_hash(&h->h_addr, h->h_name);
	if (nlm_index_grow((void ***)&nlm->n_hosts, &nlm->n_hbuckets,
	    NLM_HOST_BUCKETS, nlm->n_nhosts, h_hashof, h_nextof,
	    h_setnext) == -1 || nlm_index_add(h) == -1)
		return -1;
	b = h->h_hash & (nlm->n_hbuckets - 1);
	h->h_next = nlm->n_hosts[b];
	nlm->n_hosts[b] = h;
	nlm_list_insert(nlm->n_hlast, h);
	nlm->n_nhosts++;
	nlm->n_stats.hosts = nlm->n_nhosts;
	return 0;
}

static struct nlm_host *
nlm_host_new(const struct sockaddr_storage *ss, socklen_t sl, const char *name)
{
	struct nlm_host *h;

	char a[64];

	if (nlm->n_nhosts >= nlm->n_conf.nc_max_hosts) {
		nlm->n_stats.hosts_refused++;
		log_rl_warnx(&rl_table_full,
		    "host table full (%u hosts, max-hosts)",
		    nlm->n_nhosts);
		return NULL;
	}
	if (nlm->n_conf.nc_max_hosts_per_addr > 0 &&
	    nlm_addr_count(ss) >= nlm->n_conf.nc_max_hosts_per_addr) {
		nlm->n_stats.hosts_refused++;
		log_rl_warnx(&rl_addr_full, "%s already has %u hosts "
		    "(max-hosts-per-address): caller_name %s refused",
		    addr_str((const struct sockaddr *)ss, 0, a, sizeof(a)),
		    nlm->n_conf.nc_max_hosts_per_addr, name);
		return NULL;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	if ((h->h_name = strdup(name)) == NULL) {
		free(h);
		return NULL;
	}
	nlm_addr_noport(&h->h_addr, &h->h_addrlen, ss, sl);
	h->h_seen = ev_now_ms();
	return h;
}

/*
 * A request reached us at `local': remember it among the server addresses
 * the host used, stage when that set changed.  Each is notified of our
 * restarts separately (nlm_notify.c): a client monitors every server
 * address it mounted from under its own name.  Past STORE_LOCAL_MAX the
 * one least recently used gives way (the time of use is kept in memory
 * only: after a restart the addresses not used since go first, oldest
 * first), so that an address the client keeps using is never the one
 * forgotten.
 */
static void
nlm_host_local(struct nlm_host *h, const struct sockaddr_storage *local,
    socklen_t locallen, bool stage)
{
	struct store_addr sa;
	uint64_t now = ev_now_ms();
	unsigned i, lru;

	if (local == NULL || locallen == 0)
		return;
	nlm_addr_to_store(local, locallen, &sa);
	if (sa.sa_len == 0)
		return;
	for (i = 0; i < h->h_nlocal; i++)
		if (h->h_local[i].sa_len == sa.sa_len &&
		    h->h_local[i].sa_scope == sa.sa_scope &&
		    memcmp(h->h_local[i].sa_bytes, sa.sa_bytes,
		    sa.sa_len) == 0) {
			h->h_local_used[i] = now;
			return;
		}
	if (h->h_nlocal == STORE_LOCAL_MAX) {
		for (lru = 0, i = 1; i < h->h_nlocal; i++)
			if (h->h_local_used[i] < h->h_local_used[lru])
				lru = i;
		memmove(&h->h_local[lru], &h->h_local[lru + 1],
		    (STORE_LOCAL_MAX - 1 - lru) * sizeof(h->h_local[0]));
		memmove(&h->h_local_used[lru], &h->h_local_used[lru + 1],
		    (STORE_LOCAL_MAX - 1 - lru) * sizeof(h->h_local_used[0]));
		h->h_nlocal--;
	}
	h->h_local_used[h->h_nlocal] = now;
	h->h_local[h->h_nlocal++] = sa;
	if (!stage)
		return;
	nlm_host_stage(h);
	/*
	 * A monitored host is owed an SM_NOTIFY through this address at
	 * our next start: to disk before it is answered, whatever the
	 * durability, as its monitored flag (nlm_host_monitor()).
	 */
	if (h->h_monitored)
		store_require_flush(nlm->n_store);
}

socklen_t
nlm_host_local_addr(const struct nlm_host *h, unsigned i,
    struct sockaddr_storage *ss)
{
	if (i >= h->h_nlocal) {
		memset(ss, 0, sizeof(*ss));
		return 0;
	}
	return nlm_addr_from_store(&h->h_local[i], ss);
}

const char *
nlm_host_locals_str(const struct nlm_host *h, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	char a[INET6_ADDRSTRLEN + 16];
	size_t n = 0;
	unsigned i;
	int w;

	if (len == 0)
		return "";
	buf[0] = '\0';
	for (i = 0; i < h->h_nlocal; i++) {
		if (nlm_host_local_addr(h, i, &ss) == 0)
			continue;
		/* A link-local address: its interface too (fe80::1%eth0). */
		(void)addr_str_scoped((const struct sockaddr *)&ss, a,
		    sizeof(a));
		w = snprintf(buf + n, len - n, "%s%s", n > 0 ? "," : "", a);
		if (w < 0 || (size_t)w >= len - n) {
			buf[n] = '\0';		/* the ones that fit */
			break;
		}
		n += (size_t)w;
	}
	return n > 0 ? buf : "-";
}

/* The memo slot of a source: its port and the last byte of its address. */
static size_t
nlm_memo_slot(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *sin = (const void *)ss;
	const struct sockaddr_in6 *sin6 = (const void *)ss;
	unsigned v;

	if (ss->ss_family == AF_INET)
		v = ntohs(sin->sin_port) ^
		    (ntohl(sin->sin_addr.s_addr) & 0xff) * 0x9du;
	else if (ss->ss_family == AF_INET6)
		v = ntohs(sin6->sin6_port) ^
		    (unsigned)sin6->sin6_addr.s6_addr[15] * 0x9du;
	else
		v = 0;
	return v & (NLM_HOST_MEMO - 1);
}

static void
nlm_memo_forget(const struct nlm_host *h)
{
	size_t i;

	for (i = 0; i < NLM_HOST_MEMO; i++)
		if (nlm->n_memo[i] == h)
			nlm->n_memo[i] = NULL;
}

struct nlm_host *
nlm_host_find(const struct sockaddr_storage *ss, const char *name)
{
	struct nlm_host *h, **memo;
	uint64_t hv;

	if (nlm->n_hbuckets == 0)
		return NULL;
	memo = &nlm->n_memo[nlm_memo_slot(ss)];
	if ((h = *memo) != NULL && strcmp(h->h_name, name) == 0 &&
	    nlm_addr_equal(&h->h_addr, ss))
		return h;
	hv = nlm_host_hash(ss, name);
	for (h = nlm->n_hosts[hv & (nlm->n_hbuckets - 1)]; h != NULL;
	    h = h->h_next)
		if (h->h_hash == hv && strcmp(h->h_name, name) == 0 &&
		    nlm_addr_equal(&h->h_addr, ss))
			return *memo = h;
	return NULL;
}

struct nlm_host *
nlm_host_get(const struct sockaddr_storage *ss, socklen_t sl,
    const char *name, const struct sockaddr_storage *local,
    socklen_t locallen, bool create)
{
	struct nlm_host *h;

	if ((h = nlm_host_find(ss, name)) != NULL) {
		if (create)
			nlm_host_local(h, local, locallen, true);
		return h;
	}
	if (!create || (h = nlm_host_new(ss, sl, name)) == NULL)
		return NULL;
	/* Out of memory: refused as at a full table, nothing changed. */
	h->h_id = nlm->n_next_host;
	if (nlm_host_link(h) == -1) {
		log_rl_warnx(&rl_table_full, "no memory for host %s", name);
		free(h->h_name);
		free(h);
		return NULL;
	}
	nlm->n_next_host++;
	h->h_epoch = nlm->n_conf.nc_epoch;
	nlm_host_local(h, local, locallen, false);
	/* Its first record reaches the disk before it is answered. */
	nlm_host_stage(h);
	store_require_flush(nlm->n_store);
	return h;
}

int
nlm_host_restore(const struct store_host *sh)
{
	struct sockaddr_storage ss;
	struct nlm_host *h;
	socklen_t sl;
	unsigned i;

	if (sh->sh_id == 0 ||
	    (sl = nlm_addr_from_store(&sh->sh_addr, &ss)) == 0) {
		log_warnx("stored host %llu (%s): no usable address; ignored",
		    (unsigned long long)sh->sh_id, sh->sh_name);
		return 0;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL ||
	    (h->h_name = strdup(sh->sh_name)) == NULL) {
		free(h);
		return -1;
	}
	h->h_id = sh->sh_id;
	nlm_addr_noport(&h->h_addr, &h->h_addrlen, &ss, sl);
	for (i = 0; i < sh->sh_nlocal && i < STORE_LOCAL_MAX; i++)
		if (sh->sh_local[i].sa_len != 0)
			h->h_local[h->h_nlocal++] = sh->sh_local[i];
	h->h_state = sh->sh_state;
	h->h_monitored = (sh->sh_flags & STORE_HOST_MONITORED) != 0;
	h->h_epoch = sh->sh_epoch;
	h->h_notify_since = sh->sh_notify_since;
	h->h_seen = ev_now_ms();
	if (nlm_host_link(h) == -1) {
		free(h->h_name);
		free(h);
		return -1;
	}
	if (h->h_id >= nlm->n_next_host)
		nlm->n_next_host = h->h_id + 1;
	return 1;
}

/* The records a piece of a release takes: a turn's budget. */
static size_t
nlm_release_piece(void)
{
	return nlm->n_conf.nc_turn_changes > 0 ? nlm->n_conf.nc_turn_changes :
	    NLM_TURN_CHANGES;
}

static void	nlm_release_next(struct ev_loop *, void *);

static void
nlm_releasing_add(struct nlm_host *h)
{
	struct nlm_host **pp;

	for (pp = &nlm->n_releasing; *pp != NULL; pp = &(*pp)->h_rnext)
		;
	h->h_rnext = NULL;
	*pp = h;
	if (!ev_timer_armed(&nlm->n_rel_timer))
		ev_timer_set(nlm->n_loop, &nlm->n_rel_timer, 0,
		    nlm_release_next, NULL);
}

static void
nlm_releasing_remove(struct nlm_host *h)
{
	struct nlm_host **pp;

	for (pp = &nlm->n_releasing; *pp != NULL; pp = &(*pp)->h_rnext)
		if (*pp == h) {
			*pp = h->h_rnext;
			break;
		}
	h->h_rnext = NULL;
	h->h_releasing = NULL;
}

/*
 * A piece of h's release: its waiters and up to `max' of its records
 * (all of them: SIZE_MAX), each(record, arg) for every one of its own.
 */
static enum nlm_rel
nlm_host_release_piece(struct nlm_host *h, const char *why, size_t max,
    const void *owner, void (*each)(const struct lk_record *, void *),
    void *arg)
{
	const struct lk_result *res;
	enum lk_status st;
	size_t i, mine = 0, left, dropped;
	char hs[300];

	st = lk_host_release_some(nlm->n_table, h->h_id, ev_now_ms(), max,
	    &left, &res);
	if (st != LK_OK) {
		/*
		 * LK_NOMEM: nothing changed, the host must stay to retry.
		 * One release that failed, however often it is tried again
		 * until it completes (the release timer every second, a
		 * re-sent SM_NOTIFY, FREE_ALL, LOCK): before, every try
		 * counted, and the counter ran up a second at a time.
		 */
		if (!h->h_rel_nomem) {
			h->h_rel_nomem = true;
			nlm->n_stats.release_failed++;
		}
		log_rl_warnx(&rl_release_failed,
		    "host %s: cannot release what it holds (%s): %s; kept",
		    nlm_host_str(h, hs, sizeof(hs)), why, lk_strerror(st));
		return NLM_REL_FAILED;
	}
	/*
	 * Its own records only: a waiter of another host granted by the
	 * release may merge with that host's lock, whose old record is
	 * removed too.
	 */
	for (i = 0; i < res->rs_nremoved; i++)
		if (res->rs_removed[i].rc_host == h->h_id) {
			mine++;
			if (each != NULL)
				each(&res->rs_removed[i], arg);
		}
	if (h->h_releasing == NULL) {
		h->h_rel_n = 0;
		/*
		 * It restarted (or is released as if): its lockd and statd
		 * may listen on other ports now.  Cached, the old port took
		 * every GRANTED_MSG to it until the cache entry expired
		 * (120 s).
		 */
		nlm_ports_forget(&h->h_addr);
	}
	h->h_rel_n += mine;
	dropped = res->rs_ndropped;	/* res is lockcore's until its next call */
	nlm_apply(res);
	if (left > 0) {
		if (h->h_releasing == NULL) {
			h->h_releasing = why;
			nlm->n_stats.release_pieces++;
			if (owner == NULL)
				nlm_releasing_add(h);
			else
				h->h_rel_ctl = owner;
			log_rl_info(&rl_released, "host %s: releasing %zu more "
			    "locks/shares (%s), %zu a turn",
			    nlm_host_str(h, hs, sizeof(hs)), left, why,
			    owner == NULL ? nlm_release_piece() : max);
		}
		return NLM_REL_GOING;
	}
	if (h->h_releasing != NULL)
		nlm_releasing_remove(h);
	h->h_rel_ctl = NULL;
	h->h_rel_nomem = false;
	if (h->h_rel_n > 0 || dropped > 0)
		log_rl_info(&rl_released,
		    "host %s: released %zu locks/shares (%s)",
		    nlm_host_str(h, hs, sizeof(hs)), h->h_rel_n, why);
	return NLM_REL_DONE;
}

/* The next piece of the first host released in pieces; then the next. */
static void
nlm_release_next(struct ev_loop *loop, void *arg)
{
	struct nlm_host *h = nlm->n_releasing;

	(void)arg;
	if (h == NULL)
		return;
	/*
	 * This turn did a turn's worth (the first piece, say): the next --
	 * but once in a row only, or turns that requests fill would put the
	 * release off for as long as they came, the host refused meanwhile.
	 */
	if (ev_turn_full_p(loop) && !nlm->n_rel_waited) {
		nlm->n_rel_waited = true;
		ev_timer_set(loop, &nlm->n_rel_timer, 0, nlm_release_next,
		    NULL);
		return;
	}
	nlm->n_rel_waited = false;
	switch (nlm_host_release_piece(h, h->h_releasing, nlm_release_piece(),
	    NULL, NULL, NULL)) {
	case NLM_REL_FAILED:
		ev_timer_set(loop, &nlm->n_rel_timer, 1000, nlm_release_next,
		    NULL);
		return;
	case NLM_REL_DONE:
		if (h->h_rel_forget) {
			h->h_rel_forget = false;
			nlm_host_forget(h);
		}
		break;
	case NLM_REL_GOING:
		/* The others' turn: to the end of the line. */
		if (h->h_rnext != NULL) {
			nlm->n_releasing = h->h_rnext;
			nlm_releasing_add(h);
		}
		break;
	}
	if (nlm->n_releasing != NULL)
		ev_timer_set(loop, &nlm->n_rel_timer, 0, nlm_release_next,
		    NULL);
}

enum nlm_rel
nlm_host_release(struct nlm_host *h, const char *why)
{
	enum nlm_rel rel;

	rel = nlm_host_release_piece(h, why, nlm_release_piece(), NULL, NULL,
	    NULL);
	/* Done by a host that is here (a LOCK): no longer to be forgotten. */
	if (rel == NLM_REL_DONE)
		h->h_rel_forget = false;
	return rel;
}

/*
 * nlm_host_release_forget() with a first piece of at most `max' records
 * (0: none in this turn, all of them the release timer's).
 */
static bool
nlm_host_release_forget_max(struct nlm_host *h, const char *why, size_t max)
{
	switch (nlm_host_release_piece(h, why, max, NULL, NULL, NULL)) {
	case NLM_REL_FAILED:
		return false;
	case NLM_REL_GOING:
		h->h_rel_forget = true;
		/*
		 * It told us it restarted: owed no SM_NOTIFY from now on, not
		 * from the last piece (nlm_notify_resume() starts none).
		 */
		nlm_notify_stop(h);
		return true;
	default:
		h->h_rel_forget = false;
		nlm_host_forget(h);
		return true;
	}
}

bool
nlm_host_release_forget(struct nlm_host *h, const char *why)
{
	return nlm_host_release_forget_max(h, why, nlm_release_piece());
}

enum nlm_rel
nlm_host_release_list(struct nlm_host *h, const char *why, size_t max,
    const void *owner, void (*each)(const struct lk_record *, void *),
    void *arg)
{
	enum nlm_rel rel;

	if ((rel = nlm_host_release_piece(h, why, max, owner, each, arg)) ==
	    NLM_REL_DONE && h->h_rel_forget) {
		/* It finished a release whose host was to go. */
		h->h_rel_forget = false;
		nlm_host_forget(h);
	}
	return rel;
}

void
nlm_host_release_handover(struct nlm_host *h, const void *owner)
{
	struct nlm_host *o;

	if (h->h_rel_ctl == NULL || h->h_rel_ctl != owner)
		return;
	h->h_rel_ctl = NULL;
	for (o = nlm->n_releasing; o != NULL && o != h; o = o->h_rnext)
		;
	if (o == NULL)
		nlm_releasing_add(h);
}

struct nlm_host *
nlm_host_by_id(uint64_t id)
{
	struct nlm_host *h = NULL;

	if (nlm->n_ibuckets > 0)
		for (h = nlm->n_ids[id & (nlm->n_ibuckets - 1)]; h != NULL &&
		    h->h_id != id; h = h->h_inext)
			;
	return h;
}

void
nlm_host_foreach(void (*fn)(struct nlm_host *, void *), void *arg)
{
	struct nlm_host *h, *next;
	size_t b;

	for (b = 0; b < nlm->n_hbuckets; b++)
		for (h = nlm->n_hosts[b]; h != NULL; h = next) {
			next = h->h_next;
			fn(h, arg);
		}
}

/*
 * A host that restarted, as a status monitor reported: release it (a
 * first piece of at most `max' records now, the rest the release timer's)
 * and take it off the list, unless `state' is the one it already gave us.
 * Returns 1 when released.  A host whose locks could not be released
 * (out of memory) stays, with its record and its state, so that a re-sent
 * SM_NOTIFY or a FREE_ALL can try again: forgotten, its locks would stay
 * in the table and the store under an id nothing releases any more.
 */
static unsigned
nlm_host_restarted(struct nlm_host *h, int32_t state, unsigned *unchanged,
    size_t max)
{
	/*
	 * A restart it told us of is being released, in pieces, and the
	 * host forgotten at the end (h_rel_forget): as good as gone, as
	 * it would be had the release been one piece -- this is that
	 * restart re-sent or told another way, not one more to act on and
	 * count.
	 */
	if (h->h_rel_forget) {
		nlm->n_stats.notify_gone++;
		return 0;
	}
	if (state != 0 && h->h_state == state) {
		if (unchanged != NULL)
			(*unchanged)++;
		return 0;
	}
	return nlm_host_release_forget_max(h, "status monitor: host restarted",
	    max) ? 1 : 0;
}

/* Remember v in n_gone (the oldest goes). */
static void
nlm_gone_put(uint64_t v)
{
	nlm->n_gone[nlm->n_ngone++ % NLM_HOST_GONE] = v;
}

/* Remember that the host (address, name) left (see n_gone). */
static void
nlm_gone_add(const struct nlm_host *h)
{
	nlm_gone_put(h->h_hash);
}

/*
 * An SM_NOTIFY (ss, name, state) that released the one host at ss under
 * another name (nlm_host_unnamed()), in n_gone beside the hosts: the
 * host's own (address, name) says nothing about `name', so without it the
 * same notification re-sent would find whichever host came to ss since.
 * The state is in the key: the next restart of that client is a new one.
 */
static uint64_t
nlm_gone_notify_key(const struct sockaddr_storage *ss, const char *name,
    int32_t state)
{
	uint64_t hv = nlm_host_hash(ss, name);

	return lk_siphash(nlm->n_conf.nc_hash_key, (uint32_t)state, &hv,
	    sizeof(hv));
}

/* Was the SM_NOTIFY (ss, name, state) acted on lately (state 0: never)? */
static bool
nlm_gone_notified(const struct sockaddr_storage *ss, const char *name,
    int32_t state)
{
	uint64_t nv;
	size_t i, n;

	if (state == 0)
		return false;
	nv = nlm_gone_notify_key(ss, name, state);
	n = nlm->n_ngone < NLM_HOST_GONE ? (size_t)nlm->n_ngone :
	    NLM_HOST_GONE;
	for (i = 0; i < n; i++)
		if (nlm->n_gone[i] == nv)
			return true;
	return false;
}

/* Remember that the SM_NOTIFY (ss, name, state) released a host. */
static void
nlm_gone_notify_add(const struct sockaddr_storage *ss, const char *name,
    int32_t state)
{
	nlm_gone_put(nlm_gone_notify_key(ss, name, state));
}

/* Did a host (ss, name) leave lately, or was (ss, name, state) acted on? */
static bool
nlm_gone_find(const struct sockaddr_storage *ss, const char *name,
    int32_t state)
{
	uint64_t hv = nlm_host_hash(ss, name);
	uint64_t nv = nlm_gone_notify_key(ss, name, state);
	size_t i, n;

	n = nlm->n_ngone < NLM_HOST_GONE ? (size_t)nlm->n_ngone :
	    NLM_HOST_GONE;
	for (i = 0; i < n; i++)
		if (nlm->n_gone[i] == hv || nlm->n_gone[i] == nv)
			return true;
	return false;
}

/*
 * WHICH HOSTS AN SM_NOTIFY RELEASES (nlm_host_notified(), and
 * nlm_host_unnamed() when no host has its name).  Its mon_name is the
 * name the client's status monitor goes by, usually its lock manager's
 * caller_name: then it names one host, (sender's address, mon_name).
 * Otherwise:
 *
 *   - a name we know at other addresses only: someone speaks for a host
 *     from an address it never used -- nothing;
 *   - the name of a host that left from this address lately (n_gone): it
 *     was released already (this is a re-sent notification, or one of
 *     several monitor entries) or swept while idle, holding nothing --
 *     nothing; likewise a notification (address, name, state) that
 *     released a host by the next rule lately: re-sent, it is about that
 *     host, not about one that came to the address since.  Such a
 *     release is remembered under the host's caller_name too, and one by
 *     that name under the other forms: sm-notify tells one restart under
 *     two names, and a client back in between with NM_LOCK or SHARE only
 *     (no state to tell it by) must not lose what it took since to the
 *     same restart told under the other name;
 *   - a name we do not know at all: the status monitor may go by
 *     another form of its lock manager's name -- sm-notify sends the
 *     name it was monitored under and then, if that has a dot, the
 *     name cut at the first dot; with -v an address, the one it sends
 *     from; a name's case may differ.  The host at the sender's address
 *     is that machine if it is the only one there and `name' is such a
 *     form of its caller_name (nlm_name_other_form()).  One host known
 *     at an address is not one machine there: behind NAT the others may
 *     just have left (released, swept while idle, or before our
 *     restart, which n_gone does not survive), and the short name
 *     re-sent after a neighbour's full one would release the host still
 *     there, whose locks then go to others without its knowing.  So a
 *     name of no such form releases nothing (counted, logged), and
 *     neither does any name when there are several hosts at the address
 *     (NAT, containers: nothing says which one restarted).  A client
 *     whose status monitor goes by an unrelated name loses its old locks
 *     when it next locks with its new NSM state (nlm_host_monitor()), or
 *     by the operator's hand.
 */
/*
 * Is `mon' another form of the caller_name `caller' of a host at `ss' (see
 * above): the same name but for case, one of them the other cut at its
 * first dot, or a numeric address equal to ss?
 */
static bool
nlm_name_other_form(const char *mon, const char *caller,
    const struct sockaddr_storage *ss)
{
	struct in6_addr a6;
	struct in_addr a4;
	size_t lm = strcspn(mon, "."), lc = strcspn(caller, ".");

	if (strcasecmp(mon, caller) == 0)
		return true;
	if (lm == lc && lm > 0 && (mon[lm] == '\0') != (caller[lc] == '\0') &&
	    strncasecmp(mon, caller, lm) == 0)
		return true;
	if (ss->ss_family == AF_INET && inet_pton(AF_INET, mon, &a4) == 1)
		return memcmp(&a4, &((const struct sockaddr_in *)
		    (const void *)ss)->sin_addr, sizeof(a4)) == 0;
	if (ss->ss_family == AF_INET6 && inet_pton(AF_INET6, mon, &a6) == 1)
		return memcmp(&a6, &((const struct sockaddr_in6 *)
		    (const void *)ss)->sin6_addr, sizeof(a6)) == 0;
	return false;
}

bool
nlm_notify_name_ok(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	struct in6_addr a6;
	struct in_addr a4;
	size_t i;

	/* The characters of a caller_name (nlm_proc.c: nlm_name_ok()). */
	for (i = 0; p[i] != '\0'; i++)
		if ((unsigned char)(p[i] - 0x20) > 0x7e - 0x20 || p[i] == '/')
			return false;
	/* A caller_name, or its full name: the first label is one. */
	if (strcspn(name, ".") <= nlm->n_conf.nc_max_name)
		return true;
	/* The sender's address (an IPv6 one may outgrow a small limit). */
	return inet_pton(AF_INET6, name, &a6) == 1 ||
	    inet_pton(AF_INET, name, &a4) == 1;
}

static unsigned
nlm_host_unnamed(const struct sockaddr_storage *ss, const char *name,
    int32_t state, unsigned *same)
{
	struct nlm_addrcount *ac;
	struct nlm_host *h;
	uint64_t hv;
	unsigned n;
	char a[64];

	if (nlm_gone_find(ss, name, state)) {
		nlm->n_stats.notify_gone++;
		return 0;
	}
	if ((ac = nlm_addr_find(ss, nlm_addr_hash(ss))) == NULL)
		return 0;
	if (ac->ac_count == 1 && nlm_name_other_form(name,
	    ac->ac_hosts->h_name, ss)) {
		h = ac->ac_hosts;
		/* This restart acted on under the host's own name: re-sent. */
		if (h->h_state != state && nlm_gone_notified(ss, h->h_name,
		    state)) {
			nlm->n_stats.notify_gone++;
			return 0;
		}
		/* Keyed now: the release may free h. */
		hv = nlm_gone_notify_key(ss, h->h_name, state);
		if ((n = nlm_host_restarted(h, state, same,
		    nlm_release_piece())) > 0 && state != 0) {
			/* Under both: either may come again (see above). */
			nlm_gone_notify_add(ss, name, state);
			nlm_gone_put(hv);
		}
		return n;
	}
	if (ac->ac_count == 1) {
		nlm->n_stats.notify_unmatched++;
		log_rl_warnx(&rl_ambiguous, "SM_NOTIFY for %s from %s: no "
		    "host of that name; the one host at that address, %s, "
		    "goes by another: not released (a neighbour's "
		    "notification?)", name, addr_str((const struct sockaddr *)
		    ss, 0, a, sizeof(a)), ac->ac_hosts->h_name);
		return 0;
	}
	nlm->n_stats.notify_ambiguous++;
	log_rl_warnx(&rl_ambiguous, "SM_NOTIFY for %s from %s: no host of "
	    "that name, %u hosts at that address: none released (which one "
	    "restarted?)", name, addr_str((const struct sockaddr *)ss, 0, a,
	    sizeof(a)), ac->ac_count);
	return 0;
}

unsigned
nlm_host_notified(const char *name, int32_t state,
    const struct sockaddr *addr, socklen_t addrlen, unsigned *unchanged)
{
	struct sockaddr_storage ss;
	struct nlm_host *h;
	unsigned n = 0, same = 0;

	if (addrlen > sizeof(ss))
		return 0;
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, addr, addrlen);
	addr_unmap(&ss, &addrlen);
	if ((h = nlm_host_find(&ss, name)) != NULL) {
		/*
		 * The notification of a restart acted on already, re-sent (its
		 * answer lost) or late: the host here now came after it, and
		 * what it holds was taken since.  Only the state a host gave
		 * in a LOCK tells (h_state); one that only shares or uses
		 * NM_LOCK has none.
		 */
		if (h->h_state != state && nlm_gone_notified(&ss, name,
		    state)) {
			nlm->n_stats.notify_gone++;
			n = 0;
		} else if ((n = nlm_host_restarted(h, state, &same,
		    nlm_release_piece())) > 0 &&
		    state != 0)
			nlm_gone_notify_add(&ss, name, state);
	} else if (nlm_host_named(name) == NULL)
		n = nlm_host_unnamed(&ss, name, state, &same);
	if (unchanged != NULL)
		*unchanged = same;
	nlm->n_stats.notified += n;
	return n;
}

unsigned
nlm_host_rebooted(const char *name, int32_t state)
{
	struct nlm_host *h, *next;
	unsigned n = 0;

	/*
	 * A first piece for the first host released; the others' releases
	 * are the timer's, a piece a turn: a first piece each here was as
	 * many turns' budgets in this one as there are hosts of the name.
	 * A host whose LOCKs carry `state' already came back from that
	 * restart (its LOCK released what it held before) and holds what it
	 * was granted since: kept, as Linux lockd keeps it
	 * (next_host_state()), or a procedure 16 re-sent or late released
	 * it.
	 */
	for (h = nlm_host_named(name); h != NULL; h = next) {
		next = h->h_nnext;
		n += nlm_host_restarted(h, state, NULL, n == 0 ?
		    nlm_release_piece() : 0);
	}
	return n;
}

/* Unlinked already: delete the record, free. */
static void
nlm_host_drop(struct nlm_host *h)
{
	nlm_notify_stop(h);
	nlm_index_del(h);
	nlm_list_remove(h);
	nlm_memo_forget(h);
	nlm_gone_add(h);
	nlm_store_check(store_del_host(nlm->n_store, h->h_id),
	    "staging a host removal");
	free(h->h_name);
	free(h);
	nlm->n_nhosts--;
	nlm->n_stats.hosts = nlm->n_nhosts;
}

void
nlm_host_forget(struct nlm_host *h)
{
	struct nlm_host **pp;
	size_t b;

	nlm_notify_settle(h);
	if (h->h_grants > 0) {
		h->h_seen = 0;	/* the next sweep takes it */
		return;
	}
	b = h->h_hash & (nlm->n_hbuckets - 1);
	for (pp = &nlm->n_hosts[b]; *pp != NULL; pp = &(*pp)->h_next)
		if (*pp == h) {
			*pp = h->h_next;
			nlm_host_drop(h);
			return;
		}
}

/* ---- idle host sweep ---- */

/*
 * Free hosts that hold nothing, wait for nothing and have been idle: a
 * turn's budget of them (nlm_release_piece()) at most, the rest in the
 * turns that follow, then again a minute later.  100,000 short-lived
 * clients gone idle together were otherwise forgotten in one turn, each
 * a record deleted in its commit, every other client waiting on it.  A
 * host's share of the lock table is looked up by id (O(1)): no list of
 * the table's hosts to collect and sort at each sweep.  A host kept is
 * also the notifier's to look at: an SM_NOTIFY owed but not being sent,
 * for want of memory, is taken up again (nlm_notify_resume()).
 */
static void
nlm_gc(struct ev_loop *loop, void *arg)
{
	struct lk_host_info hi;
	struct nlm_host **pp, *h;
	uint64_t now = ev_now_ms();
	uint64_t idle_ms = (uint64_t)nlm->n_conf.nc_host_idle_sec * 1000;
	size_t b, dropped = 0, budget = nlm_release_piece();

	(void)arg;
	/*
	 * A sweep carried on from the last turn goes on from the bucket it
	 * stopped in, not from the first again (those before it were swept;
	 * after the table grew, a host missed waits for the next sweep).
	 */
	for (b = nlm->n_gc_bucket; b < nlm->n_hbuckets && dropped < budget;
	    b++) {
		pp = &nlm->n_hosts[b];
		while ((h = *pp) != NULL && dropped < budget) {
			/* One released in pieces is its release's. */
			if (h->h_grants == 0 && h->h_notify_since == 0 &&
			    h->h_releasing == NULL &&
			    now - h->h_seen >= idle_ms &&
			    !lk_host_info(nlm->n_table, h->h_id, &hi)) {
				*pp = h->h_next;
				nlm_host_drop(h);
				dropped++;
				continue;
			}
			nlm_notify_resume(h);
			pp = &h->h_next;
		}
	}
	nlm->n_stats.hosts = nlm->n_nhosts;
	/* Out of budget: the rest next turn, from this bucket. */
	if (dropped >= budget) {
		nlm->n_gc_bucket = b > 0 ? b - 1 : 0;
		ev_timer_set(loop, &nlm->n_gc, 0, nlm_gc, NULL);
		return;
	}
	nlm->n_gc_bucket = 0;
	nlm_out_gc();
	ev_timer_set(loop, &nlm->n_gc, HOST_GC_MS, nlm_gc, NULL);
}

void
nlm_host_gc_start(void)
{
	ev_timer_set(nlm->n_loop, &nlm->n_gc, HOST_GC_MS, nlm_gc, NULL);
}

void
nlm_host_free_all(void)
{
	struct nlm_host *h;
	size_t b;

	/* Cursors still out are freed by their owners: take them off. */
	while ((h = nlm->n_hfirst) != NULL) {
		nlm_list_remove(h);
		h->h_cursor = false;
	}

	for (b = 0; b < nlm->n_hbuckets; b++)
		while ((h = nlm->n_hosts[b]) != NULL) {
			nlm->n_hosts[b] = h->h_next;
			nlm_notify_stop(h);
			free(h->h_name);
			free(h);
		}
	free(nlm->n_hosts);
	nlm->n_hosts = NULL;
	nlm->n_hbuckets = 0;
	memset(nlm->n_memo, 0, sizeof(nlm->n_memo));
	nlm->n_nhosts = 0;
	nlm_index_free_all();
}
