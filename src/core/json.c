/* JSON helpers shared by every reader of input files (json.h). */
#include "core/json.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fileio.h"

/* What a message names: the file, and what it should have held. */
struct load_ctx {
	const char *label;
	const char *expected;
};

static int fail(const struct load_ctx *c, const char *fmt, ...) RB_PRINTF(2, 3);

static int fail(const struct load_ctx *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rb_set_error(-EINVAL, "%s: %s", c->label, msg);
}

/* Writes n bytes of s between q quotes, escaped and shortened to fit: names and
 * snippets come from files and command lines and may hold anything. */
const char *rb_json_quote(char *buf, size_t size, const char *s, size_t n, char q)
{
	size_t o = 0;

	buf[o++] = q;
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];
		char esc[8];
		int w;

		if (ch == (unsigned char)q || ch == '\\')
			w = snprintf(esc, sizeof(esc), "\\%c", ch);
		else if (ch == '\n')
			w = snprintf(esc, sizeof(esc), "\\n");
		else if (ch < 0x20 || ch == 0x7f)
			w = snprintf(esc, sizeof(esc), "\\x%02x", ch);
		else
			w = snprintf(esc, sizeof(esc), "%c", ch);
		if (o + (size_t)w + 5 > size) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(buf + o, esc, (size_t)w);
		o += (size_t)w;
	}
	buf[o++] = q;
	buf[o] = '\0';
	return buf;
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static size_t skip_space(const char *text, size_t off, size_t len)
{
	while (off < len && is_space(text[off]))
		off++;
	return off;
}

/* 1-based line and byte column of text[off]. */
static void position(const char *text, size_t off, size_t *line, size_t *col)
{
	size_t start = 0;

	*line = 1;
	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			++*line;
			start = i + 1;
		}
	}
	*col = off - start + 1;
}

enum open_end { ENDS_CLOSED, ENDS_IN_BRACKETS, ENDS_IN_STRING };

/* Whether the text ends inside a string (*str is then its opening quote) or with
 * brackets left open, as a file cut short does; a mismatched bracket means the error
 * is elsewhere. */
static enum open_end ends_open(const char *text, size_t len, size_t *str)
{
	char stack[256];
	size_t depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char ch = text[i];

		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = false;
		} else if (ch == '"') {
			in_str = true;
			*str = i;
		} else if (ch == '{' || ch == '[') {
			if (depth == sizeof(stack))
				return ENDS_CLOSED;
			stack[depth++] = ch == '{' ? '}' : ']';
		} else if (ch == '}' || ch == ']') {
			if (!depth || stack[--depth] != ch)
				return ENDS_CLOSED;
		}
	}
	if (in_str)
		return ENDS_IN_STRING;
	return depth ? ENDS_IN_BRACKETS : ENDS_CLOSED;
}

/* Up to 20 bytes of the text at off, to the end of the line, quoted. */
static const char *snippet(char *buf, size_t size, const char *text, size_t off, size_t len)
{
	size_t n = 0, o;

	while (off + n < len && n < 20 && text[off + n] != '\n')
		n++;
	rb_json_quote(buf, size, text + off, n, '"');
	o = strlen(buf);
	if (off + n < len && text[off + n] != '\n' && o >= 4 && o + 4 <= size && buf[o - 4] != '.')
		memcpy(buf + o - 1, "...\"", 5); /* say that the line goes on */
	return buf;
}

/* cJSON reports where it stopped (at most the last byte, at the start of a string
 * that fails); turn that into a message. */
static int syntax_error(const struct load_ctx *c, const char *text, size_t len, size_t off)
{
	size_t last = len, str = 0, line, col;
	enum open_end open = ends_open(text, len, &str);
	char snip[48];

	while (last > 0 && is_space(text[last - 1]))
		last--;
	if (open == ENDS_IN_STRING && off > str) {
		position(text, str, &line, &col);
		return fail(c,
			    "invalid JSON at line %zu, column %zu: string not closed before "
			    "the end of the file",
			    line, col);
	}
	if (open == ENDS_IN_BRACKETS && off + 1 >= last) {
		position(text, last, &line, &col);
		return fail(c,
			    "invalid JSON at line %zu, column %zu: unexpected end of file "
			    "(is it truncated?)",
			    line, col);
	}
	position(text, off, &line, &col);
	return fail(c, "invalid JSON at line %zu, column %zu near %s", line, col,
		    snippet(snip, sizeof(snip), text, off, len));
}

static int check_text(const struct load_ctx *c, const char *text, size_t len)
{
	const char *nul = memchr(text, '\0', len);
	size_t start = 0, line, col;

	if (nul) {
		position(text, (size_t)(nul - text), &line, &col);
		return fail(c, "NUL byte at line %zu, column %zu: not a JSON text file", line, col);
	}
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		start = 3; /* a UTF-8 byte order mark, which cJSON skips too */
	if (skip_space(text, start, len) == len)
		return fail(c, "file is empty: expected %s", c->expected);
	return 0;
}

/* The check after the value is ours rather than cJSON's require_null_terminated, which
 * (in 1.7.15) fails unless the length counts the terminator and cannot say where the
 * extra text starts. */
int rb_json_load(const char *json, size_t len, const char *label, const char *expected,
		 cJSON **root)
{
	const struct load_ctx ctx = {label ? label : "<string>",
				     expected ? expected : "a JSON value"};
	const struct load_ctx *c = &ctx;
	const char *end = NULL;
	char snip[48];
	size_t off, line, col;
	char *text;
	int rc;

	*root = NULL;
	rc = check_text(c, json, len);
	if (rc)
		return rc;
	/* A terminated copy: a parser bug reading one byte past len stays in bounds. */
	text = malloc(len + 1);
	if (!text)
		return rb_set_error(-ENOMEM, "%s: out of memory", c->label);
	memcpy(text, json, len);
	text[len] = '\0';
	*root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	off = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
	if (!*root) {
		rc = syntax_error(c, text, len, off);
	} else if ((off = skip_space(text, off, len)) < len) {
		position(text, off, &line, &col);
		rc = fail(c, "extra text after the JSON value at line %zu, column %zu: %s", line,
			  col, snippet(snip, sizeof(snip), text, off, len));
		cJSON_Delete(*root);
		*root = NULL;
	}
	free(text);
	return rc;
}

/* What rb_json_load_file hands to rb_json_load through rb_json_load_file_with. */
struct value_dest {
	const char *expected;
	cJSON **root;
};

static int load_value(void *out, const char *json, size_t len, const char *label)
{
	const struct value_dest *d = out;

	return rb_json_load(json, len, label, d->expected, d->root);
}

int rb_json_load_file(const char *path, size_t limit, const char *expected, cJSON **root)
{
	struct value_dest d = {expected, root};

	(void)limit;
	*root = NULL;
	return rb_json_load_file_with(path, load_value, &d);
}

int rb_json_load_file_with(const char *path, rb_json_text_loader load, void *out)
{
	char *data;
	size_t len;
	int ret = rb_file_read(path, &data, &len);

	if (ret < 0)
		return ret;
	ret = load(out, data, len, path);
	free(data);
	return ret;
}

int rb_json_write(FILE *f, void *doc)
{
	char *text = cJSON_Print(doc);
	int ret = 0;

	if (!text)
		return -ENOMEM;
	errno = 0;
	/* a text longer than the stream's buffer fails here, not at fflush: keep why */
	if (fputs(text, f) < 0 || fputc('\n', f) < 0)
		ret = errno ? -errno : -EIO;
	free(text);
	return ret;
}

/* ---- keys and names a person typed ---- */

/* Edit distance with adjacent transpositions (optimal string alignment), ASCII case
 * folded; both strings are short keys. */
static size_t key_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[24][24];

	if (la >= 24 || lb >= 24)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t cost =
			    tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t v = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

bool rb_json_misspelled_key(const cJSON *obj, const char *const *known, size_t n, const char **key,
			    const char **meant)
{
	for (const cJSON *it = obj ? obj->child : NULL; it; it = it->next) {
		bool is_known = false;

		for (size_t k = 0; k < n && !is_known; k++)
			is_known = strcmp(it->string, known[k]) == 0;
		for (size_t k = 0; k < n && !is_known; k++) {
			size_t limit = strlen(known[k]) <= 3 ? 1 : 2;

			if (key_distance(it->string, known[k]) <= limit) {
				*key = it->string;
				*meant = known[k];
				return true;
			}
		}
	}
	return false;
}

const char *rb_name_nearest(const char *typed, const char *const *known, size_t n)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;

	for (size_t k = 0; k < n; k++) {
		size_t d = key_distance(typed, known[k]);

		if (d <= (strlen(known[k]) <= 3 ? 1u : 2u) && d < best_d) {
			best = known[k];
			best_d = d;
		}
	}
	return best;
}

/* Length of the UTF-8 sequence starting at s (0 if it is not a valid one). */
static size_t utf8_length(const unsigned char *s)
{
	size_t len = s[0] < 0x80             ? 1
		     : (s[0] & 0xe0) == 0xc0 ? 2
		     : (s[0] & 0xf0) == 0xe0 ? 3
		     : (s[0] & 0xf8) == 0xf0 ? 4
					     : 0;

	if (len == 2 && s[0] < 0xc2)
		return 0; /* overlong */
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

bool rb_text_printable(const char *s, size_t *bad_at)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; p[i];) {
		size_t len = utf8_length(p + i);

		if (!len || p[i] < 0x20 || p[i] == 0x7f) {
			*bad_at = i;
			return false;
		}
		i += len;
	}
	return true;
}
