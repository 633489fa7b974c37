/*
 * nosync.c - an LD_PRELOAD shim that takes every flush away: fsync,
 * fdatasync, syncfs, sync_file_range and msync succeed without doing
 * anything.  tests/integration/test_powercut.sh runs nlmd under it in one
 * boot of its guest, whose kernel writes nothing back on its own, to show
 * that its checks see what a power cut takes from a server that does not
 * flush: without this control a check that never fails would pass too.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <sys/types.h>

int	fsync(int);
int	fdatasync(int);
int	syncfs(int);
void	sync(void);
int	msync(void *, size_t, int);

int
fsync(int fd)
{
	(void)fd;
	return 0;
}

int
fdatasync(int fd)
{
	(void)fd;
	return 0;
}

int
syncfs(int fd)
{
	(void)fd;
	return 0;
}

void
sync(void)
{
}

int
sync_file_range(int fd, off_t off, off_t n, unsigned int flags)
{
	(void)fd;
	(void)off;
	(void)n;
	(void)flags;
	return 0;
}

int
msync(void *addr, size_t len, int flags)
{
	(void)addr;
	(void)len;
	(void)flags;
	return 0;
}
