/* The static build's dlopen (make static links with -Wl,--wrap=dlopen):
 * a statically linked process cannot safely load a shared object built
 * against the host's libc, so it loads none. The only caller is libdw's
 * debuginfod client (when DEBUGINFOD_URLS is set, it would load
 * libdebuginfod and libcurl): without it, user frames are named from the
 * files on the host, as when no debuginfod server answers. Unused in the
 * dynamic build, which links the real dlopen. */
#include <stddef.h>

void *__wrap_dlopen(const char *file, int mode);

void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}
