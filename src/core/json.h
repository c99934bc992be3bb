/* JSON helpers shared by the readers of input files. */
#ifndef RB_CORE_JSON_H
#define RB_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cJSON.h>

/* The one strict JSON loader of every reader (shapes, SoC profiles, tuned files,
 * reports, space files, cache lines): `len` bytes (not NUL-terminated) that must be
 * exactly one JSON value with nothing after it but white space, no NUL byte, not
 * empty. 0 with *root (free with cJSON_Delete), or -EINVAL / -ENOMEM with a message
 * "<label>: invalid JSON at line L, column C ..." that says where and, for a file cut
 * short, "(is it truncated?)". `expected` completes "file is empty: expected ..." (NULL:
 * "a JSON value"). */
int rb_json_load(const char *json, size_t len, const char *label, const char *expected,
		 cJSON **root);
/* The same for a file read with rb_file_read (its errors name the path). */
int rb_json_load_file(const char *path, size_t limit, const char *expected, cJSON **root);

/* A loader of one document from JSON text (len bytes), its messages naming `label`. */
typedef int (*rb_json_text_loader)(void *out, const char *json, size_t len, const char *label);
/* Reads the file at path (rb_file_read) and loads its text with `load` into out,
 * labelled with the path: the one _load_file of every loader that takes text. */
int rb_json_load_file_with(const char *path, rb_json_text_loader load, void *out);

/* Adds s's m, k, n and dtype to the object o, as every document names a shape (in
 * core/shape.c, beside the dtype names). */
struct rb_shape;
void rb_json_add_shape(cJSON *o, const struct rb_shape *s);

/* What an empty shapes file should have held (for messages). */
#define RB_JSON_EMPTY_SHAPES "an object like {\"pairs\": [...]}"

/* Writes n bytes of s (stopping at a NUL) between q quotes into buf: quotes,
 * backslashes and control bytes escaped, shortened with "..." to fit `size` (>= 8).
 * Names and snippets come from files and command lines and may hold anything. */
const char *rb_json_quote(char *buf, size_t size, const char *s, size_t n, char q);

/* A key of obj that is not one of `known` but within two typos of one (one for known
 * keys of up to 3 letters): a misspelling that would be ignored silently ("dtpye").
 * True with *key and *meant set. */
bool rb_json_misspelled_key(const cJSON *obj, const char *const *known, size_t n, const char **key,
			    const char **meant);
/* The name of `known` within two typos of `typed` (one for names of up to 3 letters),
 * the nearest one; NULL when none is: a "did you mean" for a name a person typed. */
const char *rb_name_nearest(const char *typed, const char *const *known, size_t n);
/* True when s is valid UTF-8 without control characters (what may reach a terminal as
 * given); else *bad_at is the offset of the first bad byte. */
bool rb_text_printable(const char *s, size_t *bad_at);

/* An rb_file_writer (core/fileio.h) for a cJSON document `doc`: it printed, then a
 * newline. 0, -ENOMEM or -EIO. */
int rb_json_write(FILE *f, void *doc);

#endif
