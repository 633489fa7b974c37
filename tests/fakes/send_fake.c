/*
 * send_fake.c - the two sending functions of rpc/rpcsend.h, recording
 * every send with the fake store's state at that moment (see fakes.h),
 * then sending for real through the real code, compiled in here under
 * other names.
 */
#define onc_send_from	real_rpc_send_from
#define onc_send_many	real_rpc_send_many
#define onc_stream_send	real_rpc_stream_send
#include "rpc/rpcsend.c"
#undef onc_send_from
#undef onc_send_many
#undef onc_stream_send

#include <stdlib.h>
#include <unistd.h>

#include "fakes.h"

enum onc_status onc_send_from(int, const void *, size_t,
	    const struct sockaddr_storage *, socklen_t,
	    const struct sockaddr_storage *);
ssize_t	onc_stream_send(int, const void *, size_t);
size_t	onc_send_many(int, const struct onc_dgram *, size_t, size_t *);

#define FAKE_MAXSENDS	4096

static struct fake_send fs_log[FAKE_MAXSENDS];
static size_t fs_n;
static int fs_mirror = -1;
static void (*fs_hook)(const struct fake_send *);
static uint16_t fs_fail_port;	/* fake_send_fail() */
static unsigned fs_fail_n;

static void
fs_record(int stream, uint16_t dport, const void *buf, size_t len)
{
	struct fake_send *f;

	if (fs_n == FAKE_MAXSENDS)
		return;
	f = &fs_log[fs_n++];
	memset(f, 0, sizeof(*f));
	f->fs_stream = stream;
	f->fs_dport = dport;
	f->fs_len = len;
	f->fs_staged = fake_store_staged();
	f->fs_uncommitted = fake_store_uncommitted();
	f->fs_commits = fake_store_commits();
	memcpy(f->fs_buf, buf, len < sizeof(f->fs_buf) ? len : sizeof(f->fs_buf));
	if (fs_mirror != -1 && write(fs_mirror, f, sizeof(*f)) == -1)
		fs_mirror = -1;
	if (fs_hook != NULL)
		fs_hook(f);
}

enum onc_status
onc_send_from(int fd, const void *buf, size_t len,
    const struct sockaddr_storage *dst, socklen_t dstlen,
    const struct sockaddr_storage *src)
{
	uint16_t port = 0;

	if (dst->ss_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)(const void *)dst)->
		    sin_port);
	else if (dst->ss_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)(const void *)dst)->
		    sin6_port);
	fs_record(0, port, buf, len);
	if (fs_fail_n > 0 && port == fs_fail_port) {
		fs_fail_n--;
		return ONC_SEND;	/* as a hard error of sendmsg(2) */
	}
	return real_rpc_send_from(fd, buf, len, dst, dstlen, src);
}

void
fake_send_fail(uint16_t port, unsigned n)
{
	fs_fail_port = port;
	fs_fail_n = n;
}

ssize_t
onc_stream_send(int fd, const void *buf, size_t len)
{
	fs_record(1, 0, buf, len);
	return real_rpc_stream_send(fd, buf, len);
}

size_t
fake_sends(void)
{
	return fs_n;
}

const struct fake_send *
fake_send_get(size_t i)
{
	return i < fs_n ? &fs_log[i] : NULL;
}

void
fake_send_reset(void)
{
	fs_n = 0;
	fs_fail_n = 0;
}

void
fake_send_mirror(int fd)
{
	fs_mirror = fd;
}

void
fake_send_hook(void (*fn)(const struct fake_send *))
{
	fs_hook = fn;
}

/* One by one through the recording onc_send_from(). */
size_t
onc_send_many(int fd, const struct onc_dgram *d, size_t n, size_t *nfull)
{
	return onc_send_each(fd, d, n, nfull, onc_send_from);
}
