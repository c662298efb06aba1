/* Process and thread names from /proc, as ProcessTree packets: a full scan
 * at start, then each process or thread first seen in the trace (or
 * renamed, or exec'd) once, as Perfetto's process_stats data source does. */
#ifndef BTR_PROCFS_H
#define BTR_PROCFS_H

#include <stdbool.h>
#include <stdint.h>

#include "output/sink.h"

struct procfs;

struct procfs *procfs_new(struct packet_sink *sink, uint32_t seq_id);
void procfs_free(struct procfs *p);
/* Scans every process and thread; returns 0 or a negative errno. */
int procfs_scan_all(struct procfs *p);
/* Notes a tid seen in the trace; unseen ones are scanned at the next
 * procfs_flush(). Cheap: called per record. */
void procfs_note_tid(struct procfs *p, int32_t tid);
/* Forgets a tid (renamed) or a whole process (exec'd) so it is scanned
 * again. */
void procfs_forget_tid(struct procfs *p, int32_t tid);
void procfs_forget_process(struct procfs *p, int32_t tgid);
/* Periodic incremental-state clear: forgets every process and thread, so
 * each is described again when next seen; the next ProcessTree packet
 * starts a new incremental state (a ring buffer that lost the older
 * packets still has the names). */
void procfs_clear(struct procfs *p);
/* Scans the pending tids and emits one ProcessTree packet for them. */
int procfs_flush(struct procfs *p);

#endif
