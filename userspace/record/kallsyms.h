/* Kernel symbols from /proc/kallsyms: the text symbols sorted by address,
 * for naming the function a kernel address is in (binary search), and the
 * address of a named symbol (the __sched_text and __lock_text bounds the
 * BPF side needs). Under kptr_restrict an unprivileged reader sees every
 * address as 0: ksyms_usable() then says the table cannot name anything. */
#ifndef BTR_KALLSYMS_H
#define BTR_KALLSYMS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ksyms;

/* Reads the kallsyms text of `f` (lines "ADDR TYPE NAME [MODULE]").
 * Returns NULL when out of memory or when `f` cannot be read. */
struct ksyms *ksyms_read(FILE *f);

/* ksyms_read() of the file at `path` (NULL: /proc/kallsyms); NULL when it
 * cannot be opened, with errno set. */
struct ksyms *ksyms_load(const char *path);

/* False when no symbol has a non-zero address (kptr_restrict). */
bool ksyms_usable(const struct ksyms *k);

/* Number of text symbols kept. */
size_t ksyms_count(const struct ksyms *k);

/* The text symbol containing `addr` (the last one at or below it), with
 * its rank in address order from 1 in *id (the same for every address in
 * the function), or NULL when `addr` is below every symbol, or farther
 * than ksyms' limit (1 MiB) past the last one. */
const char *ksyms_name(const struct ksyms *k, uint64_t addr, uint64_t *id);

/* The address of one of the section bounds __sched_text_start,
 * __sched_text_end, __lock_text_start or __lock_text_end, or 0. */
uint64_t ksyms_addr(const struct ksyms *k, const char *name);

void ksyms_free(struct ksyms *k);

#endif
