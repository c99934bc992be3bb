/* The bug report bundle (bundle.h): files in memory, names scrubbed, a ustar writer
 * (POSIX.1-1988 "ustar" headers: 512-byte blocks, octal numbers, the checksum over the
 * header with its own field taken as spaces). */
#include "selftest/bundle.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define BLOCK 512

int rb_bundle_add(struct rb_bundle *b, const char *name, const char *data, size_t len)
{
	struct rb_bundle_file *v;
	size_t nlen = strlen(name);

	if (!nlen || nlen >= sizeof(v->name))
		return rb_set_error(-EINVAL, "bundle file name '%.120s' must be 1 to %zu bytes",
				    name, sizeof(v->name) - 1);
	v = realloc(b->files, (b->n + 1) * sizeof(*v));
	if (!v)
		return rb_set_error(-ENOMEM, "out of memory");
	b->files = v;
	v = &b->files[b->n];
	memcpy(v->name, name, nlen + 1);
	v->data = malloc(len ? len : 1);
	if (!v->data)
		return rb_set_error(-ENOMEM, "out of memory");
	memcpy(v->data, data, len);
	v->len = len;
	b->n++;
	return 0;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

static bool whole_word_at(const char *data, size_t len, size_t at, size_t wlen)
{
	return (at == 0 || !word_char(data[at - 1])) &&
	       (at + wlen == len || !word_char(data[at + wlen]));
}

static int scrub_file(struct rb_bundle_file *f, const char *word, const char *with)
{
	size_t wlen = strlen(word), rlen = strlen(with), n = 0;
	char *out = malloc(f->len / wlen * (rlen > wlen ? rlen : wlen) + f->len + 1);

	if (!out)
		return rb_set_error(-ENOMEM, "out of memory");
	for (size_t i = 0; i < f->len;) {
		if (i + wlen <= f->len && memcmp(f->data + i, word, wlen) == 0 &&
		    whole_word_at(f->data, f->len, i, wlen)) {
			for (size_t j = 0; j < rlen; j++)
				out[n++] = with[j];
			i += wlen;
		} else {
			out[n++] = f->data[i++];
		}
	}
	free(f->data);
	f->data = out;
	f->len = n;
	return 0;
}

int rb_bundle_scrub(struct rb_bundle *b, const char *word, const char *with)
{
	int err = 0;

	if (!word || strlen(word) < 2)
		return 0;
	for (size_t i = 0; err == 0 && i < b->n; i++)
		err = scrub_file(&b->files[i], word, with);
	return err;
}

static void octal(char *field, size_t size, unsigned long long v)
{
	snprintf(field, size, "%0*llo", (int)size - 1, v);
}

static void header(unsigned char h[BLOCK], const struct rb_bundle_file *f, time_t mtime)
{
	unsigned sum = 0;

	memset(h, 0, BLOCK);
	memcpy(h, f->name, strlen(f->name));
	octal((char *)h + 100, 8, 0644);
	octal((char *)h + 108, 8, 0);
	octal((char *)h + 116, 8, 0);
	octal((char *)h + 124, 12, f->len);
	octal((char *)h + 136, 12, (unsigned long long)mtime);
	memset(h + 148, ' ', 8);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	h[263] = h[264] = '0'; /* the version, "00" without a NUL */
	for (size_t i = 0; i < BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
}

int rb_bundle_write_tar(const struct rb_bundle *b, FILE *out, time_t mtime)
{
	static const unsigned char zero[BLOCK];
	unsigned char h[BLOCK];

	for (size_t i = 0; i < b->n; i++) {
		const struct rb_bundle_file *f = &b->files[i];
		size_t pad = (BLOCK - f->len % BLOCK) % BLOCK;

		header(h, f, mtime);
		if (fwrite(h, 1, BLOCK, out) != BLOCK ||
		    fwrite(f->data, 1, f->len, out) != f->len || fwrite(zero, 1, pad, out) != pad)
			return rb_set_error(-EIO, "%s", strerror(errno));
	}
	if (fwrite(zero, 1, BLOCK, out) != BLOCK || fwrite(zero, 1, BLOCK, out) != BLOCK)
		return rb_set_error(-EIO, "%s", strerror(errno));
	return 0;
}

void rb_bundle_release(struct rb_bundle *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->files[i].data);
	free(b->files);
	b->files = NULL;
	b->n = 0;
}

static const char *string_at(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int rb_bundle_add_report_files(struct rb_bundle *b, const cJSON *report)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(report, "selftest");
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(st, "failure");
	const cJSON *programs = cJSON_GetObjectItemCaseSensitive(f, "programs"), *p;
	const char *log = string_at(f, "kernel_log");
	int n = 0, err;

	if (!log)
		log = "(the selftest passed: no kernel log was kept)\n";
	err = rb_bundle_add(b, "kernel-log.txt", log, strlen(log));
	cJSON_ArrayForEach(p, programs)
	{
		const cJSON *core = cJSON_GetObjectItemCaseSensitive(p, "core");
		const char *hex = string_at(p, "hex");
		char name[64];

		if (err || !hex || !cJSON_IsNumber(core))
			continue;
		snprintf(name, sizeof(name), "programs/core%d.hex", core->valueint);
		err = rb_bundle_add(b, name, hex, strlen(hex));
		n++;
	}
	return err ? err : n;
}
