/* Triggers in a recording (--trigger): the conditions watched on the
 * readers' records (trigger/watch.h), the named ones received on a socket
 * (trigger/socket.h), and what a trigger does: a Trigger packet and a
 * mark on the thread into the buffer, a line in the journal, and after
 * --trigger-delay a snapshot file or the end of the recording, within the
 * rate limit and the snapshots' disk budget (trigger/limit.h). Runs on the
 * main thread but for rec_triggers_record, which readers call. */
#ifndef BTR_RECORD_TRIGGERS_H
#define BTR_RECORD_TRIGGERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/sink.h"
#include "record/options.h"

enum trig_action { TRIG_NONE, TRIG_SNAPSHOT, TRIG_STOP };

struct rec_triggers;

/* NULL with a message in err on failure (a socket that cannot be made). */
struct rec_triggers *rec_triggers_new(const struct record_opts *o,
				      uint32_t ncpus,
				      struct packet_sink *data, char *err,
				      size_t errlen);
void rec_triggers_free(struct rec_triggers *t);

/* The conditions the readers feed their records to
 * (trig_watch_around), or NULL when only named triggers are set. */
struct trig_watch *rec_triggers_watch(const struct rec_triggers *t);

/* Takes the conditions that held and the named triggers received; says
 * what is due now. */
enum trig_action rec_triggers_tick(struct rec_triggers *t, uint64_t now);

/* The readers have stopped, every record is read: the conditions still
 * queued (found in the last passes) fire into the trace being written,
 * with no action of their own. */
void rec_triggers_finish(struct rec_triggers *t, uint64_t now);

/* A snapshot file was written (for the disk budget). */
void rec_triggers_snapshot_written(struct rec_triggers *t, const char *path,
				   uint64_t bytes);

/* The trailer's part: the counts (TraceAttributes), and in a snapshot
 * written for a trigger its clone_snapshot_trigger. */
int rec_triggers_trailer(struct rec_triggers *t, struct packet_sink *to,
			 uint32_t seq, bool snapshot);

/* The closing line of the summary. */
void rec_triggers_log(const struct rec_triggers *t);

#endif
