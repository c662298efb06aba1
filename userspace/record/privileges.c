/* Capability dropping with libcap. */
#include "record/privileges.h"

#include <errno.h>
#include <sys/capability.h>
#include <sys/prctl.h>

/* Keeps capability c permitted and effective in caps. */
static int keep(cap_t caps, cap_value_t c)
{
	return cap_set_flag(caps, CAP_PERMITTED, 1, &c, CAP_SET) ||
			       cap_set_flag(caps, CAP_EFFECTIVE, 1, &c, CAP_SET) ?
		       -errno :
		       0;
}

int privileges_drop(bool keep_chown, bool keep_ptrace, bool keep_bpf)
{
	cap_value_t c;
	cap_t caps;
	int e = 0;

	/* Empty the bounding set first: it needs CAP_SETPCAP, dropped below. */
	for (c = 0; c <= CAP_LAST_CAP; c++)
		if ((!keep_chown || c != CAP_CHOWN) &&
		    (!keep_ptrace || c != CAP_SYS_PTRACE) &&
		    (!keep_bpf || c != CAP_BPF) && CAP_IS_SUPPORTED(c))
			cap_drop_bound(c);
	caps = cap_init();
	if (!caps)
		return -errno;
	if (keep_chown)
		e = keep(caps, CAP_CHOWN);
	if (!e && keep_ptrace)
		e = keep(caps, CAP_SYS_PTRACE);
	c = CAP_BPF;
	if (!e && keep_bpf && cap_set_flag(caps, CAP_PERMITTED, 1, &c, CAP_SET))
		e = -errno;
	if (!e && cap_set_proc(caps))
		e = -errno;
	cap_free(caps);
	if (!e && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		e = -errno;
	return e;
}

int privileges_bpf(bool on)
{
	cap_value_t c = CAP_BPF;
	cap_t caps = cap_get_proc();
	int e = 0;

	if (!caps)
		return -errno;
	if (cap_set_flag(caps, CAP_EFFECTIVE, 1, &c, on ? CAP_SET : CAP_CLEAR) ||
	    cap_set_proc(caps))
		e = -errno;
	cap_free(caps);
	return e;
}
