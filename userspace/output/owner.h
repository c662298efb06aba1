/* Ownership of files we create under sudo: they belong to the user who ran
 * sudo (SUDO_UID/SUDO_GID), not to root. */
#ifndef BTR_OWNER_H
#define BTR_OWNER_H

/* fchown()s fd to the sudo user when running as root under sudo; 0 or -1
 * with errno. */
int owner_give_to_invoking_user(int fd);
/* The user and group who ran sudo, when running as root under sudo: 0,
 * else -1 (files stay the current user's). */
int owner_invoking_ids(unsigned *uid, unsigned *gid);
/* Is uid the user who ran sudo (SUDO_UID)? */
int owner_is_invoking_user(unsigned uid);

#endif
