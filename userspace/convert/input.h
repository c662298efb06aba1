/* One input of the offline tools: a Perfetto trace file (plain or gzip;
 * "-" is standard input, spooled to an unlinked temporary file unless it
 * already is a regular file, because the tools read it twice; an archive
 * member is such a file too), the scope of its clocks (file id, machine
 * slots: machines.h), and its packets in file order. Packets inside
 * compressed_packets (deflate) come out one by one in place of their
 * bundle. The first pass (input_scan) gathers what the clock graph needs
 * and the input's machines and sequence ids; later passes walk the packets
 * again from the start.
 *
 * An input may also be `perf script` text (INPUT_PERF_TEXT): it has no
 * packets and no first pass; perf_input.h reads it. */
#ifndef BTR_INPUT_H
#define BTR_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>

#include "clock/machines.h"
#include "trace/packet_info.h"
#include "convert/remote_sync.h"
#include "convert/seq_map.h"
#include "convert/snapshots.h"
#include "clock/timeline.h"

struct trace_reader;

struct input_packet {
	const uint8_t *data;  /* valid until the next input_next() */
	size_t len;
	uint64_t offset;      /* of its record in the (decompressed) file; of
			       * the enclosing record for a packet that was
			       * compressed */
	uint64_t index;       /* 0, 1, ... in file order, in every pass */
	struct packet_info info;
};

enum input_kind {
	INPUT_PROTO,          /* a Perfetto trace */
	INPUT_PERF_TEXT,      /* perf script output */
};

/* What the input is and where its bytes are: set when it is opened. */
struct input_file {
	char *path;
	const char *name;     /* for messages: the path, "<stdin>", the label */
	char *label;          /* "ARCHIVE:MEMBER" of an archive member */
	char *member;         /* MEMBER: its path inside the archive */
	long manifest_entry;  /* its manifest files[] entry, -1: none */
	int own_fd;           /* an unlinked temporary file it reads (then
			       * path is its label), or -1 */
	enum input_kind kind;
	uint32_t perf_clock;  /* INPUT_PERF_TEXT: clock of its timestamps */
	struct clock_scope scope;
};

/* What the first pass (input_scan, scan.c) found. */
struct input_scan {
	struct snap_list snaps;
	struct file_machines fm; /* its machines; snapshots keyed by slot */
	struct seq_map seqs;  /* its sequence ids and their output ids */
	struct remote_sync rsync; /* its remote_clock_sync round trips */
	bool any_snapshot;    /* a ClockSnapshot on any of its machines */
	bool has_declared;    /* some host snapshot names the trace clock */
	uint32_t declared;    /* the first one that does */
	uint32_t adopted_machine; /* machine_id of a file recorded remotely */
	uint32_t bundle_clock;  /* of ftrace bundles without ftrace_clock:
				 * BOOTTIME, or the trace clock of a synced
				 * file (its trailer, sync_info.h) */
	struct sync_stats prior; /* the drops its trailer counts */
	uint64_t packets;     /* packets of the last complete pass */
	uint64_t scan_fail_index; /* packet the first pass failed on (only it
				   * reads snapshots whole), UINT64_MAX */
	char scan_err[512];   /* and why */
};

/* Where a pass is in the file (input.c). */
struct input_read {
	struct trace_reader *r;
	int stdin_fd;         /* -1, or the (spooled) file of stdin */
	long long stdin_start;
	uint64_t next_index;
	uint8_t *unpacked;    /* inflated compressed_packets */
	size_t unpacked_len, unpacked_cap, unpacked_pos;
	uint64_t unpacked_offset;
	char warning[512];    /* a torn last record, "" if none */
};

struct input {
	struct input_file file;
	struct input_scan scan;
	struct input_read rd;
	char err[512];        /* "NAME: offset N: what" of the last error */
};

/* Opens the input (spooling stdin). Returns 0, or -1 with in->err set. */
int input_open(struct input *in, const char *path, uint32_t file_id);
/* Opens an input read from fd, a temporary file the input owns from now
 * on (closed by input_close, even on failure); label names it in
 * messages. Same returns. */
int input_open_fd(struct input *in, const char *label, int fd,
		  uint32_t file_id);
void input_close(struct input *in);

/* Up to n bytes from the start of the input's file, as stored (before any
 * decompression). Returns the count, or -1 with in->err set. */
long input_head(struct input *in, uint8_t *buf, size_t n);
/* A stdio stream on the input's file from its start (perf text); NULL
 * with in->err set. */
FILE *input_fopen(struct input *in);

/* "NAME: offset N: ..." into in->err; returns -1. */
int input_fail_at(struct input *in, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Starts a pass at the first packet. Returns 0 or -1 (in->err). */
int input_rewind(struct input *in);
/* 1: *p is the next packet; 0: end (in->warning tells a torn tail); -1:
 * corrupt or unreadable, in->err says where. */
int input_next(struct input *in, struct input_packet *p);

/* scan.c, the first pass: gathers the snapshots (and bundle clock pairs), the
 * clock the snapshots declare, and whether the file adopted a machine id.
 * Returns 0, -1 (in->err; what was read before the error is kept), or
 * -ENOMEM. */
int input_scan(struct input *in);

/* The clock of the input's packets without one: what its snapshots
 * declare, else BOOTTIME; TRACE_FILE (the input's private timeline) for
 * an input without any clock snapshot (also its ftrace bundles' then). A
 * perf text input: its perf clock. */
uint32_t input_default_clock(const struct input *in);

#endif
