/* JSON helpers shared by the readers of input files. */
#ifndef RB_CORE_JSON_H
#define RB_CORE_JSON_H

#include <stddef.h>
#include <stdio.h>

#include <cJSON.h>

/* Parses `len` bytes (not NUL-terminated) that must be exactly one JSON value, nothing
 * after it but white space. NULL on a syntax error (*error_at: its byte offset) or out
 * of memory (*error_at 0). */
cJSON *rb_json_parse_strict(const char *json, size_t len, ptrdiff_t *error_at);

/* An rb_file_writer (core/fileio.h) for a cJSON document `doc`: it printed, then a
 * newline. 0, -ENOMEM or -EIO. */
int rb_json_write(FILE *f, void *doc);

#endif
