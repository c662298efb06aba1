/* Fuzz target: decoding of raw ring records (encode/bundle.c), the path
 * every record the BPF programs write takes. bundle_enc_add() must take
 * exactly the well-formed records (known type other than CLOCK, length at
 * least that type's struct) and refuse every other with -EINVAL; every
 * packet it emits must decode as a TracePacket (the checking sink).
 *
 * Input: byte 0 holds options (bit 0: the sink fails from packet number
 * bits 1-5 on, with -ENOSPC), then operations:
 *   0x00-0xEF L   a record of L bytes (fewer if the input ends first),
 *                 copied to a buffer of exactly its length
 *   0xF0          bundle_enc_flush()
 *   0xF1 N[4]     bundle_enc_note_lost(N)
 *   0xF2 L[2]     a record of L bytes (little-endian length)
 *   0xF3 K        the last record again (K & 0x7f) * 16 + 16 times, its ts
 *                 growing; with K & 0x80 the first comm byte changes each
 *                 time (to fill the CompactSched intern table)
 *   0xF4-0xFF     the same as 0xF0
 * An input stops after MAX_RECORDS records (speed: a few BUNDLE_MAX_EVENTS
 * bundles are enough). tools/raw_to_seed.py makes seeds from
 * tests/tools/capture_raw files. */
#include <stddef.h>

#include "encode/bundle.h"
#include "fuzz.h"
#include "record.h"

#define MAX_RECORDS (4 * BUNDLE_MAX_EVENTS)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

/* The contract, written independently of bundle.c. */
static size_t type_size(uint16_t type)
{
	switch (type) {
	case BTR_REC_SWITCH:
		return sizeof(struct btr_switch);
	case BTR_REC_WAKING:
	case BTR_REC_WAKEUP_NEW:
		return sizeof(struct btr_wakeup);
	case BTR_REC_NEWTASK:
		return sizeof(struct btr_newtask);
	case BTR_REC_RENAME:
		return sizeof(struct btr_rename);
	case BTR_REC_FORK:
		return sizeof(struct btr_fork);
	case BTR_REC_EXEC:
		return sizeof(struct btr_exec);
	case BTR_REC_EXIT:
	case BTR_REC_FREE:
		return sizeof(struct btr_exit);
	case BTR_REC_BLOCKED:
		return sizeof(struct btr_blocked);
	case BTR_REC_SWITCH_BLOCKED:
		return sizeof(struct btr_switch_blocked);
	default:
		return 0; /* unknown, or BTR_REC_CLOCK */
	}
}

static bool well_formed(const uint8_t *rec, size_t len)
{
	struct btr_hdr h;

	if (len < sizeof(h))
		return false;
	memcpy(&h, rec, sizeof(h));
	return type_size(h.type) && len >= type_size(h.type);
}

/* Names for blocked reasons: 300 functions, so that bundles fill their
 * kernel symbol table; addresses with bit 63 clear have none. */
static const char *symbolize(void *ctx, uint64_t addr, uint64_t *id)
{
	static char names[300][24];
	uint64_t f = (addr >> 4) % 300;

	(void)ctx;
	if (!(addr >> 63))
		return NULL;
	snprintf(names[f], sizeof(names[f]), "kernel_function_%u",
		 (unsigned)f);
	*id = f + 1;
	return names[f];
}

struct run {
	struct bundle_enc *b;
	struct fuzz_sink sink;
	uint64_t rejected, records;
};

static void add(struct run *r, const uint8_t *bytes, size_t len)
{
	/* Exactly len bytes, so that ASan sees any read past the record;
	 * malloc keeps it aligned as a ring record is. */
	uint8_t *rec = malloc(len ? len : 1);
	bool ok = well_formed(bytes, len);
	int rc;

	FUZZ_CHECK(rec != NULL);
	r->records++;
	memcpy(rec, bytes, len);
	rc = bundle_enc_add(r->b, (const struct btr_hdr *)rec, len);
	free(rec);
	if (!ok) {
		FUZZ_CHECK(rc == -EINVAL);
		r->rejected++;
	} else {
		FUZZ_CHECK(rc == 0 || rc == -ENOSPC);
	}
	FUZZ_CHECK(bundle_enc_stats(r->b)->rejected == r->rejected);
}

static void repeat(struct run *r, const uint8_t *last, size_t len, uint8_t k)
{
	uint8_t buf[512];
	size_t n = ((size_t)(k & 0x7f) + 1) * 16, i;
	size_t comm = 0;
	struct btr_hdr h;

	if (len > sizeof(buf))
		len = sizeof(buf);
	memcpy(buf, last, len);
	if (len >= sizeof(h)) {
		memcpy(&h, buf, sizeof(h));
		comm = h.type == BTR_REC_SWITCH ||
				       h.type == BTR_REC_SWITCH_BLOCKED ?
			       offsetof(struct btr_switch, next_comm) :
			       offsetof(struct btr_wakeup, comm);
	}
	for (i = 0; i < n && r->records < MAX_RECORDS; i++) {
		if (len >= sizeof(h)) {
			h.ts += 1000;
			memcpy(buf, &h, sizeof(h));
			if ((k & 0x80) && comm < len)
				buf[comm] = (uint8_t)('!' + i % 90);
		}
		add(r, buf, len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *end = data + size, *p = data, *last = NULL;
	size_t last_len = 0;
	struct run r = { 0 };
	uint32_t lost;

	if (size < 1)
		return 0;
	fuzz_sink_init(&r.sink, (*p & 1) ? (long)((*p >> 1) & 0x1f) : -1);
	p++;
	r.b = bundle_enc_new(3, 8, &r.sink.sink);
	FUZZ_CHECK(r.b != NULL);
	bundle_enc_set_symbolizer(r.b, symbolize, NULL);
	while (p < end && r.records < MAX_RECORDS) {
		uint8_t op = *p++;
		size_t len;

		if (op <= 0xEF || op == 0xF2) {
			if (op == 0xF2) {
				if (end - p < 2)
					break;
				len = (size_t)p[0] | (size_t)p[1] << 8;
				p += 2;
			} else {
				len = op;
			}
			if (len > (size_t)(end - p))
				len = (size_t)(end - p);
			add(&r, p, len);
			last = p;
			last_len = len;
			p += len;
		} else if (op == 0xF1) {
			if (end - p < 4)
				break;
			memcpy(&lost, p, 4);
			p += 4;
			FUZZ_CHECK(bundle_enc_note_lost(r.b, lost) <= 0);
		} else if (op == 0xF3) {
			if (p == end)
				break;
			if (last)
				repeat(&r, last, last_len, *p);
			p++;
		} else {
			FUZZ_CHECK(bundle_enc_flush(r.b) <= 0);
		}
	}
	FUZZ_CHECK(bundle_enc_flush(r.b) <= 0);
	bundle_enc_free(r.b);
	return 0;
}
