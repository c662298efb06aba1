/* Test helper: a misbehaving client of the recorder's trigger socket.
 * Connects to PATH, writes DATA as given (no newline added; none at all
 * when DATA is absent, and the connection is then held open, as a stalled
 * client holds it), and prints the one-line answer it gets within 5 s, or
 * "no answer".
 *
 *   sockpoke PATH [DATA]
 *
 * Exit status: 0 when an answer came, 1 otherwise, 64 on a usage error. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { 5, 0 };
	char buf[512];
	ssize_t n;
	int fd;

	if (argc < 2 || argc > 3 || strlen(argv[1]) >= sizeof(a.sun_path)) {
		fprintf(stderr, "usage: sockpoke PATH [DATA]\n");
		return 64;
	}
	strcpy(a.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror(argv[1]);
		return 1;
	}
	if (argc == 3 &&
	    write(fd, argv[2], strlen(argv[2])) != (ssize_t)strlen(argv[2])) {
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
