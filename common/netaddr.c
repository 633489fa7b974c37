/*
 * netaddr.c - see netaddr.h.
 */
#include "netaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
addr_parse6(const char *s, struct in6_addr *a6, const char **scopep)
{
	char a[INET6_ADDRSTRLEN];
	const char *pct;

	if ((pct = strchr(s, '%')) == NULL) {
		*scopep = "";
		return inet_pton(AF_INET6, s, a6) == 1 ? 0 : -1;
	}
	if ((size_t)(pct - s) >= sizeof(a) || pct[1] == '\0' ||
	    strlen(pct + 1) >= IF_NAMESIZE || strpbrk(pct + 1, "%/ \t") != NULL)
		return -1;
	memcpy(a, s, (size_t)(pct - s));
	a[pct - s] = '\0';
	*scopep = pct + 1;
	return inet_pton(AF_INET6, a, a6) == 1 ? 0 : -1;
}

unsigned
addr_scope_id(const char *scope, bool exists)
{
	char name[IF_NAMESIZE], *end;
	unsigned long v;
	unsigned ix;

	if (scope[0] == '\0')
		return 0;
	if ((ix = if_nametoindex(scope)) != 0)
		return ix;
	if (scope[0] < '0' || scope[0] > '9')
		return 0;
	errno = 0;
	v = strtoul(scope, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0 || v > UINT32_MAX ||
	    (exists && if_indextoname((unsigned)v, name) == NULL))
		return 0;
	return (unsigned)v;
}

const char *
addr_str_scoped(const struct sockaddr *sa, char *buf, size_t len)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)
	    (const void *)sa;
	char ifn[IF_NAMESIZE];
	size_t n;

	(void)addr_str(sa, 0, buf, len);
	if (sa->sa_family != AF_INET6 || s6->sin6_scope_id == 0 ||
	    (!IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) &&
	    !IN6_IS_ADDR_MC_LINKLOCAL(&s6->sin6_addr)) ||
	    (n = strlen(buf)) + 1 >= len)
		return buf;
	if (if_indextoname(s6->sin6_scope_id, ifn) != NULL)
		snprintf(buf + n, len - n, "%%%s", ifn);
	else
		snprintf(buf + n, len - n, "%%%u", (unsigned)s6->sin6_scope_id);
	return buf;
}

int
addr_parse_port(const char *s, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	char host[128];
	const char *colon;
	unsigned long port;
	char *end;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if ((colon = strrchr(s, ':')) == NULL)
		return -1;
	port = strtoul(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || port > 65535)
		return -1;
	if ((hl = (size_t)(colon - s)) >= sizeof(host))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (hl == 0) {
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons((uint16_t)port);
		return 0;
	}
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			return -1;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
		return -1;
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	return 0;
}

void
addr_unmap(struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in s4;

	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return;
	memset(&s4, 0, sizeof(s4));
	s4.sin_family = AF_INET;
	s4.sin_port = s6->sin6_port;
	memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, &s4, sizeof(s4));
	*len = sizeof(s4);
}

int
addr_local_privileged(const struct sockaddr_storage *in, socklen_t len)
{
	struct sockaddr_storage ss = *in;

	addr_unmap(&ss, &len);
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)&ss;

		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127 &&
		    ntohs(s4->sin_port) < 1024;
	}
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)&ss;

		return IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) &&
		    ntohs(s6->sin6_port) < 1024;
	}
	return 0;
}

const char *
addr_str(const struct sockaddr *sa, int with_port, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN];
	unsigned port = 0;

	memset(&ss, 0, sizeof(ss));
	if (sa->sa_family == AF_INET)
		memcpy(&ss, sa, sizeof(struct sockaddr_in));
	else if (sa->sa_family == AF_INET6)
		memcpy(&ss, sa, sizeof(struct sockaddr_in6));
	else {
		snprintf(buf, len, "(family %d)", sa->sa_family);
		return buf;
	}
	addr_unmap(&ss, &sl);
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		port = ntohs(s4->sin_port);
		if (with_port)
			snprintf(buf, len, "%s:%u", a, port);
		else
			snprintf(buf, len, "%s", a);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		port = ntohs(s6->sin6_port);
		if (with_port)
			snprintf(buf, len, "[%s]:%u", a, port);
		else
			snprintf(buf, len, "%s", a);
	}
	return buf;
}

/* Same address, whatever the port? */
bool
addr_same_host(const struct sockaddr_storage *a,
    const struct sockaddr_storage *b)
{
	const struct sockaddr_in6 *x6, *y6;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)a)->
		    sin_addr.s_addr == ((const struct sockaddr_in *)
		    (const void *)b)->sin_addr.s_addr;
	if (a->ss_family != AF_INET6)
		return false;
	x6 = (const struct sockaddr_in6 *)(const void *)a;
	y6 = (const struct sockaddr_in6 *)(const void *)b;
	if (memcmp(&x6->sin6_addr, &y6->sin6_addr, sizeof(x6->sin6_addr)) !=
	    0)
		return false;
	/*
	 * fe80::1 on two links is two machines: a link-local address is
	 * one only with its interface.  A scope not known (0) matches any,
	 * as in nlm_addr_equal().
	 */
	if (!IN6_IS_ADDR_LINKLOCAL(&x6->sin6_addr) &&
	    !IN6_IS_ADDR_MC_LINKLOCAL(&x6->sin6_addr))
		return true;
	return x6->sin6_scope_id == 0 || y6->sin6_scope_id == 0 ||
	    x6->sin6_scope_id == y6->sin6_scope_id;
}

bool
addr_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (!addr_same_host(a, b))
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)a)->sin_port ==
		    ((const struct sockaddr_in *)(const void *)b)->sin_port;
	return ((const struct sockaddr_in6 *)(const void *)a)->sin6_port ==
	    ((const struct sockaddr_in6 *)(const void *)b)->sin6_port;
}
