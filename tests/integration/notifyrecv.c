/*
 * notifyrecv.c - the service manager's end of the sd_notify(3) protocol,
 * for tests/integration/test_systemd.sh: bind an AF_UNIX datagram socket
 * at PATH (replaced if it exists), and print every message received, one
 * line per assignment:
 *
 *   <n> pid=<sender pid> <VARIABLE=VALUE>
 *
 * where <n> counts messages from 1 and the pid is what the kernel reports
 * (SO_PASSCRED, as systemd reads it).  Output is flushed line by line.
 * Runs until killed.
 *
 *   notifyrecv PATH >messages.log &
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct sockaddr_un sun;
	char buf[4096 + 1];
	char cbuf[CMSG_SPACE(sizeof(struct ucred))];
	unsigned long n = 0;
	int fd, one = 1;

	if (argc != 2 || strlen(argv[1]) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "usage: notifyrecv PATH\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, argv[1]);
	unlink(argv[1]);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		perror("notifyrecv");
		return 1;
	}
	for (;;) {
		struct iovec iov = { buf, sizeof(buf) - 1 };
		struct msghdr mh;
		struct cmsghdr *c;
		long pid = -1;
		ssize_t r;
		char *line, *save;

		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		if ((r = recvmsg(fd, &mh, 0)) == -1) {
			if (errno == EINTR)
				continue;
			perror("notifyrecv: recvmsg");
			return 1;
		}
		for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET &&
			    c->cmsg_type == SCM_CREDENTIALS) {
				struct ucred uc;

				memcpy(&uc, CMSG_DATA(c), sizeof(uc));
				pid = (long)uc.pid;
			}
		buf[r] = '\0';
		n++;
		for (line = strtok_r(buf, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save))
			printf("%lu pid=%ld %s\n", n, pid, line);
	}
}
