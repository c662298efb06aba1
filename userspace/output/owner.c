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

int owner_invoking_ids(unsigned *uid, unsigned *gid)
{
	uint64_t u, g;

	if (geteuid() != 0 ||
	    parse_u64(getenv("SUDO_UID"), 0, (uid_t)-1 - 1, &u) ||
	    parse_u64(getenv("SUDO_GID"), 0, (gid_t)-1 - 1, &g))
		return -1;
	*uid = (unsigned)u;
	*gid = (unsigned)g;
	return 0;
}

int owner_give_to_invoking_user(int fd)
{
	unsigned uid, gid;

	if (owner_invoking_ids(&uid, &gid))
		return 0;
	return fchown(fd, (uid_t)uid, (gid_t)gid);
}
