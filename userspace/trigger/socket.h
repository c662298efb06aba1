/* Named triggers from other processes (`bpftrace-rec trigger NAME`): a
 * unix stream socket the recorder listens on, one request line ("NAME\n")
 * and one reply line ("ok" or "refused: WHY") per connection. The socket
 * is as strict as the trace file: mode 0600, owned by the user the file
 * is given to (the sudo user, or the recorder's own); --trigger-allow
 * opens it (0666) to the users and groups it names, each peer checked by
 * its credentials (SO_PEERCRED). */
#ifndef BTR_TRIGGER_SOCKET_H
#define BTR_TRIGGER_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/un.h>

#define TRIG_SOCKET_DEFAULT "/run/bpftrace-rec/trigger.sock"

struct trig_server;

/* Listens on path (its folder created 0755 if missing). allow: a
 * comma-separated list of user and group names or numbers (a group as
 * @NAME), or NULL. NULL with a message in err on failure. */
struct trig_server *trig_server_open(const char *path, const char *allow,
				     char *err, size_t errlen);
/* Takes the pending requests without blocking (a connected client has
 * 100 ms to send its line); cb says NULL to accept a name, or why it is
 * refused. Returns the requests refused for their sender. */
unsigned trig_server_poll(struct trig_server *s,
			  const char *(*cb)(void *ctx, const char *name,
					    uid_t uid, pid_t pid),
			  void *ctx);
/* The address of the socket at path: 0, or -1 when path is too long. */
int trig_socket_addr(const char *path, struct sockaddr_un *a);
/* Closes and removes the socket. */
void trig_server_close(struct trig_server *s);

#endif
