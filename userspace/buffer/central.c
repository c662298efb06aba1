/* Chunked ring buffer with Perfetto's fill policies and accounting. Its
 * lock guards the slots, the commit position and the statistics: a writer
 * takes it once per chunk it commits, never per packet (its staging chunk
 * is its own); the read pass takes it once per chunk it reads. */
#include "buffer/central.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define FRAG_HDR 4u               /* fragment size, little endian */
#define CHUNK_FIRST_CONTINUES 1u  /* first fragment ends a packet begun before */
#define CHUNK_LAST_CONTINUES 2u   /* last fragment is continued after */
#define RECORD_HDR 16u            /* accounted per chunk, as traced does */
#define DROPPED_OVERWRITE 65u     /* DATA_LOSS_PRESENT | overwrite */
#define CENTRAL_MAX_SEQ (1u << 16)

/* A slot owns one chunk of memory, `data`. Committing a staging chunk
 * swaps buffers instead of copying: the slot takes the writer's filled
 * chunk and the writer goes on in the slot's old one. */
struct slot {
	uint8_t *data;
	bool used, read;
	uint8_t flags;
	uint16_t nfrags;
	uint32_t seq, chunk_id;
	uint32_t size;
	uint64_t gen; /* commit number: which read passes may take it */
};

/* Reassembly state of one sequence on the read side. */
struct seq_reader {
	bool started;
	uint32_t next_chunk_id;
	bool gap;        /* data lost before the next packet */
	uint8_t *partial;
	size_t partial_len, partial_cap;
	bool has_partial;
};

struct seq_writer {
	uint8_t *staging;
	uint32_t used;
	uint16_t nfrags;
	uint8_t flags;
	bool open_packet; /* the last fragment continues in the next chunk */
	size_t left;      /* bytes of the open packet not given out yet */
	uint32_t next_chunk_id;
	uint64_t packets_lost;
	bool owned;           /* written by another thread: not flushed here */
	struct seq_reader rd; /* persistent reader (consuming passes) */
};

struct central {
	struct packet_sink sink;
	enum fill_policy policy;
	bool sealed;
	uint32_t chunk_size;
	size_t nslots, wr;
	size_t unread; /* slots used and not read */
	uint8_t *mem;
	size_t mem_len;
	struct slot *slots;
	struct seq_writer **seqs; /* by sequence id */
	size_t nseqs;
	uint8_t *scratch;
	size_t scratch_cap;
	struct central_stats st;
	pthread_mutex_t lock;
	uint64_t commits;  /* chunks committed so far (slot.gen) */
	uint32_t nowned;   /* sequences other threads write */
	uint8_t *copy;     /* a chunk read while writers go on */
};

static uint64_t record_size(uint32_t payload)
{
	return RECORD_HDR + ((payload + 15u) & ~15u);
}

/* The writer of seq, created if new. The array of writers grows only when
 * may_grow: not while other threads use it (sequences are owned). */
static struct seq_writer *seq_get(struct central *c, uint32_t seq,
				  bool may_grow)
{
	if (seq > CENTRAL_MAX_SEQ)
		return NULL; /* writers are few, their ids small */
	if (seq >= c->nseqs) {
		size_t n = (size_t)seq + 8;

		if (!may_grow)
			return NULL; /* other threads read the array */
		struct seq_writer **s = realloc(c->seqs, n * sizeof(*s));

		if (!s)
			return NULL;
		memset(s + c->nseqs, 0, (n - c->nseqs) * sizeof(*s));
		c->seqs = s;
		c->nseqs = n;
	}
	if (!c->seqs[seq]) {
		struct seq_writer *w = calloc(1, sizeof(*w));

		if (!w || !(w->staging = malloc(c->chunk_size))) {
			free(w);
			return NULL;
		}
		c->seqs[seq] = w;
	}
	return c->seqs[seq];
}

/* Whole packets that begin in a chunk. */
static uint32_t packets_in(const struct slot *s)
{
	uint32_t n = s->nfrags;

	if (s->flags & CHUNK_FIRST_CONTINUES)
		n--;
	return n;
}

static void lose_slot(struct central *c, const struct slot *s)
{
	c->st.packets_lost += packets_in(s);
	if (s->seq < c->nseqs && c->seqs[s->seq])
		c->seqs[s->seq]->packets_lost += packets_in(s);
}

/* Moves the staging chunk of seq into the ring, or loses it. */
static void commit(struct central *c, uint32_t seq, struct seq_writer *w)
{
	struct slot *s, fresh;

	if (!w->used)
		return;
	fresh = (struct slot){ w->staging, true, false, w->flags, w->nfrags,
			       seq, w->next_chunk_id++, w->used, 0 };
	pthread_mutex_lock(&c->lock);
	s = &c->slots[c->wr]; /* under the lock: other writers move it */
	w->used = 0;
	w->nfrags = 0;
	w->flags = w->open_packet ? CHUNK_FIRST_CONTINUES : 0;
	if (c->sealed || (s->used && !s->read && c->policy == FILL_DISCARD)) {
		c->sealed = true;
		c->st.chunks_discarded++;
		lose_slot(c, &fresh);
		pthread_mutex_unlock(&c->lock);
		return;
	}
	if (!s->used || s->read)
		__atomic_add_fetch(&c->unread, 1, __ATOMIC_RELAXED);
	if (s->used && !s->read) {
		c->st.chunks_overwritten++;
		c->st.bytes_overwritten += record_size(s->size);
		lose_slot(c, s);
	}
	w->staging = s->data;
	*s = fresh;
	s->gen = c->commits++;
	c->st.chunks_written++;
	c->st.bytes_written += record_size(fresh.size);
	if (++c->wr == c->nslots) {
		c->wr = 0;
		c->st.write_wrap_count++;
	}
	pthread_mutex_unlock(&c->lock);
}

/* Opens the next fragment of the packet being written on seq, which has
 * `left` bytes to go, and gives its region. A fragment that the packet
 * continues after leaves its chunk open until this is called again (the
 * bytes are written in place first), then commits it. */
static void frag_open(struct central *c, uint32_t seq, struct seq_writer *w,
		      size_t left, struct sink_span *sp)
{
	uint32_t room, n;
	uint8_t *h;

	if (w->open_packet)
		commit(c, seq, w);
	room = c->chunk_size - w->used;
	if (room <= FRAG_HDR || w->nfrags == UINT16_MAX) {
		/* not continue: a zero-length packet would be lost */
		commit(c, seq, w);
		room = c->chunk_size - w->used;
	}
	n = room - FRAG_HDR < left ? room - FRAG_HDR : (uint32_t)left;
	h = w->staging + w->used;
	h[0] = (uint8_t)n;
	h[1] = (uint8_t)(n >> 8);
	h[2] = (uint8_t)(n >> 16);
	h[3] = (uint8_t)(n >> 24);
	sp->p = h + FRAG_HDR;
	sp->end = sp->p + n;
	w->used += FRAG_HDR + n;
	w->nfrags++;
	w->left = left - n;
	w->open_packet = w->left > 0;
	if (w->open_packet)
		w->flags |= CHUNK_LAST_CONTINUES;
}

static int central_reserve(struct packet_sink *sink, uint32_t seq, size_t len,
			   struct sink_span *sp)
{
	struct central *c = sink->ctx;
	struct seq_writer *w = seq_get(c, seq, !c->nowned);

	if (!w)
		return -ENOMEM;
	frag_open(c, seq, w, len, sp);
	return 0;
}

static int central_advance(struct packet_sink *sink, uint32_t seq,
			   struct sink_span *sp)
{
	struct central *c = sink->ctx;
	struct seq_writer *w = seq < c->nseqs ? c->seqs[seq] : NULL;

	if (!w || !w->left)
		return -EINVAL; /* no packet is being written */
	frag_open(c, seq, w, w->left, sp);
	return 0;
}

static int central_write(struct packet_sink *sink, uint32_t seq,
			 const uint8_t *pkt, size_t len)
{
	struct sink_span sp;
	int e = central_reserve(sink, seq, len, &sp);

	while (!e) {
		size_t n = (size_t)(sp.end - sp.p);

		memcpy(sp.p, pkt, n);
		pkt += n;
		len -= n;
		if (!len)
			break;
		e = central_advance(sink, seq, &sp);
	}
	return e;
}

struct packet_sink *central_sink(struct central *c)
{
	return &c->sink;
}

/* Commits a staging chunk that holds whole packets only. */
static void flush_writer(struct central *c, uint32_t seq, struct seq_writer *w)
{
	if (w && w->used && !w->open_packet)
		commit(c, seq, w);
}

void central_flush(struct central *c)
{
	size_t i;

	for (i = 0; i < c->nseqs; i++)
		if (c->seqs[i] && !c->seqs[i]->owned)
			flush_writer(c, (uint32_t)i, c->seqs[i]);
}

void central_flush_seq(struct central *c, uint32_t seq)
{
	flush_writer(c, seq, seq < c->nseqs ? c->seqs[seq] : NULL);
}

int central_set_owned(struct central *c, uint32_t seq, bool owned)
{
	struct seq_writer *w = seq_get(c, seq, true);

	if (!w)
		return -ENOMEM;
	if (w->owned != owned)
		c->nowned += owned ? 1 : -1;
	w->owned = owned;
	return 0;
}

static int append(uint8_t **buf, size_t *len, size_t *cap, const uint8_t *p,
		  size_t n)
{
	if (*len + n > *cap) {
		size_t nc = (*len + n) * 2;
		uint8_t *b = realloc(*buf, nc);

		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = nc;
	}
	memcpy(*buf + *len, p, n);
	*len += n;
	return 0;
}

/* Emits one whole packet, with previous_packet_dropped appended after a
 * gap (the last value of a field wins, so it overrides the writer's). */
static int emit(struct central *c, struct seq_reader *r, uint32_t seq,
		const uint8_t *p, size_t n, struct packet_sink *out)
{
	static const uint8_t dropped[] = { 0xD0, 0x02, DROPPED_OVERWRITE };
	size_t len = 0;
	int e;

	if (!r->gap)
		return sink_write(out, seq, p, n);
	e = append(&c->scratch, &len, &c->scratch_cap, p, n);
	if (!e)
		e = append(&c->scratch, &len, &c->scratch_cap, dropped,
			   sizeof(dropped));
	r->gap = false;
	return e ? e : sink_write(out, seq, c->scratch, len);
}

/* locked: the pass holds the buffer's lock (no other writer thread). */
static int read_chunk(struct central *c, const struct slot *s,
		      const uint8_t *data, struct seq_reader *r,
		      struct packet_sink *out, bool consume, bool locked)
{
	uint32_t off = 0, i;
	int e = 0;

	if (!r->started ? s->chunk_id != 0 : s->chunk_id != r->next_chunk_id) {
		r->gap = true;
		r->partial_len = 0;
		r->has_partial = false;
	}
	r->started = true;
	r->next_chunk_id = s->chunk_id + 1;
	for (i = 0; i < s->nfrags && !e; i++) {
		uint32_t n = (uint32_t)data[off] | (uint32_t)data[off + 1] << 8 |
			     (uint32_t)data[off + 2] << 16 |
			     (uint32_t)data[off + 3] << 24;
		const uint8_t *p = data + off + FRAG_HDR;
		bool cont_in = i == 0 && (s->flags & CHUNK_FIRST_CONTINUES);
		bool cont_out = i + 1 == s->nfrags &&
				(s->flags & CHUNK_LAST_CONTINUES);

		off += FRAG_HDR + n;
		if (cont_in && !r->has_partial) {
			if (consume && !locked)
				pthread_mutex_lock(&c->lock);
			if (consume) /* a snapshot leaves the stats alone */
				c->st.readaheads_failed++; /* head was lost */
			if (consume && !locked)
				pthread_mutex_unlock(&c->lock);
			continue;
		}
		if (!cont_in)
			r->partial_len = 0;
		if (cont_out || cont_in) {
			e = append(&r->partial, &r->partial_len,
				   &r->partial_cap, p, n);
			r->has_partial = cont_out;
			if (!e && !cont_out)
				e = emit(c, r, s->seq, r->partial,
					 r->partial_len, out);
			continue;
		}
		e = emit(c, r, s->seq, p, n, out);
	}
	return e;
}

/* The reassembly state a pass uses: the persistent one when consuming;
 * for a snapshot, private copies (with their own partial buffers), so the
 * buffer and the next real pass are unaffected. */
static struct seq_reader *snapshot_readers(const struct central *c)
{
	struct seq_reader *tmp = calloc(c->nseqs ? c->nseqs : 1, sizeof(*tmp));
	size_t i;

	for (i = 0; tmp && i < c->nseqs; i++) {
		const struct seq_reader *rd;

		if (!c->seqs[i])
			continue;
		rd = &c->seqs[i]->rd;
		tmp[i] = *rd;
		tmp[i].partial = NULL;
		tmp[i].partial_cap = 0;
		tmp[i].partial_len = 0;
		if (rd->partial_len &&
		    append(&tmp[i].partial, &tmp[i].partial_len,
			   &tmp[i].partial_cap, rd->partial, rd->partial_len)) {
			while (i--)
				free(tmp[i].partial);
			free(tmp);
			return NULL;
		}
	}
	return tmp;
}

/* Takes slot k for a read pass if it holds a chunk committed before the
 * pass began (limit) and not read yet: its header into *s, its bytes in
 * *data (a copy while other threads commit, which may reuse the slot's
 * memory); marked read when consuming. Called and returns locked; with a
 * copy the lock is released before returning (*locked false). */
static bool take_slot(struct central *c, size_t k, uint64_t limit,
		      bool consume, struct slot *s, const uint8_t **data,
		      bool *locked)
{
	struct slot *sl = &c->slots[k];

	if (!sl->used || sl->read || sl->gen >= limit)
		return false;
	*s = *sl;
	*data = sl->data;
	if (consume) {
		sl->read = true;
		__atomic_sub_fetch(&c->unread, 1, __ATOMIC_RELAXED);
		c->st.chunks_read++;
		c->st.bytes_read += record_size(sl->size);
	}
	if (c->nowned) {
		memcpy(c->copy, sl->data, sl->size);
		*data = c->copy;
		pthread_mutex_unlock(&c->lock);
		*locked = false;
	}
	return true;
}

int central_read(struct central *c, struct packet_sink *out, bool consume)
{
	struct seq_reader *tmp = consume ? NULL : snapshot_readers(c);
	uint64_t limit;
	size_t i, start;
	int e = consume || tmp ? 0 : -ENOMEM;

	/* Other threads commit while the pass reads: each chunk is copied out
	 * under the lock and read after it, so no writer waits on the sink. */
	if (c->nowned && !c->copy && !(c->copy = malloc(c->chunk_size)))
		e = -ENOMEM;
	pthread_mutex_lock(&c->lock);
	limit = c->commits;
	start = c->wr;
	pthread_mutex_unlock(&c->lock);
	for (i = 0; i < c->nslots && !e; i++) {
		size_t k = (start + i) % c->nslots;
		const uint8_t *data;
		struct slot s;
		bool locked = true;

		pthread_mutex_lock(&c->lock);
		if (take_slot(c, k, limit, consume, &s, &data, &locked))
			e = read_chunk(c, &s, data,
				       consume ? &c->seqs[s.seq]->rd
					       : &tmp[s.seq],
				       out, consume, locked);
		if (locked)
			pthread_mutex_unlock(&c->lock);
	}
	for (i = 0; tmp && i < c->nseqs; i++)
		free(tmp[i].partial);
	free(tmp);
	return e;
}

const struct central_stats *central_stats(const struct central *c)
{
	return &c->st;
}

void central_stats_copy(struct central *c, struct central_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->st;
	pthread_mutex_unlock(&c->lock);
}

size_t central_unread_chunks(const struct central *c)
{
	return __atomic_load_n(&c->unread, __ATOMIC_RELAXED);
}

size_t central_slots(const struct central *c)
{
	return c->nslots;
}

uint64_t central_seq_packets_lost(struct central *c, uint32_t seq)
{
	uint64_t n;

	pthread_mutex_lock(&c->lock);
	n = seq < c->nseqs && c->seqs[seq] ? c->seqs[seq]->packets_lost : 0;
	pthread_mutex_unlock(&c->lock);
	return n;
}

struct central *central_new(uint64_t size, uint32_t chunk_size,
			    enum fill_policy policy)
{
	struct central *c = calloc(1, sizeof(*c));
	size_t i;

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	if (chunk_size <= FRAG_HDR * 2)
		goto fail;
	c->policy = policy;
	c->chunk_size = chunk_size;
	c->nslots = size / chunk_size < 2 ? 2 : size / chunk_size;
	c->mem_len = c->nslots * chunk_size;
	/* Untouched pages cost no memory until written. */
	c->mem = mmap(NULL, c->mem_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->slots = calloc(c->nslots, sizeof(*c->slots));
	if (c->mem == MAP_FAILED)
		c->mem = NULL;
	if (!c->mem || !c->slots)
		goto fail;
	/* Huge pages where the kernel offers them: the first pass through
	 * the buffer takes one fault per 2 MiB instead of per 4 KiB (the
	 * reader pays those faults on every new page it fills). */
	madvise(c->mem, c->mem_len, MADV_HUGEPAGE);
	for (i = 0; i < c->nslots; i++)
		c->slots[i].data = c->mem + i * chunk_size;
	c->st.buffer_size = c->mem_len;
	c->sink.write = central_write;
	c->sink.reserve = central_reserve;
	c->sink.advance = central_advance;
	c->sink.ctx = c;
	return c;
fail:
	central_free(c);
	return NULL;
}

/* Frees a chunk that malloc gave (a writer's first staging chunk, which a
 * commit may have moved into a slot); the mapped ones go with the map. */
static void chunk_free(const struct central *c, uint8_t *p)
{
	if (!p || (c->mem && p >= c->mem && p < c->mem + c->mem_len))
		return;
	free(p);
}

void central_free(struct central *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; c->slots && i < c->nslots; i++)
		chunk_free(c, c->slots[i].data);
	for (i = 0; i < c->nseqs; i++) {
		if (!c->seqs[i])
			continue;
		chunk_free(c, c->seqs[i]->staging);
		free(c->seqs[i]->rd.partial);
		free(c->seqs[i]);
	}
	free(c->seqs);
	free(c->slots);
	if (c->mem)
		munmap(c->mem, c->mem_len);
	free(c->scratch);
	free(c->copy);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
