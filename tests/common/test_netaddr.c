/*
 * test_netaddr.c - common/netaddr.c: formatting, IPv4-mapped addresses,
 * the loopback-and-privileged-port rule, comparisons.
 */
#include "ct.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "netaddr.h"

static socklen_t
v4(struct sockaddr_storage *ss, const char *a, unsigned port)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	CU_ASSERT_EQUAL_FATAL(inet_pton(AF_INET, a, &s4->sin_addr), 1);
	return sizeof(*s4);
}

static socklen_t
v6(struct sockaddr_storage *ss, const char *a, unsigned port)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons((uint16_t)port);
	CU_ASSERT_EQUAL_FATAL(inet_pton(AF_INET6, a, &s6->sin6_addr), 1);
	return sizeof(*s6);
}

static void
test_str(void)
{
	struct sockaddr_storage ss;
	char buf[64];

	v4(&ss, "192.0.2.7", 4045);
	CU_ASSERT_STRING_EQUAL(addr_str((struct sockaddr *)&ss, 1, buf,
	    sizeof(buf)), "192.0.2.7:4045");
	CU_ASSERT_STRING_EQUAL(addr_str((struct sockaddr *)&ss, 0, buf,
	    sizeof(buf)), "192.0.2.7");
	v6(&ss, "2001:db8::1", 111);
	CU_ASSERT_STRING_EQUAL(addr_str((struct sockaddr *)&ss, 1, buf,
	    sizeof(buf)), "[2001:db8::1]:111");
	/* Mapped addresses print as IPv4. */
	v6(&ss, "::ffff:198.51.100.2", 9);
	CU_ASSERT_STRING_EQUAL(addr_str((struct sockaddr *)&ss, 1, buf,
	    sizeof(buf)), "198.51.100.2:9");
	ss.ss_family = AF_UNIX;
	CU_ASSERT_STRING_EQUAL(addr_str((struct sockaddr *)&ss, 1, buf,
	    sizeof(buf)), "(family 1)");
}

static void
test_unmap_and_privileged(void)
{
	struct sockaddr_storage ss;
	socklen_t len;

	len = v6(&ss, "::ffff:127.0.0.1", 700);
	addr_unmap(&ss, &len);
	CU_ASSERT_EQUAL(ss.ss_family, AF_INET);
	CU_ASSERT_EQUAL(len, sizeof(struct sockaddr_in));
	CU_ASSERT_EQUAL(ntohs(((struct sockaddr_in *)&ss)->sin_port), 700);
	len = v6(&ss, "2001:db8::1", 700);
	addr_unmap(&ss, &len);
	CU_ASSERT_EQUAL(ss.ss_family, AF_INET6);

	len = v4(&ss, "127.0.0.1", 1023);
	CU_ASSERT_TRUE(addr_local_privileged(&ss, len));
	len = v4(&ss, "127.0.0.1", 1024);
	CU_ASSERT_FALSE(addr_local_privileged(&ss, len));
	len = v4(&ss, "192.0.2.1", 111);
	CU_ASSERT_FALSE(addr_local_privileged(&ss, len));
	len = v6(&ss, "::1", 600);
	CU_ASSERT_TRUE(addr_local_privileged(&ss, len));
	len = v6(&ss, "::ffff:127.0.0.2", 600);
	CU_ASSERT_TRUE(addr_local_privileged(&ss, len));
}

static void
test_same(void)
{
	struct sockaddr_storage a, b;

	v4(&a, "192.0.2.1", 1);
	v4(&b, "192.0.2.1", 2);
	CU_ASSERT_TRUE(addr_same_host(&a, &b));
	CU_ASSERT_FALSE(addr_same(&a, &b));
	v4(&b, "192.0.2.1", 1);
	CU_ASSERT_TRUE(addr_same(&a, &b));
	v4(&b, "192.0.2.2", 1);
	CU_ASSERT_FALSE(addr_same_host(&a, &b));
	v6(&a, "2001:db8::1", 5);
	v6(&b, "2001:db8::1", 5);
	CU_ASSERT_TRUE(addr_same(&a, &b));
	v6(&b, "2001:db8::2", 5);
	CU_ASSERT_FALSE(addr_same_host(&a, &b));
	v4(&b, "192.0.2.1", 5);
	CU_ASSERT_FALSE(addr_same_host(&a, &b));
}

/*
 * fe80::1 on two links is two machines: a reply from the one on link 3
 * must not complete a call to the one on link 2 (rpcout.c matches
 * replies with addr_same()).  It used to: the scope was not compared.
 * A scope not known (0) matches any; other addresses ignore it.
 */
static void
test_same_link_local(void)
{
	struct sockaddr_storage a, b;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&a;
	struct sockaddr_in6 *b6 = (struct sockaddr_in6 *)&b;

	v6(&a, "fe80::1", 5);
	v6(&b, "fe80::1", 5);
	a6->sin6_scope_id = 2;
	b6->sin6_scope_id = 3;
	CU_ASSERT_FALSE(addr_same_host(&a, &b));
	CU_ASSERT_FALSE(addr_same(&a, &b));
	b6->sin6_scope_id = 2;
	CU_ASSERT_TRUE(addr_same(&a, &b));
	b6->sin6_scope_id = 0;
	CU_ASSERT_TRUE(addr_same(&a, &b));
	v6(&a, "ff02::1", 5);
	v6(&b, "ff02::1", 5);
	a6->sin6_scope_id = 2;
	b6->sin6_scope_id = 3;
	CU_ASSERT_FALSE(addr_same_host(&a, &b));
	v6(&a, "2001:db8::1", 5);
	v6(&b, "2001:db8::1", 5);
	a6->sin6_scope_id = 2;
	b6->sin6_scope_id = 3;
	CU_ASSERT_TRUE(addr_same(&a, &b));
}

/* An IPv6 address and its scope, as bind-address takes them. */
static void
test_parse6(void)
{
	static const char *const bad[] = { "10.0.0.1", "fe80::1%",
	    "fe80::1%a%b", "fe80::1%0123456789abcdef", "fe80::1%a b",
	    "10.0.0.1%eth0", "host%eth0" };
	struct in6_addr a6, want;
	const char *scope;
	size_t i;

	CU_ASSERT_EQUAL(addr_parse6("2001:db8::1", &a6, &scope), 0);
	CU_ASSERT_STRING_EQUAL(scope, "");
	CU_ASSERT_EQUAL(inet_pton(AF_INET6, "fe80::9", &want), 1);
	CU_ASSERT_EQUAL(addr_parse6("fe80::9%eth0", &a6, &scope), 0);
	CU_ASSERT_STRING_EQUAL(scope, "eth0");
	CU_ASSERT(memcmp(&a6, &want, sizeof(want)) == 0);
	CU_ASSERT_EQUAL(addr_parse6("fe80::9%2", &a6, &scope), 0);
	CU_ASSERT_STRING_EQUAL(scope, "2");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(addr_parse6(bad[i], &a6, &scope), -1);
}

/*
 * A "%scope" to an interface index, by name or digits (an index only if
 * it is an interface's now, when asked), and back: a link-local address
 * formatted with its interface's name, or the index when there is no
 * interface of that index; other addresses without.  (nlmctl's release
 * addr= reads what the status prints.)
 */
static void
test_scope(void)
{
	static const char *const none[] = { "", "0", "12x", "-1",
	    "4294967296", "nlmt-nosuch0" };
	struct sockaddr_in6 *s6;
	struct sockaddr_storage ss;
	char buf[64], want[64], ifn[IF_NAMESIZE], num[16];
	unsigned lo = if_nametoindex("lo"), gone;
	size_t i;

	CU_ASSERT_FATAL(lo != 0);
	/* An index no interface has. */
	for (gone = 1000000; if_indextoname(gone, ifn) != NULL; gone++)
		;
	snprintf(num, sizeof(num), "%u", lo);
	CU_ASSERT_EQUAL(addr_scope_id("lo", true), lo);
	CU_ASSERT_EQUAL(addr_scope_id("lo", false), lo);
	CU_ASSERT_EQUAL(addr_scope_id(num, true), lo);
	snprintf(num, sizeof(num), "%u", gone);
	CU_ASSERT_EQUAL(addr_scope_id(num, true), 0);
	CU_ASSERT_EQUAL(addr_scope_id(num, false), gone);
	for (i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		CU_ASSERT_EQUAL(addr_scope_id(none[i], true), 0);
		CU_ASSERT_EQUAL(addr_scope_id(none[i], false), 0);
	}

	s6 = (struct sockaddr_in6 *)&ss;
	v6(&ss, "fe80::1", 4045);
	CU_ASSERT_STRING_EQUAL(addr_str_scoped((struct sockaddr *)&ss, buf,
	    sizeof(buf)), "fe80::1");
	s6->sin6_scope_id = lo;
	CU_ASSERT_STRING_EQUAL(addr_str_scoped((struct sockaddr *)&ss, buf,
	    sizeof(buf)), "fe80::1%lo");
	/* Too short for the interface: the address alone. */
	CU_ASSERT_STRING_EQUAL(addr_str_scoped((struct sockaddr *)&ss, buf,
	    sizeof("fe80::1")), "fe80::1");
	s6->sin6_scope_id = gone;
	snprintf(want, sizeof(want), "fe80::1%%%u", gone);
	CU_ASSERT_STRING_EQUAL(addr_str_scoped((struct sockaddr *)&ss, buf,
	    sizeof(buf)), want);
	v6(&ss, "ff02::1", 0);
	s6->sin6_scope_id = lo;
	CU_ASSERT_STRING_EQUAL(addr_str_scoped((struct sockaddr *)&ss, buf,
	    sizeof(buf)), "ff02::1%lo");
	/* Not link-local: the scope is not part of the address. */
	v6(&ss, "2001:db8::1", 0);
	s6->sin6_scope_id = lo;
	CU_ASSERT_STRING_EQUAL(addr_str_scoped((struct sockaddr *)&ss, buf,
	    sizeof(buf)), "2001:db8::1");
	v4(&ss, "192.0.2.7", 4045);
	CU_ASSERT_STRING_EQUAL(addr_str_scoped((struct sockaddr *)&ss, buf,
	    sizeof(buf)), "192.0.2.7");
}

int
ct_register_netaddr(void)
{
	CU_pSuite s = CU_add_suite("netaddr", NULL, NULL);

	if (s == NULL ||
	    !CU_add_test(s, "addr_str", test_str) ||
	    !CU_add_test(s, "unmap, local privileged",
	    test_unmap_and_privileged) ||
	    !CU_add_test(s, "same host, same address", test_same) ||
	    !CU_add_test(s, "link-local: the same on one link only",
	    test_same_link_local) ||
	    !CU_add_test(s, "an IPv6 address and its scope", test_parse6) ||
	    !CU_add_test(s, "a scope's interface index, and back", test_scope))
		return -1;
	return 0;
}
