/* The triggers a trace holds, for `report`: Perfetto's Trigger packets
 * (and the clone_snapshot_trigger of a snapshot a trigger wrote), and the
 * slices the recorder put on the offending threads' tracks (a
 * TrackDescriptor naming the thread, then TrackEvents), read on the wire. */
#ifndef BTR_REPORT_TRIGGERS_H
#define BTR_REPORT_TRIGGERS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trig_seen {
	struct trig_fired {
		uint64_t ts;
		char name[160], producer[64];
	} *fired;
	size_t nfired, capfired;
	struct trig_slice {
		uint64_t uuid, start, end;
		char title[224];
		bool open;
	} *slices;
	size_t nslices, capslices;
	struct trig_track {
		uint64_t uuid;
		int32_t pid, tid;
		char comm[32];
	} *tracks;
	size_t ntracks, captracks;
	struct trig_fired snapshot; /* clone_snapshot_trigger */
	bool has_snapshot;
};

/* Whether a TracePacket field number is one trig_seen_packet reads. */
static inline bool trig_seen_field(uint32_t num)
{
	return num == 46 || num == 113 || num == 60 || num == 11;
}

/* Notes the triggers of one TracePacket; 0, or -1 out of memory. */
int trig_seen_packet(struct trig_seen *s, const uint8_t *pkt, size_t len);
void trig_seen_free(struct trig_seen *s);

void trig_seen_print(const struct trig_seen *s);
json_object *trig_seen_json(const struct trig_seen *s);

#endif
