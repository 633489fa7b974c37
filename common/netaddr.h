/*
 * netaddr.h - socket address helpers every module uses (formatting,
 * IPv4-mapped IPv6 addresses, comparisons).  No protocol knowledge.
 */
#ifndef NLMD_COMMON_NETADDR_H
#define NLMD_COMMON_NETADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/*
 * Format a socket address as "a.b.c.d:port" / "[v6]:port" (port omitted
 * when `with_port' is 0).  IPv4-mapped IPv6 addresses print as IPv4.
 */
const char	*addr_str(const struct sockaddr *sa, int with_port,
		    char *buf, size_t len);

/*
 * Is `ss' (IPv4-mapped form accepted) a loopback address with a privileged
 * source port (< 1024), i.e. root on this host?  The rule nfs-utils and
 * Linux apply to status-monitor notifications and SM_SIMU_CRASH.
 */
int	addr_local_privileged(const struct sockaddr_storage *ss,
	    socklen_t len);

/*
 * Normalise an IPv4-mapped IPv6 address to AF_INET in place; other
 * addresses are left alone.  Updates *len.
 */
void	addr_unmap(struct sockaddr_storage *ss, socklen_t *len);

/*
 * Parse "a.b.c.d:PORT", "[v6]:PORT", or ":PORT" (every address: IPv6's
 * wildcard, which serves IPv4 too on a dual-stack host) into `ss', the
 * port in network order.  0, or -1 when `s' is none of these (a host
 * name is not looked up).
 */
int	addr_parse_port(const char *s, struct sockaddr_storage *ss);
/*
 * An IPv6 address, "fe80::1" or with a scope "fe80::1%eth0" (an interface
 * name or index, not looked up here): *a6 := the address, *scopep := the
 * scope, "" when none is written.  0, or -1 when s is no IPv6 address or
 * its scope is empty or cannot be an interface's name.
 */
struct in6_addr;
int	addr_parse6(const char *s, struct in6_addr *a6, const char **scopep);
/*
 * The interface index a "%scope" names: an interface's name, or its index
 * in digits.  With `exists', an index must be an interface's now (a bind
 * address); without, any index from 1 is taken (a host's recorded scope,
 * whose interface may have gone).  0 when there is no such interface.
 */
unsigned	addr_scope_id(const char *scope, bool exists);
/*
 * Format an address without its port as addr_str() does, and for an IPv6
 * link-local address with a known interface the interface too:
 * "fe80::1%eth0" (its index when it has no name now, "fe80::1%7") -- the
 * form addr_parse6() and addr_scope_id() read back.
 */
const char	*addr_str_scoped(const struct sockaddr *sa, char *buf,
		    size_t len);

/*
 * Same host address (IPv4 or IPv6), whatever the ports?  No unmapping.
 * IPv6 link-local addresses also need the same interface (sin6_scope_id)
 * unless either's is 0 (not known).
 */
bool	addr_same_host(const struct sockaddr_storage *a,
	    const struct sockaddr_storage *b);
/* Same host address and port? */
bool	addr_same(const struct sockaddr_storage *a,
	    const struct sockaddr_storage *b);

#endif
