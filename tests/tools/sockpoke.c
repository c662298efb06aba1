/* Test helper: misbehaving clients and servers of the recorder's trigger
 * socket.
 *
 *   sockpoke PATH [DATA]      connects to PATH, writes DATA as given (no
 *                             newline added; none at all when DATA is
 *                             absent, and the connection is then held
 *                             open, as a stalled client holds it), and
 *                             prints the one-line answer it gets within
 *                             5 s, or "no answer"
 *   sockpoke -d MS PATH DATA  the same, DATA written a byte every MS ms
 *                             (as a client that trickles its line), until
 *                             a write fails (the recorder gave up on it)
 *   sockpoke -l PATH          a server that never accepts: listens on PATH
 *                             with a backlog of none, fills it with a
 *                             connection of its own, prints "listening"
 *                             and waits to be killed (a recorder stopped
 *                             with its backlog full)
 *
 * Exit status: 0 when an answer came (or, with -l, when killed), 1
 * otherwise, 64 on a usage error. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "trigger/socket.h"

static int usage(void)
{
	fprintf(stderr, "usage: sockpoke PATH [DATA] | -d MS PATH DATA | -l PATH\n");
	return 64;
}

/* -l: a listener whose backlog is full; runs until killed. */
static int never_accept(const char *path)
{
	struct sockaddr_un a;
	int fd, c;

	if (trig_socket_addr(path, &a))
		return usage();
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 0)) {
		perror(path);
		return 1;
	}
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* Writes data, all at once (drip_ms 0) or a byte every drip_ms ms until a
 * write fails. */
static int send_data(int fd, const char *data, long drip_ms)
{
	struct timespec gap = { drip_ms / 1000, (drip_ms % 1000) * 1000000L };
	size_t i, n = strlen(data);

	if (!drip_ms)
		return send(fd, data, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
	for (i = 0; i < n; i++) {
		if (send(fd, data + i, 1, MSG_NOSIGNAL) != 1)
			return 0; /* the other end is done with us */
		nanosleep(&gap, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un a;
	struct timeval tv = { 5, 0 };
	const char *path, *data = NULL;
	long drip_ms = 0;
	char buf[512];
	ssize_t n;
	int fd;

	if (argc == 3 && !strcmp(argv[1], "-l"))
		return never_accept(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "-d")) {
		drip_ms = atol(argv[2]);
		path = argv[3];
		data = argv[4];
		if (drip_ms <= 0)
			return usage();
	} else if (argc == 2 || argc == 3) {
		path = argv[1];
		data = argc == 3 ? argv[2] : NULL;
	} else {
		return usage();
	}
	if (trig_socket_addr(path, &a))
		return usage();
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror(path);
		return 1;
	}
	if (data && send_data(fd, data, drip_ms)) {
		perror("write");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n <= 0) {
		printf("no answer\n");
		return 1;
	}
	buf[n] = 0;
	fputs(buf, stdout);
	return 0;
}
