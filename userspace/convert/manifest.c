/* Parsing and checking of the trace manifest (see manifest.h), with json-c.
 * Every check names the field it is about. */
#include "convert/manifest.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock_graph.h"
#include "trace/clock_names.h"

/* Parsing state: the document, where messages go, and whether memory ran
 * out (then the message says so). */
struct mp {
	struct manifest *m;
	char *err;
	size_t errlen;
	bool oom;
	size_t *order;  /* files in path order (index_paths) */
};

static int bad(struct mp *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "perfetto_manifest: ..." into the message; returns -1. */
static int bad(struct mp *p, const char *fmt, ...)
{
	int n = snprintf(p->err, p->errlen, "perfetto_manifest: ");
	va_list ap;

	if (n < 0 || (size_t)n >= p->errlen)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int no_memory(struct mp *p)
{
	p->oom = true;
	return -1;
}

bool manifest_detect(const uint8_t *head, size_t n)
{
	static const char want[] = "{\"perfetto_manifest\"";
	size_t i, k = 0;

	for (i = 0; i < n && k < sizeof(want) - 1; i++) {
		if (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' ||
		    head[i] == '\r')
			continue;
		if (head[i] != (uint8_t)want[k++])
			return false;
	}
	return k == sizeof(want) - 1;
}

/* A clock NAME at field `what`: the manifest names the POSIX clocks,
 * REALTIME (1) to BOOTTIME (6), spelled exactly as clock_name() does. */
static int clock_of(struct mp *p, json_object *o, const char *what,
		    uint32_t *id)
{
	const char *s;
	char list[128] = "";
	uint32_t c;

	if (!json_object_is_type(o, json_type_string))
		return bad(p, "%s: clock name must be a string", what);
	s = json_object_get_string(o);
	if (!clock_by_name(s, id) && *id >= BTR_CLOCK_REALTIME &&
	    *id <= BTR_CLOCK_BOOTTIME)
		return 0;
	for (c = BTR_CLOCK_REALTIME; c <= BTR_CLOCK_BOOTTIME; c++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%s", c > BTR_CLOCK_REALTIME ? ", " : "",
			 clock_name(c));
	return bad(p, "%s: unknown clock name: %s. Use one of %s", what, s,
		   list);
}

/* True when a JSON string holds a NUL ("\u0000"): a C copy would cut
 * it, so names and paths with one are refused. */
static bool has_nul(json_object *s)
{
	return strlen(json_object_get_string(s)) !=
	       (size_t)json_object_get_string_len(s);
}

/* A copy of the string member `key` of o into *out (NULL when absent).
 * Non-empty when `nonempty`. */
static int string_of(struct mp *p, json_object *o, const char *key,
		     const char *what, bool nonempty, char **out)
{
	json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return bad(p, "%s.%s must be a string", what, key);
	if (nonempty && !json_object_get_string_len(v))
		return bad(p, "%s.%s must be non-empty", what, key);
	if (has_nul(v))
		return bad(p, "%s.%s must not hold a NUL character", what, key);
	*out = strdup(json_object_get_string(v));
	return *out ? 0 : no_memory(p);
}

/* The files entries in path order (built once every path is read):
 * lookups by path in log time, duplicates side by side. */
static const struct manifest *sort_m;

static int cmp_path(const void *a, const void *b)
{
	const struct manifest_file *f = sort_m->files;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int d = strcmp(f[x].path, f[y].path);

	return d ? d : (x > y) - (x < y);
}

/* Sorts p->order; the first path listed twice is an error. */
static int index_paths(struct mp *p)
{
	struct manifest *m = p->m;
	size_t i;

	p->order = malloc((m->n_files ? m->n_files : 1) * sizeof(*p->order));
	if (!p->order)
		return no_memory(p);
	for (i = 0; i < m->n_files; i++)
		p->order[i] = i;
	sort_m = m;
	qsort(p->order, m->n_files, sizeof(*p->order), cmp_path);
	for (i = 1; i < m->n_files; i++)
		if (!strcmp(m->files[p->order[i - 1]].path,
			    m->files[p->order[i]].path))
			return bad(p, "files[%zu].path: '%s' is listed twice",
				   p->order[i], m->files[p->order[i]].path);
	return 0;
}

/* The index of the files entry whose path is `path`, -1 if none. */
static long file_index(const struct mp *p, const char *path)
{
	size_t lo = 0, hi = p->order ? p->m->n_files : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(p->m->files[p->order[mid]].path, path);

		if (!d)
			return (long)p->order[mid];
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* True when the entry declares machine `name` (machine or machines). */
static bool declares(const struct manifest_file *f, const char *name)
{
	size_t i;

	if (f->machine)
		return !strcmp(f->machine, name);
	for (i = 0; i < f->n_machines; i++)
		if (!strcmp(f->machines[i].name, name))
			return true;
	return false;
}

static bool multi_machine(const struct manifest_file *f)
{
	return f->has_machines && f->n_machines > 1;
}

static int check_declared(struct mp *p, const char *what, const char *name,
			  const struct manifest_file *f)
{
	if ((f->machine || f->has_machines) && !declares(f, name))
		return bad(p, "%s: '%s' is not a machine declared by file '%s'",
			   what, name, f->path);
	return 0;
}

/* files[i].machine */
static int parse_machine(struct mp *p, json_object *o, const char *what,
			 struct manifest_file *f)
{
	char where[64];

	snprintf(where, sizeof(where), "%s.machine", what);
	if (!json_object_is_type(o, json_type_object))
		return bad(p, "%s must be an object with a name", where);
	if (string_of(p, o, "name", where, true, &f->machine))
		return -1;
	if (!f->machine)
		return bad(p, "%s: missing required field: name", where);
	return 0;
}

/* files[i].machines */
static int parse_machines(struct mp *p, json_object *o, const char *what,
			  struct manifest_file *f)
{
	size_t n, j, k;

	if (!json_object_is_type(o, json_type_array))
		return bad(p, "%s.machines must be an array", what);
	n = json_object_array_length(o);
	f->has_machines = true;
	f->machines = calloc(n ? n : 1, sizeof(*f->machines));
	if (!f->machines)
		return no_memory(p);
	for (j = 0; j < n; j++) {
		json_object *e = json_object_array_get_idx(o, j), *id;
		struct manifest_machine *mm = &f->machines[j];
		char where[96];

		snprintf(where, sizeof(where), "%s.machines[%zu]", what, j);
		if (!json_object_is_type(e, json_type_object))
			return bad(p, "%s must be an object", where);
		if (!json_object_object_get_ex(e, "id", &id) ||
		    !json_object_is_type(id, json_type_int) ||
		    json_object_get_int64(id) < 0 ||
		    json_object_get_uint64(id) > UINT32_MAX)
			return bad(p, "%s: id must be in [0, 4294967295]",
				   where);
		mm->id = (uint32_t)json_object_get_uint64(id);
		if (string_of(p, e, "name", where, true, &mm->name))
			return -1;
		f->n_machines = j + 1;
		if (!mm->name)
			return bad(p, "%s: missing required field: name", where);
		for (k = 0; k < j; k++)
			if (f->machines[k].id == mm->id)
				return bad(p, "%s: id %" PRIu32 " is declared "
					   "twice", where, mm->id);
	}
	return 0;
}

/* offset_ns: an integer other than INT64_MIN. */
static int parse_offset(struct mp *p, json_object *o, const char *what,
			int64_t *off)
{
	if (!json_object_is_type(o, json_type_int))
		return bad(p, "%s.offset_ns must be an integer", what);
	*off = json_object_get_int64(o);
	if (*off == INT64_MIN ||
	    (*off == INT64_MAX && json_object_get_uint64(o) > INT64_MAX))
		return bad(p, "%s.offset_ns is out of range", what);
	return 0;
}

/* files[i].clocks (needs every path: run after all entries are read). */
static int parse_clocks(struct mp *p, json_object *o, const char *what,
			size_t self)
{
	struct manifest_file *f = &p->m->files[self];
	struct manifest_clocks *c = &f->clocks;
	json_object *v, *st;
	char *file = NULL, sw[64], field[80];
	long ref;

	if (!json_object_is_type(o, json_type_object))
		return bad(p, "%s must be an object", what);
	f->has_clocks = true;
	snprintf(sw, sizeof(sw), "%s.sync_to", what);
	snprintf(field, sizeof(field), "%s.clock", what);
	if (json_object_object_get_ex(o, "clock", &v) &&
	    clock_of(p, v, field, &c->clock))
		return -1;
	if (string_of(p, o, "machine", what, true, &c->machine))
		return -1;
	if (json_object_object_get_ex(o, "offset_ns", &v) &&
	    parse_offset(p, v, what, &c->offset_ns))
		return -1;
	if (!json_object_object_get_ex(o, "sync_to", &st))
		return bad(p, "%s: a sync_to block is required", what);
	if (!json_object_is_type(st, json_type_object))
		return bad(p, "%s.sync_to must be an object", what);
	snprintf(field, sizeof(field), "%s.clock", sw);
	if (json_object_object_get_ex(st, "clock", &v) &&
	    clock_of(p, v, field, &c->sync_clock))
		return -1;
	if (string_of(p, st, "machine", sw, true, &c->sync_machine) ||
	    string_of(p, st, "file", sw, false, &file))
		return -1;
	if (!file)
		return bad(p, c->sync_machine ?
			   "%s.sync_to.machine: a machine name alone is "
			   "ambiguous, name the file too" :
			   "%s: sync_to.file is required", what);
	ref = file_index(p, file);
	if (ref < 0) {
		bad(p, "%s.sync_to.file names unknown file '%s'. It must "
		    "match the path of an entry in the files array", what,
		    file);
		free(file);
		return -1;
	}
	free(file);
	c->sync_file = (size_t)ref;
	snprintf(field, sizeof(field), "%s.machine", sw);
	if (c->sync_machine && check_declared(p, field, c->sync_machine,
					      &p->m->files[ref]))
		return -1;
	if (!c->sync_machine && multi_machine(&p->m->files[ref]))
		return bad(p, "%s: '%s' is a multi-machine trace; also name "
			   "the machine", what, p->m->files[ref].path);
	snprintf(field, sizeof(field), "%s.machine", what);
	if (c->machine && check_declared(p, field, c->machine, f))
		return -1;
	if (!c->machine && multi_machine(f))
		return bad(p, "%s: file '%s' is a multi-machine trace; name "
			   "which machine the clock is on", what, f->path);
	return 0;
}

/* A file that reaches itself through sync_to: each file has at most one
 * sync_to, so following the chains once, marking where they went, finds
 * every cycle. */
static int check_cycles(struct mp *p)
{
	const struct manifest *m = p->m;
	uint8_t *state = calloc(m->n_files ? m->n_files : 1, 1);
	size_t i, j;
	int rc = 0;

	if (!state)
		return no_memory(p);
	/* 0: not seen, 1: on the chain being followed, 2: done */
	for (i = 0; i < m->n_files && !rc; i++) {
		for (j = i; !state[j]; j = m->files[j].clocks.sync_file) {
			state[j] = 1;
			if (!m->files[j].has_clocks)
				break;
		}
		if (state[j] == 1 && m->files[j].has_clocks)
			rc = bad(p, "files[%zu].clocks.sync_to: cycle: '%s' is "
				 "synced to itself through sync_to", j,
				 m->files[j].path);
		for (j = i; state[j] == 1; j = m->files[j].clocks.sync_file) {
			state[j] = 2;
			if (!m->files[j].has_clocks)
				break;
		}
	}
	free(state);
	return rc;
}

/* One files[] entry without its clocks. */
static int parse_file(struct mp *p, json_object *o, size_t i)
{
	struct manifest_file *f = &p->m->files[i];
	json_object *path, *v, *w;
	char what[32];

	snprintf(what, sizeof(what), "files[%zu]", i);
	f->input = -1;
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "path", &path) ||
	    !json_object_is_type(path, json_type_string))
		return bad(p, "%s: files entries must be objects with a "
			   "string path", what);
	if (has_nul(path))
		return bad(p, "%s.path must not hold a NUL character", what);
	f->path = strdup(json_object_get_string(path));
	if (!f->path)
		return no_memory(p);
	if (json_object_object_get_ex(o, "machine", &v) &&
	    json_object_object_get_ex(o, "machines", &w))
		return bad(p, "%s: machine and machines are mutually "
			   "exclusive", what);
	if (json_object_object_get_ex(o, "machine", &v))
		return parse_machine(p, v, what, f);
	if (json_object_object_get_ex(o, "machines", &v))
		return parse_machines(p, v, what, f);
	return 0;
}

static int parse_files(struct mp *p, json_object *o)
{
	size_t n, i;
	json_object *c;

	if (!json_object_is_type(o, json_type_array))
		return bad(p, "files must be an array");
	n = json_object_array_length(o);
	p->m->files = calloc(n ? n : 1, sizeof(*p->m->files));
	if (!p->m->files)
		return no_memory(p);
	for (i = 0; i < n; i++) {
		p->m->n_files = i + 1;
		if (parse_file(p, json_object_array_get_idx(o, i), i))
			return -1;
	}
	if (index_paths(p))
		return -1;
	for (i = 0; i < n; i++) {
		char what[40];

		snprintf(what, sizeof(what), "files[%zu].clocks", i);
		if (json_object_object_get_ex(json_object_array_get_idx(o, i),
					      "clocks", &c) &&
		    parse_clocks(p, c, what, i))
			return -1;
	}
	return check_cycles(p);
}

static int parse_trace_time(struct mp *p, json_object *o)
{
	struct manifest *m = p->m;
	json_object *v;
	char *file = NULL;

	if (!json_object_is_type(o, json_type_object))
		return bad(p, "trace_time must be an object");
	if (!json_object_object_get_ex(o, "clock", &v))
		return bad(p, "trace_time: missing required field: clock");
	if (clock_of(p, v, "trace_time.clock", &m->trace_clock))
		return -1;
	m->has_trace_time = true;
	if (string_of(p, o, "machine", "trace_time", true, &m->trace_machine) ||
	    string_of(p, o, "file", "trace_time", false, &file))
		return -1;
	if (!file) {
		if (m->trace_machine)
			return bad(p, "trace_time.machine requires "
				   "trace_time.file");
		return 0;
	}
	m->trace_file = file_index(p, file);
	if (m->trace_file < 0) {
		bad(p, "trace_time.file names unknown file '%s'. It must "
		    "match the path of an entry in the files array", file);
		free(file);
		return -1;
	}
	free(file);
	if (m->trace_machine)
		return check_declared(p, "trace_time.machine", m->trace_machine,
				      &m->files[m->trace_file]);
	if (multi_machine(&m->files[m->trace_file]))
		return bad(p, "trace_time: '%s' is a multi-machine trace; also "
			   "name the machine", m->files[m->trace_file].path);
	return 0;
}

static int parse_attributes(struct mp *p, json_object *o)
{
	struct manifest *m = p->m;
	size_t n;

	if (!json_object_is_type(o, json_type_object))
		return bad(p, "attributes must be an object of string or "
			   "integer values");
	n = (size_t)json_object_object_length(o);
	m->attrs = calloc(n ? n : 1, sizeof(*m->attrs));
	if (!m->attrs)
		return no_memory(p);
	json_object_object_foreach(o, key, val) {
		struct manifest_attr *a = &m->attrs[m->n_attrs];

		if (!*key)
			return bad(p, "attributes: keys must be non-empty");
		if (!json_object_is_type(val, json_type_string) &&
		    !json_object_is_type(val, json_type_int))
			return bad(p, "attributes: '%s' must be a string or an "
				   "integer", key);
		if (json_object_is_type(val, json_type_string) && has_nul(val))
			return bad(p, "attributes: '%s' must not hold a NUL "
				   "character", key);
		a->key = strdup(key);
		a->value = strdup(json_object_get_string(val));
		a->is_int = json_object_is_type(val, json_type_int);
		a->ival = a->is_int ? json_object_get_int64(val) : 0;
		m->n_attrs++;
		if (!a->key || !a->value)
			return no_memory(p);
	}
	return 0;
}

static int parse_root(struct mp *p, json_object *root)
{
	json_object *meta, *v;
	int64_t version;

	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "perfetto_manifest", &meta) ||
	    !json_object_is_type(meta, json_type_object))
		return bad(p, "expected a JSON object with a top-level "
			   "perfetto_manifest key");
	if (!json_object_object_get_ex(meta, "version", &v))
		return bad(p, "missing required field: version");
	if (!json_object_is_type(v, json_type_int))
		return bad(p, "version must be an integer");
	version = json_object_get_int64(v);
	if (version != 1)
		return bad(p, "unsupported version: %" PRId64 ". Only version "
			   "1 is supported", version);
	if (json_object_object_get_ex(meta, "files", &v) && parse_files(p, v))
		return -1;
	if (json_object_object_get_ex(meta, "trace_time", &v) &&
	    parse_trace_time(p, v))
		return -1;
	if (json_object_object_get_ex(meta, "attributes", &v) &&
	    parse_attributes(p, v))
		return -1;
	return 0;
}

int manifest_parse(struct manifest *m, const char *source, const char *text,
		   size_t len, char *err, size_t errlen)
{
	struct mp p = { m, err, errlen, false, NULL };
	struct json_tokener *tok;
	json_object *root = NULL;
	int rc;

	memset(m, 0, sizeof(*m));
	m->trace_file = -1;
	m->source = strdup(source);
	tok = json_tokener_new();
	if (!m->source || !tok || len > INT32_MAX) {
		json_tokener_free(tok);
		manifest_free(m);
		return -ENOMEM;
	}
	root = json_tokener_parse_ex(tok, text, (int)len);
	if (!root || json_tokener_get_parse_end(tok) != len) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		bad(&p, "invalid JSON at offset %zu: %s",
		    json_tokener_get_parse_end(tok),
		    e == json_tokener_success ? "trailing data" :
		    e == json_tokener_continue ? "unexpected end" :
						 json_tokener_error_desc(e));
		rc = -1;
	} else {
		rc = parse_root(&p, root);
	}
	json_object_put(root);
	json_tokener_free(tok);
	free(p.order);
	if (rc) {
		manifest_free(m);
		m->trace_file = -1;
	}
	return p.oom ? -ENOMEM : rc;
}

void manifest_free(struct manifest *m)
{
	size_t i, j;

	for (i = 0; i < m->n_files; i++) {
		struct manifest_file *f = &m->files[i];

		free(f->path);
		free(f->machine);
		for (j = 0; j < f->n_machines; j++)
			free(f->machines[j].name);
		free(f->machines);
		free(f->clocks.machine);
		free(f->clocks.sync_machine);
	}
	free(m->files);
	for (i = 0; i < m->n_attrs; i++) {
		free(m->attrs[i].key);
		free(m->attrs[i].value);
	}
	free(m->attrs);
	free(m->trace_machine);
	free(m->source);
	memset(m, 0, sizeof(*m));
}

const char *manifest_machine_name(const struct manifest_file *f, uint32_t id)
{
	size_t i;

	for (i = 0; i < f->n_machines; i++)
		if (f->machines[i].id == id)
			return f->machines[i].name;
	return NULL;
}
