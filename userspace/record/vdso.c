/* The kernel's vDSO image in a memory file (see vdso.h). */
#include "record/vdso.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char path[64];

/* The size of our [vdso] mapping at base, 0 when it is not found. */
static size_t vdso_size(uintptr_t base)
{
	unsigned long long start, end;
	char line[512];
	size_t size = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%llx-%llx", &start, &end) == 2 &&
		    start == base && end > start) {
			size = (size_t)(end - start);
			break;
		}
	fclose(f);
	return size;
}

static void copy_image(void)
{
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	size_t size = base ? vdso_size(base) : 0;
	int fd;

	if (!size)
		return;
	fd = memfd_create("btr-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, (const void *)base, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	/* kept open for the recorder's life: the symbolizer opens it again
	 * through this path */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
}

const char *vdso_image_path(void)
{
	pthread_once(&once, copy_image);
	return path[0] ? path : NULL;
}
