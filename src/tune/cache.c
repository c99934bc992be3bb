/* The append-only tuning cache (see tune.h): JSON Lines, one durable line per result. */
#include "tune/tune.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fileio.h"
#include "core/json.h"

static const char *const kind_names[] = {"model", "run", "cpu"};

const char *rb_tune_kind_name(enum rb_tune_kind kind)
{
	return kind <= RB_TUNE_CPU ? kind_names[kind] : "unknown";
}

void rb_tune_shape_key(const struct rb_shape *s, char *buf, size_t size)
{
	snprintf(buf, size, "%lldx%lldx%lld %s", (long long)s->m, (long long)s->k, (long long)s->n,
		 rb_dtype_name(s->dtype));
}

static uint64_t record_key(enum rb_tune_kind kind, const char *shape, const char *config,
			   const char *launch)
{
	const char *parts[] = {kind_names[kind], shape, config, launch};
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < 4; i++)
		for (const unsigned char *p = (const unsigned char *)parts[i];; p++) {
			h = (h ^ *p) * UINT64_C(0x100000001b3);
			if (!*p)
				break;
		}
	return h;
}

/* ---- header ---- */

struct header_field {
	const char *name;
	size_t offset, size;
	bool compared; /* a mismatch refuses the cache */
};

#define FIELD(f, cmp)                                                                              \
	{                                                                                          \
#f, offsetof(struct rb_tune_header, f), sizeof(((struct rb_tune_header *)0)->f),   \
		    cmp                                                                            \
	}

static const struct header_field header_fields[] = {
    FIELD(tool_version, true), FIELD(device, true),      FIELD(driver, true),  FIELD(soc, true),
    FIELD(space, true),        FIELD(space_desc, false), FIELD(measure, true), FIELD(shard, false),
};

#define N_HEADER_FIELDS (sizeof(header_fields) / sizeof(header_fields[0]))

static char *header_field(const struct rb_tune_header *h, size_t i)
{
	return (char *)h + header_fields[i].offset;
}

static cJSON *header_json(const struct rb_tune_header *h)
{
	cJSON *o = cJSON_CreateObject();

	if (o && !cJSON_AddStringToObject(o, "schema", RB_TUNE_CACHE_SCHEMA))
		goto err;
	for (size_t i = 0; o && i < N_HEADER_FIELDS; i++)
		if (!cJSON_AddStringToObject(o, header_fields[i].name, header_field(h, i)))
			goto err;
	return o;
err:
	cJSON_Delete(o);
	return NULL;
}

/* A shard's records are valid in any tune of the setup, so a whole tune resumes any
 * cache; but a shard tune resuming another's cache (another shard's, or a whole tune's)
 * would keep its header, which merge refuses (docs/reliability.md): a shard resumes
 * its own cache only. */
static int shard_check(const struct rb_tune_cache *c, const cJSON *have,
		       const struct rb_tune_header *want)
{
	const char *shard = cJSON_IsString(have) ? have->valuestring : "";

	if (!want->shard[0] || strcmp(shard, want->shard) == 0)
		return 0; /* a whole tune resumes any cache of its setup */
	return rb_set_error(-ESTALE,
			    "cache '%s' was written by %s%s, this tune is shard %s: give each "
			    "shard its own --cache",
			    c->path, shard[0] ? "shard " : "a whole tune", shard, want->shard);
}

/* The first line against this run's header: 0, or -ESTALE naming what differs. */
static int header_check(const struct rb_tune_cache *c, const cJSON *o,
			const struct rb_tune_header *want)
{
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(o, "schema");

	if (!cJSON_IsString(schema) || strcmp(schema->valuestring, RB_TUNE_CACHE_SCHEMA) != 0)
		return rb_set_error(-ESTALE,
				    "'%s' is not a tune cache (%s); delete it or give another "
				    "--cache",
				    c->path, RB_TUNE_CACHE_SCHEMA);
	for (size_t i = 0; i < N_HEADER_FIELDS; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, header_fields[i].name);
		const char *w = header_field(want, i);

		if (!header_fields[i].compared)
			continue;
		if (!cJSON_IsString(v) || strcmp(v->valuestring, w) != 0)
			return rb_set_error(
			    -ESTALE,
			    "cache '%s' was written for %s '%s', this run has '%s': "
			    "delete it or give another --cache",
			    c->path, header_fields[i].name,
			    cJSON_IsString(v) ? v->valuestring : "?", w);
	}
	return shard_check(c, cJSON_GetObjectItemCaseSensitive(o, "shard"), want);
}

/* ---- records ---- */

/* The shortest text that reads back as exactly v: a resumed tune must rank and report
 * the very numbers it measured (cJSON's own printing rounds to 15 digits). */
static cJSON *exact_number(double v)
{
	char buf[32];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return cJSON_CreateRaw(buf);
}

static cJSON *record_json(const struct rb_tune_record *r)
{
	cJSON *o = cJSON_CreateObject();
	bool ok = o != NULL;

	ok = ok && cJSON_AddStringToObject(o, "kind", rb_tune_kind_name(r->kind));
	ok = ok && cJSON_AddStringToObject(o, "shape", r->shape);
	ok = ok && cJSON_AddStringToObject(o, "config", r->config);
	ok = ok && cJSON_AddStringToObject(o, "launch", r->launch);
	ok = ok && cJSON_AddStringToObject(o, "status", r->ok ? "ok" : "failed");
	if (ok && r->ok && isfinite(r->median_us))
		ok = cJSON_AddItemToObject(o, "median_us", exact_number(r->median_us));
	else if (ok)
		ok = cJSON_AddNullToObject(o, "median_us") != NULL;
	ok = ok && cJSON_AddStringToObject(o, "verify", r->verify);
	ok = ok && cJSON_AddStringToObject(o, "reason", r->reason);
	if (!ok)
		cJSON_Delete(o);
	return ok ? o : NULL;
}

static bool copy_string(const cJSON *o, const char *key, char *buf, size_t size)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(v) || strlen(v->valuestring) >= size)
		return false;
	snprintf(buf, size, "%s", v->valuestring);
	return true;
}

/* What a record's own fields allow (docs/reliability.md): NULL when it can be, else
 * why not. A resumed tune trusts a record as if it had just measured it, so a record
 * whose status, verification or time contradict each other is refused, never ranked. */
static const char *record_impossible(const struct rb_tune_record *r, bool has_time)
{
	bool measured = r->kind != RB_TUNE_MODEL;

	if (r->ok && !(r->median_us > 0 && r->median_us <= RB_TUNE_MAX_US))
		return "an ok record needs a time above 0 and at most an hour (µs)";
	if (!r->ok && has_time)
		return "a failed record has no time (null)";
	if (!measured && r->verify[0])
		return "a model record is never verified (verify \"\")";
	if (measured && r->ok && strcmp(r->verify, "verified") != 0 &&
	    strcmp(r->verify, "skipped") != 0)
		return "an ok run is verified or skipped";
	if (measured && !r->ok && r->verify[0] && strcmp(r->verify, "failed") != 0)
		return "a failed run's verify is \"failed\" or \"\" (it did not finish)";
	return NULL;
}

/* NULL and *r filled, or why the line is not a tune record. */
static const char *record_parse(const cJSON *o, struct rb_tune_record *r)
{
	const cJSON *median = cJSON_GetObjectItemCaseSensitive(o, "median_us");
	char kind[8], status[8];
	bool ok;

	memset(r, 0, sizeof(*r));
	ok = copy_string(o, "kind", kind, sizeof(kind)) &&
	     copy_string(o, "status", status, sizeof(status)) &&
	     copy_string(o, "shape", r->shape, sizeof(r->shape)) &&
	     copy_string(o, "config", r->config, sizeof(r->config)) &&
	     copy_string(o, "launch", r->launch, sizeof(r->launch)) &&
	     copy_string(o, "verify", r->verify, sizeof(r->verify)) &&
	     copy_string(o, "reason", r->reason, sizeof(r->reason));
	if (!ok)
		return "kind, status, shape, config, launch, verify and reason must be strings";
	for (r->kind = RB_TUNE_MODEL; r->kind <= RB_TUNE_CPU; r->kind++)
		if (strcmp(kind, kind_names[r->kind]) == 0)
			break;
	if (r->kind > RB_TUNE_CPU)
		return "kind is model, run or cpu";
	if (strcmp(status, "ok") != 0 && strcmp(status, "failed") != 0)
		return "status is ok or failed";
	if (median && !cJSON_IsNull(median) && !cJSON_IsNumber(median))
		return "median_us is a number or null";
	r->ok = strcmp(status, "ok") == 0;
	r->median_us = cJSON_IsNumber(median) ? median->valuedouble : NAN;
	return record_impossible(r, cJSON_IsNumber(median));
}

static int remember(struct rb_tune_cache *c, const struct rb_tune_record *r)
{
	if (c->count == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct rb_tune_record *rec = realloc(c->records, cap * sizeof(*rec));
		uint64_t *keys = rec ? realloc(c->keys, cap * sizeof(*keys)) : NULL;

		if (rec)
			c->records = rec;
		if (!keys)
			return rb_set_error(-ENOMEM, "out of memory for the tune cache");
		c->keys = keys;
		c->cap = cap;
	}
	c->records[c->count] = *r;
	c->keys[c->count++] = record_key(r->kind, r->shape, r->config, r->launch);
	return 0;
}

/* ---- opening ---- */

static int write_line(struct rb_tune_cache *c, cJSON *o)
{
	char *text = o ? cJSON_PrintUnformatted(o) : NULL;
	int ret = 0;

	if (!text)
		return rb_set_error(-ENOMEM, "out of memory for a cache line");
	if (fputs(text, c->f) < 0 || fputc('\n', c->f) < 0 || fflush(c->f) != 0 ||
	    fsync(fileno(c->f)) != 0)
		ret = rb_set_error(errno ? -errno : -EIO, "cannot write cache '%s': %s", c->path,
				   strerror(errno));
	free(text);
	return ret;
}

/* One complete line of an existing cache: line 1 is the header, then records. */
static int read_line(struct rb_tune_cache *c, const char *line, size_t len, size_t no,
		     const struct rb_tune_header *h)
{
	struct rb_tune_record r;
	char label[64];
	const char *impossible;
	cJSON *o;
	int ret;

	snprintf(label, sizeof(label), "line %zu", no);
	if (rb_json_load(line, len, label, "a JSON object", &o) < 0) {
		char why[512];

		snprintf(why, sizeof(why), "%s", rb_last_error()); /* the buffer is reused */
		return rb_set_error(-EINVAL,
				    "cache '%s' %s: delete the cache or give another --cache",
				    c->path, why);
	}
	if (no == 1)
		ret = header_check(c, o, h);
	else if ((impossible = record_parse(o, &r)))
		ret = rb_set_error(-EINVAL,
				   "cache '%s' line %zu is not a tune record: %s; delete the cache "
				   "or give another --cache",
				   c->path, no, impossible);
	else
		ret = remember(c, &r);
	cJSON_Delete(o);
	return ret;
}

/* Reads every complete line; *good is the length of the valid prefix. A last line
 * without its newline is a write cut short by a crash: dropped. */
static int read_all(struct rb_tune_cache *c, const char *data, size_t len, size_t *good,
		    const struct rb_tune_header *h)
{
	size_t pos = 0, no = 0;
	int ret = 0;

	while (ret == 0 && pos < len) {
		const char *nl = memchr(data + pos, '\n', len - pos);

		if (!nl) {
			c->dropped_last_line = true;
			break;
		}
		ret = read_line(c, data + pos, (size_t)(nl - data - (ptrdiff_t)pos), ++no, h);
		pos = (size_t)(nl - data) + 1;
	}
	*good = pos;
	c->resumed = c->count;
	return ret;
}

int rb_tune_cache_parse(struct rb_tune_cache *c, const char *path, const char *data, size_t len,
			const struct rb_tune_header *h, size_t *valid)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->lock_fd = -1;
	*valid = 0;
	c->path = strdup(path);
	if (!c->path)
		return rb_set_error(-ENOMEM, "out of memory");
	ret = read_all(c, data, len, valid, h);
	if (ret == 0 && *valid == 0 && c->dropped_last_line)
		ret = rb_set_error(-ESTALE,
				   "cache '%s' has no complete header line: delete it or give "
				   "another --cache",
				   c->path);
	return ret;
}

/* Two tunes appending to one cache interleave their lines and the next resume refuses
 * it: the cache is a regular file locked (flock) for as long as it is open. */
static int lock_cache(const char *path, int *fd)
{
	struct stat st;

	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
	if (*fd < 0)
		return rb_set_error(-errno, "cannot open cache '%s': %s", path, strerror(errno));
	if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(*fd);
		*fd = -1;
		return rb_set_error(-EINVAL, "cache '%s' is not a regular file: give --cache FILE",
				    path);
	}
	if (flock(*fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	close(*fd);
	*fd = -1;
	return rb_set_error(-ETXTBSY,
			    "cache '%s' is in use by another rknn-bench tune: wait for it to "
			    "finish, or give another --cache (or -o)",
			    path);
}

int rb_tune_cache_open(struct rb_tune_cache *c, const char *path, const struct rb_tune_header *h)
{
	bool fresh = true;
	char *data = NULL;
	size_t len = 0, good = 0;
	struct stat st;
	int fd, ret = lock_cache(path, &fd);

	memset(c, 0, sizeof(*c));
	c->lock_fd = -1;
	if (ret < 0)
		return ret;
	fresh = fstat(fd, &st) == 0 && st.st_size == 0;
	if (!fresh)
		ret = rb_file_read(path, &data, &len);
	if (ret == 0)
		ret = rb_tune_cache_parse(c, path, data, len, h, &good);
	c->lock_fd = fd; /* parse cleared the struct */
	free(data);
	if (ret == 0 && good < len && ftruncate(fd, (off_t)good) != 0)
		ret = rb_set_error(-errno, "cannot drop the truncated last line of '%s': %s", path,
				   strerror(errno));
	if (ret == 0) {
		c->f = fopen(path, "a");
		if (!c->f)
			ret = rb_set_error(-errno, "cannot open cache '%s': %s", path,
					   strerror(errno));
	}
	if (ret == 0 && fresh) {
		cJSON *o = header_json(h);

		ret = write_line(c, o);
		cJSON_Delete(o);
	}
	if (ret < 0)
		rb_tune_cache_close(c);
	return ret;
}

const struct rb_tune_record *rb_tune_cache_find(const struct rb_tune_cache *c,
						enum rb_tune_kind kind, const char *shape,
						const char *config, const char *launch)
{
	uint64_t key = record_key(kind, shape, config, launch);

	for (size_t i = 0; i < c->count; i++) {
		const struct rb_tune_record *r = &c->records[i];

		if (c->keys[i] == key && r->kind == kind && !strcmp(r->shape, shape) &&
		    !strcmp(r->config, config) && !strcmp(r->launch, launch))
			return r;
	}
	return NULL;
}

int rb_tune_cache_append(struct rb_tune_cache *c, const struct rb_tune_record *r)
{
	cJSON *o = record_json(r);
	int ret = o ? write_line(c, o) : rb_set_error(-ENOMEM, "out of memory");

	cJSON_Delete(o);
	return ret < 0 ? ret : remember(c, r);
}

void rb_tune_cache_close(struct rb_tune_cache *c)
{
	if (c->f)
		fclose(c->f);
	if (c->lock_fd >= 0)
		close(c->lock_fd); /* releases the lock */
	free(c->path);
	free(c->records);
	free(c->keys);
	memset(c, 0, sizeof(*c));
	c->lock_fd = -1;
}

/* ---- merge's and the page's side: a cache's header, a whole cache written at once ---- */

const char *rb_tune_header_field(const struct rb_tune_header *h, size_t i, const char **value)
{
	if (i >= N_HEADER_FIELDS)
		return NULL;
	*value = header_field(h, i);
	return header_fields[i].name;
}

bool rb_tune_cache_text_is(const char *text, size_t len)
{
	const char *nl = memchr(text, '\n', len);
	cJSON *o = NULL;
	char schema[sizeof(RB_TUNE_CACHE_SCHEMA)];
	bool is;

	if (!nl || rb_json_load(text, (size_t)(nl - text), "", NULL, &o) < 0)
		return false;
	is = copy_string(o, "schema", schema, sizeof(schema)) &&
	     strcmp(schema, RB_TUNE_CACHE_SCHEMA) == 0;
	cJSON_Delete(o);
	return is;
}

int rb_tune_cache_read_header(const char *path, const char *data, size_t len,
			      struct rb_tune_header *h)
{
	const char *nl = memchr(data, '\n', len);
	cJSON *o = NULL;
	int ret = rb_json_load(data, nl ? (size_t)(nl - data) : len, path, "a JSON object", &o);

	memset(h, 0, sizeof(*h));
	for (size_t i = 0; ret == 0 && i < N_HEADER_FIELDS; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, header_fields[i].name);

		/* a cache older than a field that is not compared lacks it: "" */
		if (!copy_string(o, header_fields[i].name, header_field(h, i),
				 header_fields[i].size) &&
		    (v || header_fields[i].compared))
			ret = rb_set_error(-EINVAL,
					   "%s: line 1 (the cache header) needs '%s', a string of "
					   "fewer than %zu bytes",
					   path, header_fields[i].name, header_fields[i].size);
	}
	cJSON_Delete(o);
	return ret;
}

struct whole_cache {
	const struct rb_tune_header *header;
	const struct rb_tune_record *records;
	size_t count;
};

static int put_line(FILE *f, cJSON *o)
{
	char *text = o ? cJSON_PrintUnformatted(o) : NULL;
	int ret = text && fputs(text, f) >= 0 && fputc('\n', f) >= 0 ? 0 : -EIO;

	free(text);
	cJSON_Delete(o);
	return ret;
}

static int write_whole(FILE *f, void *ctx)
{
	const struct whole_cache *w = ctx;
	int ret = put_line(f, header_json(w->header));

	for (size_t i = 0; ret == 0 && i < w->count; i++)
		ret = put_line(f, record_json(&w->records[i]));
	return ret;
}

int rb_tune_cache_write(const char *path, const struct rb_tune_header *h,
			const struct rb_tune_record *records, size_t count)
{
	struct whole_cache w = {h, records, count};

	return rb_file_write_atomic(path, write_whole, &w);
}
