/* The kernel's vDSO image, for naming and unwinding user frames in a
 * process's [vdso] mapping: every 64-bit process of this kernel has the
 * same one as the recorder, so the recorder's own (getauxval's
 * AT_SYSINFO_EHDR, its size from /proc/self/maps) is copied once into a
 * memory file that the symbolizer opens by path like any binary. */
#ifndef BTR_RECORD_VDSO_H
#define BTR_RECORD_VDSO_H

/* The path of the copy ("/proc/self/fd/N"), made at the first call; NULL
 * when the image cannot be had (no vDSO, no memfd). */
const char *vdso_image_path(void);

#endif
