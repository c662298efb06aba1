/* Hands files to the invoking user under sudo. */
#include "output/owner.h"

#include <stdlib.h>
#include <unistd.h>

#include "util/parse.h"

int owner_is_invoking_user(unsigned uid)
{
	uint64_t sudo_uid;

	return !parse_u64(getenv("SUDO_UID"), 0, (uid_t)-1 - 1, &sudo_uid) &&
	       sudo_uid == uid;
}

int owner_give_to_invoking_user(int fd)
{
	uint64_t uid, gid;

	if (geteuid() != 0)
		return 0;
	if (parse_u64(getenv("SUDO_UID"), 0, (uid_t)-1 - 1, &uid) ||
	    parse_u64(getenv("SUDO_GID"), 0, (gid_t)-1 - 1, &gid))
		return 0;
	return fchown(fd, (uid_t)uid, (gid_t)gid);
}
