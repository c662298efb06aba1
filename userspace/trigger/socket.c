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
#include <unistd.h>

#include "commands.h"
#include "output/owner.h"
#include "util/log.h"
#include "util/parse.h"

#define ALLOW_MAX 32
#define LINE_MAX_LEN 128
#define REQUEST_WAIT_MS 100

struct trig_server {
	int fd;
	char *path;
	uid_t users[ALLOW_MAX];
	gid_t groups[ALLOW_MAX];
	size_t nusers, ngroups;
};

static int addr_of(const char *path, struct sockaddr_un *a)
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
 * by one that died (removed). */
static int take_path(const char *path, const struct sockaddr_un *a, char *err,
		     size_t n)
{
	struct stat st;
	int fd;

	if (lstat(path, &st))
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, n, "trigger socket %s: exists and is no socket",
			 path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !connect(fd, (const struct sockaddr *)a, sizeof(*a))) {
		close(fd);
		snprintf(err, n, "trigger socket %s: another recorder listens "
			 "on it (give this one --trigger-socket PATH)", path);
		return -1;
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
	return 0;
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
	if (addr_of(path, &a)) {
		snprintf(err, errlen, "trigger socket %s: path too long", path);
		goto fail;
	}
	if (allow && parse_allow(s, allow, err, errlen))
		goto fail;
	make_parent(path);
	if (take_path(path, &a, err, errlen))
		goto fail;
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	old = umask(0177); /* no moment with a wider mode */
	e = s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (e || listen(s->fd, 16)) {
		snprintf(err, errlen, "trigger socket %s: %s (give "
			 "--trigger-socket a path you can write)", path,
			 strerror(errno));
		goto fail;
	}
	if ((!owner_invoking_ids(&uid, &gid) && chown(path, uid, gid)) ||
	    (allow && chmod(path, 0666))) {
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

/* Whether the process's groups (/proc/PID/status) hold one allowed. */
static bool in_group(const struct trig_server *s, pid_t pid, gid_t gid)
{
	char path[64], line[1024];
	bool ok = false;
	size_t i;
	FILE *f;

	for (i = 0; i < s->ngroups; i++)
		if (s->groups[i] == gid)
			return true;
	if (!s->ngroups)
		return false;
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
			for (i = 0; i < s->ngroups; i++)
				ok |= s->groups[i] == (gid_t)g;
			p = end;
		}
	}
	if (f)
		fclose(f);
	return ok;
}

static bool allowed(const struct trig_server *s, const struct ucred *c)
{
	size_t i;

	if (c->uid == 0 || c->uid == geteuid() || owner_is_invoking_user(c->uid))
		return true;
	for (i = 0; i < s->nusers; i++)
		if (s->users[i] == c->uid)
			return true;
	return in_group(s, c->pid, c->gid);
}

static void reply(int fd, const char *msg)
{
	char line[LINE_MAX_LEN + 32];
	int n = snprintf(line, sizeof(line), "%s\n", msg);

	if (send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("trigger socket: reply lost: %s", strerror(errno));
}

/* The request line of a connection, within REQUEST_WAIT_MS. */
static int read_line(int fd, char *buf, size_t n)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t len = 0;
	ssize_t r;

	while (len < n - 1) {
		if (poll(&p, 1, REQUEST_WAIT_MS) <= 0)
			return -1;
		r = recv(fd, buf + len, n - 1 - len, MSG_DONTWAIT);
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

unsigned trig_server_poll(struct trig_server *s,
			  const char *(*cb)(void *ctx, const char *name,
					    uid_t uid, pid_t pid),
			  void *ctx)
{
	unsigned refused = 0;
	int fd;

	while ((fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		struct ucred c;
		socklen_t cl = sizeof(c);
		char line[LINE_MAX_LEN], msg[LINE_MAX_LEN + 64];
		const char *why;

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &cl)) {
			close(fd);
			continue;
		}
		if (!allowed(s, &c)) {
			snprintf(msg, sizeof(msg), "refused: uid %u may not "
				 "trigger this recorder (--trigger-allow)",
				 (unsigned)c.uid);
			reply(fd, msg);
			log_warn("trigger from uid %u (pid %d) refused: not "
				 "allowed", (unsigned)c.uid, (int)c.pid);
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
	struct timeval reply_wait = { 10, 0 };
	struct sockaddr_un addr;
	char buf[LINE_MAX_LEN + 64];
	int fd, n;
	ssize_t r;

	argp_err_exit_status = EXIT_USAGE;
	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return EXIT_USAGE;
	if (strlen(a.name) >= LINE_MAX_LEN || strchr(a.name, '\n')) {
		log_error("bad trigger name '%s'", a.name);
		return EXIT_USAGE;
	}
	if (addr_of(a.socket, &addr)) {
		log_error("%s: path too long", a.socket);
		return EXIT_USAGE;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		int err = errno;

		log_error("%s: %s%s", a.socket, strerror(err),
			  err == EACCES ? " (the recorder's socket is its "
					  "owner's alone unless it was started "
					  "with --trigger-allow)"
			  : err == ENOENT || err == ECONNREFUSED
				  ? " (no recorder with --trigger name:NAME "
				    "listens there)"
				  : "");
		if (fd >= 0)
			close(fd);
		return EXIT_FAIL;
	}
	n = snprintf(buf, sizeof(buf), "%s\n", a.name);
	if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n) {
		log_error("%s: %s", a.socket, strerror(errno));
		close(fd);
		return EXIT_FAIL;
	}
	shutdown(fd, SHUT_WR);
	/* a recorder that hangs leaves its client an error, not a hang */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &reply_wait, sizeof(reply_wait));
	r = recv(fd, buf, sizeof(buf) - 1, MSG_WAITALL);
	close(fd);
	if (r <= 0) {
		log_error("%s: the recorder sent no answer (in 10 s)", a.socket);
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
