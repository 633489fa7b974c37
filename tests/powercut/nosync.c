/*
 * nosync.c - an LD_PRELOAD shim that takes flushes away: fsync,
 * fdatasync, syncfs, sync_file_range and msync succeed without doing
 * anything.  tests/integration/test_powercut.sh runs nlmd under it in
 * boots of its guest, whose kernel writes nothing back on its own:
 *   - as a control, to show that its checks see what a power cut takes
 *     from a server that does not flush (a check that never fails would
 *     pass without it too);
 *   - with NOSYNC_EXCEPT_MAIN set, fsync and fdatasync of the process's
 *     main thread (nlmd's event loop) still go to the kernel, so that
 *     under durability log only the loop's own flushes -- a new client
 *     host's first record -- reach the disk, not the checkpoint thread's
 *     periodic ones: the host records must then survive a cut that loses
 *     the locks.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

int	fsync(int);
int	fdatasync(int);
int	syncfs(int);
void	sync(void);
int	msync(void *, size_t, int);

/* Let this call through: the main thread, and NOSYNC_EXCEPT_MAIN set. */
static bool
nosync_through(void)
{
	return getenv("NOSYNC_EXCEPT_MAIN") != NULL &&
	    syscall(SYS_gettid) == getpid();
}

int
fsync(int fd)
{
	if (nosync_through())
		return (int)syscall(SYS_fsync, fd);
	return 0;
}

int
fdatasync(int fd)
{
	if (nosync_through())
		return (int)syscall(SYS_fdatasync, fd);
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
