/* The named-trigger socket: the recorder's side and the client command
 * (socket.h). */
#include "trigger/socket.h"

#include <argp.h>
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "output/owner.h"
#include "util/clock_ns.h"
#include "util/log.h"
#include "util/parse.h"

#define ALLOW_MAX 32
#define LINE_MAX_LEN 128
#define REQUEST_WAIT_MS 100 /* a connection's, for its whole line */
#define ACCEPTS_PER_POLL 16 /* the rest wait in the backlog for the next */
#define REFUSED_LOG_NS (10ull * 1000000000ull) /* a line at most that often */
#define CLIENT_WAIT_S 10 /* the client's, to connect and for the answer */
#define GROUPS_MAX 256   /* a peer's groups looked at (SO_PEERGROUPS) */

struct trig_server {
	int fd;
	char *path;
	uid_t users[ALLOW_MAX];
	gid_t groups[ALLOW_MAX];
	size_t nusers, ngroups;
	/* refusals of senders not allowed: logged at most every
	 * REFUSED_LOG_NS (any local user can connect with --trigger-allow) */
	struct log_limit refused_log;
};

int trig_socket_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -1;
	strcpy(a->sun_path, path);
	return 0;
}

/* A name or number of a user, or of a group after '@'. */
static int allow_one(struct trig_server *s, const char *w, char *err,
		     size_t n)
{
	uint64_t id;
	bool group = w[0] == '@';

	if (group)
		w++;
	if (!parse_u64(w, 0, (uint32_t)-2, &id)) {
		/* a number */
	} else if (group) {
		struct group *g = getgrnam(w);

		if (!g)
			goto unknown;
		id = g->gr_gid;
	} else {
		struct passwd *p = getpwnam(w);

		if (!p)
			goto unknown;
		id = p->pw_uid;
	}
	if ((group ? s->ngroups : s->nusers) == ALLOW_MAX) {
		snprintf(err, n, "--trigger-allow: more than %d %s", ALLOW_MAX,
			 group ? "groups" : "users");
		return -1;
	}
	if (group)
		s->groups[s->ngroups++] = (gid_t)id;
	else
		s->users[s->nusers++] = (uid_t)id;
	return 0;
unknown:
	snprintf(err, n, "--trigger-allow: no %s '%s'", group ? "group" : "user",
		 w);
	return -1;
}

static int parse_allow(struct trig_server *s, const char *allow, char *err,
		       size_t n)
{
	char *copy = strdup(allow), *save = NULL, *w;
	int e = 0;

	if (!copy)
		return -1;
	for (w = strtok_r(copy, ",", &save); w && !e; w = strtok_r(NULL, ",", &save))
		e = allow_one(s, w, err, n);
	free(copy);
	return e;
}

/* A socket already at path: in use by a live recorder (an error), or left
 * by one that died (removed: only when a connection to it is refused, so
 * that no live recorder's socket is taken for a stale one). The probe does
 * not block: a live recorder whose backlog is full answers EAGAIN. */
static int take_path(const char *path, const struct sockaddr_un *a, char *err,
		     size_t n)
{
	struct stat st;
	int fd, e;

	if (lstat(path, &st))
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, n, "trigger socket %s: exists and is no socket",
			 path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, n, "trigger socket %s: %s", path, strerror(errno));
		return -1;
	}
	e = connect(fd, (const struct sockaddr *)a, sizeof(*a)) ? errno : 0;
	close(fd);
	if (e == ECONNREFUSED) {
		unlink(path);
		return 0;
	}
	if (!e || e == EAGAIN)
		snprintf(err, n, "trigger socket %s: another recorder listens "
			 "on it (give this one --trigger-socket PATH)", path);
	else
		snprintf(err, n, "trigger socket %s: exists, and %s (give "
			 "--trigger-socket another path)", path, strerror(e));
	return -1;
}

static void make_parent(const char *path)
{
	char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;

	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) && errno != EEXIST)
			log_debug("cannot create %s: %s", dir, strerror(errno));
	}
	free(dir);
}

struct trig_server *trig_server_open(const char *path, const char *allow,
				     char *err, size_t errlen)
{
	struct trig_server *s = calloc(1, sizeof(*s));
	struct sockaddr_un a;
	unsigned uid, gid;
	mode_t old;
	int e;

	if (!s || !(s->path = strdup(path))) {
		snprintf(err, errlen, "out of memory");
		free(s);
		return NULL;
	}
	s->fd = -1;
	if (trig_socket_addr(path, &a)) {
		snprintf(err, errlen, "trigger socket %s: path too long", path);
		goto fail;
	}
	if (allow && parse_allow(s, allow, err, errlen))
		goto fail;
	make_parent(path);
	if (take_path(path, &a, err, errlen))
		goto fail;
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	/* created with its mode (0600, or 0666 with --trigger-allow): no
	 * moment with a wider one, and no chmod by path after */
	old = umask(allow ? 0111 : 0177);
	e = s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (e || listen(s->fd, 16)) {
		snprintf(err, errlen, "trigger socket %s: %s (give "
			 "--trigger-socket a path you can write)", path,
			 strerror(errno));
		goto fail;
	}
	/* lchown: a link put in the socket's place meanwhile is not
	 * followed */
	if (!owner_invoking_ids(&uid, &gid) && lchown(path, uid, gid)) {
		snprintf(err, errlen, "trigger socket %s: %s", path,
			 strerror(errno));
		unlink(path);
		goto fail;
	}
	return s;
fail:
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
	return NULL;
}

static bool group_allowed(const struct trig_server *s, gid_t g)
{
	size_t i;

	for (i = 0; i < s->ngroups; i++)
		if (s->groups[i] == g)
			return true;
	return false;
}

/* Whether the peer of connection fd is in a group allowed: its group, or
 * one of its supplementary groups as they were when it connected
 * (SO_PEERGROUPS, Linux 4.13); where the kernel has no SO_PEERGROUPS,
 * those of its process now (/proc/PID/status). */
static bool in_group(const struct trig_server *s, int fd, pid_t pid, gid_t gid)
{
	gid_t groups[GROUPS_MAX];
	socklen_t len = sizeof(groups);
	char path[64], line[1024];
	bool ok = false;
	size_t i;
	FILE *f;

	if (group_allowed(s, gid))
		return true;
	if (!s->ngroups)
		return false;
	if (!getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len)) {
		for (i = 0; i < len / sizeof(gid_t); i++)
			if (group_allowed(s, groups[i]))
				return true;
		return false;
	}
	if (errno != ENOPROTOOPT && errno != ERANGE)
		return false; /* ERANGE: more groups than GROUPS_MAX */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && !ok && fgets(line, sizeof(line), f)) {
		char *p = line + 7, *end;

		if (strncmp(line, "Groups:", 7))
			continue;
		for (;;) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			ok |= group_allowed(s, (gid_t)g);
			p = end;
		}
	}
	if (f)
		fclose(f);
	return ok;
}

static bool allowed(const struct trig_server *s, int fd,
		    const struct ucred *c)
{
	size_t i;

	if (c->uid == 0 || c->uid == geteuid() || owner_is_invoking_user(c->uid))
		return true;
	for (i = 0; i < s->nusers; i++)
		if (s->users[i] == c->uid)
			return true;
	return in_group(s, fd, c->pid, c->gid);
}

static void reply(int fd, const char *msg)
{
	char line[LINE_MAX_LEN + 32];
	int n = snprintf(line, sizeof(line), "%s\n", msg);

	if (send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("trigger socket: reply lost: %s", strerror(errno));
}

/* The request line of a connection, within REQUEST_WAIT_MS in all: a
 * client that sends its line a byte at a time holds the recorder up no
 * longer than one that sends nothing. */
static int read_line(int fd, char *buf, size_t n)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + REQUEST_WAIT_MS * 1000000ull, now;
	size_t len = 0;
	ssize_t r;
	int k;

	while (len < n - 1) {
		now = clock_ns(CLOCK_MONOTONIC);
		if (now >= deadline)
			return -1;
		k = poll(&p, 1, (int)((deadline - now + 999999) / 1000000));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		r = recv(fd, buf + len, n - 1 - len, MSG_DONTWAIT);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return -1;
		len += (size_t)r;
		if (memchr(buf, '\n', len))
			break;
	}
	buf[len] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* A sender not allowed: a line on stderr, at most every REFUSED_LOG_NS. */
static void log_refused(struct trig_server *s, const struct ucred *c)
{
	uint64_t held;

	if (!log_limit_due(&s->refused_log, clock_ns(CLOCK_MONOTONIC),
			   REFUSED_LOG_NS, &held))
		return;
	if (held)
		log_warn("trigger from uid %u (pid %d) refused: not allowed "
			 "(and %llu more since the last such line)",
			 (unsigned)c->uid, (int)c->pid, (unsigned long long)held);
	else
		log_warn("trigger from uid %u (pid %d) refused: not allowed",
			 (unsigned)c->uid, (int)c->pid);
}

unsigned trig_server_poll(struct trig_server *s,
			  const char *(*cb)(void *ctx, const char *name,
					    uid_t uid, pid_t pid),
			  void *ctx)
{
	unsigned refused = 0, taken;
	int fd;

	for (taken = 0; taken < ACCEPTS_PER_POLL &&
			(fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0;
	     taken++) {
		struct ucred c;
		socklen_t cl = sizeof(c);
		char line[LINE_MAX_LEN], msg[LINE_MAX_LEN + 64];
		const char *why;

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &cl)) {
			close(fd);
			continue;
		}
		if (!allowed(s, fd, &c)) {
			snprintf(msg, sizeof(msg), "refused: uid %u may not "
				 "trigger this recorder (--trigger-allow)",
				 (unsigned)c.uid);
			reply(fd, msg);
			log_refused(s, &c);
			refused++;
		} else if (read_line(fd, line, sizeof(line))) {
			reply(fd, "refused: no trigger name received");
		} else if ((why = cb(ctx, line, c.uid, c.pid))) {
			snprintf(msg, sizeof(msg), "refused: %s", why);
			reply(fd, msg);
		} else {
			reply(fd, "ok");
		}
		close(fd);
	}
	return refused;
}

void trig_server_close(struct trig_server *s)
{
	if (!s)
		return;
	close(s->fd);
	unlink(s->path);
	free(s->path);
	free(s);
}

/* The client. */

struct client_args {
	const char *name, *socket;
};

static error_t client_opt(int key, char *arg, struct argp_state *st)
{
	struct client_args *a = st->input;

	switch (key) {
	case 's':
		a->socket = arg;
		break;
	case ARGP_KEY_ARG:
		if (a->name)
			argp_error(st, "too many arguments");
		a->name = arg;
		break;
	case ARGP_KEY_END:
		if (!a->name)
			argp_error(st, "missing NAME");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int cmd_trigger(int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{ "trigger-socket", 's', "PATH", 0, "The recorder's socket, as its --trigger-socket (default " TRIG_SOCKET_DEFAULT ")", 0 },
		{ 0 },
	};
	static const char doc[] =
		"Send the named trigger NAME to a running recorder started with "
		"--trigger name:NAME.\v"
		"Exit status: 0 when the recorder took it, 1 when it refused it "
		"or cannot be reached, 64 on a usage error.";
	static const struct argp argp = { opts, client_opt, "NAME", doc, 0, 0, 0 };
	struct client_args a = { NULL, TRIG_SOCKET_DEFAULT };
	struct timeval wait = { CLIENT_WAIT_S, 0 };
	struct sockaddr_un addr;
	char buf[LINE_MAX_LEN + 64];
	int fd, n, e;
	ssize_t r;

	e = cmd_parse_args(&argp, argc, argv, "bpftrace-rec trigger", &a);
	if (e)
		return e;
	if (strlen(a.name) >= LINE_MAX_LEN || strchr(a.name, '\n')) {
		log_error("bad trigger name '%s'", a.name);
		return EXIT_USAGE;
	}
	if (trig_socket_addr(a.socket, &addr)) {
		log_error("%s: path too long", a.socket);
		return EXIT_USAGE;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* a recorder that hangs leaves its client an error, not a hang: a
	 * unix socket's connect waits for room in a full backlog at most
	 * the send timeout, recv for the answer at most the receive one */
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		int err = errno;

		log_error("%s: %s%s", a.socket, strerror(err),
			  err == EACCES ? " (the recorder's socket is its "
					  "owner's alone unless it was started "
					  "with --trigger-allow)"
			  : err == ENOENT || err == ECONNREFUSED
				  ? " (no recorder with --trigger name:NAME "
				    "listens there)"
			  : err == EAGAIN || err == EWOULDBLOCK
				  ? " (the recorder took no connection in "
				    "10 s: it is stopped, or busy)"
				  : "");
		if (fd >= 0)
			close(fd);
		return EXIT_FAIL;
	}
	n = snprintf(buf, sizeof(buf), "%s\n", a.name);
	if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n) {
		/* a sender not allowed is answered before its line is read,
		 * and may find the connection closed by then: the answer
		 * waits all the same */
		e = errno;
		r = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (r <= 0) {
			log_error("%s: %s", a.socket, strerror(e));
			close(fd);
			return EXIT_FAIL;
		}
	} else {
		shutdown(fd, SHUT_WR);
		r = recv(fd, buf, sizeof(buf) - 1, MSG_WAITALL);
		e = errno;
	}
	close(fd);
	if (r < 0 && (e == EAGAIN || e == EWOULDBLOCK)) {
		log_error("%s: no answer from the recorder in 10 s (it may "
			  "still take the trigger)", a.socket);
		return EXIT_FAIL;
	}
	if (r <= 0) {
		log_error("%s: the recorder closed the connection without an "
			  "answer%s%s (it may be stopping)", a.socket,
			  r < 0 ? ": " : "", r < 0 ? strerror(e) : "");
		return EXIT_FAIL;
	}
	buf[r] = 0;
	buf[strcspn(buf, "\n")] = 0;
	if (strcmp(buf, "ok")) {
		log_error("trigger %s: %s", a.name, buf);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
