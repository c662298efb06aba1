/* /proc scanning into ProcessTree packets. */
#include "record/procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode/packet.h"
#include "record/clocks.h"
#include "record/task_status.h"
#include "record/tidset.h"

#define MAX_PROCS_PER_PACKET 256
#define CMDLINE_MAX 4096

typedef Perfetto__Protos__ProcessTree__Process Process;
typedef Perfetto__Protos__ProcessTree__Thread Thread;

struct procfs {
	struct packet_sink *sink;
	uint32_t seq_id;
	bool first_done;
	struct tidset seen_tids;  /* threads already described */
	/* tids known to be in seen_tids, direct-mapped: most records name a
	 * thread seen a moment ago, and this spares them the set lookup */
	int32_t recent[256];
	struct tidset seen_procs; /* processes already described */
	int32_t *pending;
	size_t npending, cap_pending;
	/* The packet being built. */
	Process **procs;
	Thread **threads;
	size_t nprocs, nthreads, cap_procs, cap_threads;
	uint64_t scan_ts;
};

static void *grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return arr;
	while (c < need)
		c *= 2;
	n = realloc(arr, c * elem);
	if (n)
		*cap = c;
	return n;
}

/* cmdline split on NUL into strings owned by the Process. */
static int fill_cmdline(Process *pr, int32_t pid, const char *comm)
{
	char path[64], buf[CMDLINE_MAX];
	size_t len = 0, i, n = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if (proc_read_file(path, buf, sizeof(buf), &len) || len == 0) {
		pr->cmdline = calloc(1, sizeof(char *));
		if (!pr->cmdline || !(pr->cmdline[0] = strdup(comm)))
			return -ENOMEM;
		pr->n_cmdline = 1;
		pr->has_cmdline_is_comm = pr->cmdline_is_comm = 1;
		return 0;
	}
	if (buf[len - 1] != '\0')
		buf[len++] = '\0'; /* cut at the buffer: terminate it */
	for (i = 0; i < len; i++)
		n += buf[i] == '\0';
	pr->cmdline = calloc(n, sizeof(char *));
	if (!pr->cmdline)
		return -ENOMEM;
	for (i = 0; i < len; i += strlen(buf + i) + 1) {
		pr->cmdline[pr->n_cmdline] = strdup(buf + i);
		if (!pr->cmdline[pr->n_cmdline++])
			return -ENOMEM;
	}
	return 0;
}

static int add_process(struct procfs *p, int32_t pid,
		       const struct task_status *st)
{
	Process *pr;
	Process **arr = grow(p->procs, &p->cap_procs, p->nprocs + 1,
			     sizeof(*arr));

	if (!arr)
		return -ENOMEM;
	p->procs = arr;
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return -ENOMEM;
	perfetto__protos__process_tree__process__init(pr);
	arr[p->nprocs++] = pr;
	pr->has_pid = pr->has_ppid = pr->has_uid = 1;
	pr->pid = pid;
	pr->ppid = st->ppid;
	pr->uid = st->uid;
	pr->has_is_kthread = 1;
	pr->is_kthread = st->kthread;
	if (tidset_add(&p->seen_procs, pid) < 0)
		return -ENOMEM;
	return fill_cmdline(pr, pid, st->name);
}

static int add_thread(struct procfs *p, int32_t tid,
		      const struct task_status *st)
{
	Thread *th;
	Thread **arr = grow(p->threads, &p->cap_threads, p->nthreads + 1,
			    sizeof(*arr));

	if (!arr)
		return -ENOMEM;
	p->threads = arr;
	th = calloc(1, sizeof(*th));
	if (!th)
		return -ENOMEM;
	perfetto__protos__process_tree__thread__init(th);
	arr[p->nthreads++] = th;
	th->has_tid = th->has_tgid = 1;
	th->tid = tid;
	th->tgid = st->tgid;
	if (tidset_add(&p->seen_tids, tid) < 0)
		return -ENOMEM;
	return (th->name = strdup(st->name)) ? 0 : -ENOMEM;
}

/* Describes tid (and its process, once). pid 0 is the idle task: never. */
static int describe(struct procfs *p, int32_t tid)
{
	struct task_status st, pst;
	int e = 0;

	if (tid <= 0 || tidset_has(&p->seen_tids, tid))
		return 0;
	if (task_status_read(tid, &st))
		return 0; /* gone already: nothing to say */
	if (!tidset_has(&p->seen_procs, st.tgid)) {
		if (st.tgid == tid)
			e = add_process(p, tid, &st);
		else if (!task_status_read(st.tgid, &pst))
			e = add_process(p, st.tgid, &pst);
		if (!e && st.tgid != tid && !tidset_has(&p->seen_tids, st.tgid))
			e = add_thread(p, st.tgid, &pst);
	}
	return e ? e : add_thread(p, tid, &st);
}

static void clear_packet(struct procfs *p)
{
	size_t i, j;

	for (i = 0; i < p->nprocs; i++) {
		for (j = 0; j < p->procs[i]->n_cmdline; j++)
			free(p->procs[i]->cmdline[j]);
		free(p->procs[i]->cmdline);
		free(p->procs[i]);
	}
	for (i = 0; i < p->nthreads; i++) {
		free(p->threads[i]->name);
		free(p->threads[i]);
	}
	p->nprocs = p->nthreads = 0;
}

static int emit_packet(struct procfs *p)
{
	Perfetto__Protos__TracePacket pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ProcessTree tree = PERFETTO__PROTOS__PROCESS_TREE__INIT;
	int e;

	if (!p->nprocs && !p->nthreads)
		return 0;
	tree.n_processes = p->nprocs;
	tree.processes = p->procs;
	tree.n_threads = p->nthreads;
	tree.threads = p->threads;
	tree.has_collection_end_timestamp = 1;
	tree.collection_end_timestamp = clocks_boottime_ns();
	pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE;
	pkt.process_tree = &tree;
	pkt.has_timestamp = 1;
	pkt.timestamp = p->scan_ts;
	if (!p->first_done) {
		pkt.has_sequence_flags = 1;
		pkt.sequence_flags = SEQ_FLAG_INCREMENTAL_STATE_CLEARED;
		p->first_done = true;
	}
	e = packet_emit(p->sink, p->seq_id, &pkt);
	clear_packet(p);
	return e;
}

static int maybe_emit(struct procfs *p)
{
	if (p->nprocs < MAX_PROCS_PER_PACKET)
		return 0;
	return emit_packet(p);
}

static int scan_tasks(struct procfs *p, int32_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int e = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return describe(p, pid);
	while (!e && (d = readdir(dir))) {
		if (isdigit((unsigned char)d->d_name[0]))
			e = describe(p, (int32_t)strtol(d->d_name, NULL, 10));
	}
	closedir(dir);
	return e;
}

int procfs_scan_all(struct procfs *p)
{
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int e = 0;

	if (!dir)
		return -errno;
	p->scan_ts = clocks_boottime_ns();
	while (!e && (d = readdir(dir))) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		e = scan_tasks(p, (int32_t)strtol(d->d_name, NULL, 10));
		if (!e)
			e = maybe_emit(p);
	}
	closedir(dir);
	return e ? e : emit_packet(p);
}

static int32_t *recent_slot(struct procfs *p, int32_t tid)
{
	return &p->recent[(uint32_t)tid % (sizeof(p->recent) / sizeof(p->recent[0]))];
}

static void seen_forget(struct procfs *p, int32_t tid)
{
	int32_t *r = recent_slot(p, tid);

	if (*r == tid)
		*r = 0;
	tidset_del(&p->seen_tids, tid);
}

void procfs_note_tid(struct procfs *p, int32_t tid)
{
	int32_t *arr, *r = recent_slot(p, tid);

	if (tid <= 0 || *r == tid)
		return;
	if (tidset_has(&p->seen_tids, tid)) {
		*r = tid;
		return;
	}
	arr = grow(p->pending, &p->cap_pending, p->npending + 1,
		   sizeof(*arr));
	if (!arr)
		return;
	p->pending = arr;
	p->pending[p->npending++] = tid;
	/* Mark now so a busy tid is queued once per flush. */
	tidset_add(&p->seen_tids, tid);
}

void procfs_forget_tid(struct procfs *p, int32_t tid)
{
	seen_forget(p, tid);
}

void procfs_forget_process(struct procfs *p, int32_t tgid)
{
	tidset_del(&p->seen_procs, tgid);
	seen_forget(p, tgid);
}

int procfs_flush(struct procfs *p)
{
	size_t i;
	int e = 0;

	if (!p->npending)
		return 0;
	p->scan_ts = clocks_boottime_ns();
	for (i = 0; i < p->npending && !e; i++) {
		seen_forget(p, p->pending[i]);
		e = describe(p, p->pending[i]);
		tidset_add(&p->seen_tids, p->pending[i]);
		if (!e)
			e = maybe_emit(p);
	}
	p->npending = 0;
	return e ? e : emit_packet(p);
}

void procfs_clear(struct procfs *p)
{
	tidset_free(&p->seen_tids);
	tidset_free(&p->seen_procs);
	memset(p->recent, 0, sizeof(p->recent)); /* it caches seen_tids */
	p->first_done = false; /* the next packet sets the cleared flag */
}

struct procfs *procfs_new(struct packet_sink *sink, uint32_t seq_id)
{
	struct procfs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->sink = sink;
	p->seq_id = seq_id;
	return p;
}

void procfs_free(struct procfs *p)
{
	if (!p)
		return;
	clear_packet(p);
	free(p->procs);
	free(p->threads);
	free(p->pending);
	tidset_free(&p->seen_tids);
	tidset_free(&p->seen_procs);
	free(p);
}
