/* jsoncheck FILE [PATH...]: exits 0 when FILE ("-": stdin) is one valid JSON value with
 * nothing after it, and prints the value at each PATH on a line of its own (dot-separated
 * keys and array indexes, e.g. results.0.verify.status; strings unquoted, "#" after a
 * key gives the array's length). A PATH with no value prints an empty line (so the
 * lines stay in step with the PATHs) and makes the exit status 1. A PATH of "--keys"
 * prints the path of every key of the document instead, one a line, array indexes as
 * "#" (to compare which keys two documents have, whatever their values). Used by the
 * end-to-end tests: one run reads many values of a file, where a run per value parses
 * the file again each time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

static char *slurp(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0, got;
	char *buf = malloc(cap + 1);

	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *bigger = realloc(buf, 2 * cap + 1);

			if (!bigger)
				free(buf);
			buf = bigger;
			cap *= 2;
		}
	}
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

static const cJSON *walk(const cJSON *v, char *path)
{
	for (char *key = path, *next; v && key && *key; key = next) {
		next = strchr(key, '.');
		if (next)
			*next++ = '\0';
		if (strcmp(key, "#") == 0) {
			static cJSON count;

			count.type = cJSON_Number;
			count.valuedouble = cJSON_GetArraySize(v);
			return &count;
		}
		if (cJSON_IsArray(v))
			v = cJSON_GetArrayItem(v, (int)strtol(key, NULL, 10));
		else
			v = cJSON_GetObjectItemCaseSensitive(v, key);
	}
	return v;
}

static void print_value(const cJSON *v)
{
	char *text;

	if (cJSON_IsString(v)) {
		puts(v->valuestring);
		return;
	}
	if (cJSON_IsNumber(v)) {
		printf("%.17g\n", v->valuedouble);
		return;
	}
	text = cJSON_PrintUnformatted(v);
	puts(text ? text : "?");
	free(text);
}

static void print_keys(const cJSON *v, const char *prefix)
{
	const cJSON *c;
	char path[1024];

	cJSON_ArrayForEach(c, v)
	{
		if (cJSON_IsArray(v))
			snprintf(path, sizeof(path), "%s%s#", prefix, *prefix ? "." : "");
		else
			snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "",
				 c->string);
		if (!cJSON_IsArray(v))
			puts(path);
		print_keys(c, path);
	}
}

int main(int argc, char **argv)
{
	FILE *f = argc > 1 && strcmp(argv[1], "-") != 0 ? fopen(argv[1], "rb") : stdin;
	const char *end = NULL;
	const cJSON *v;
	int missing = 0;
	size_t len;
	char *text;
	cJSON *doc;

	if (argc < 2 || !f || !(text = slurp(f, &len))) {
		fprintf(stderr, "jsoncheck: cannot read '%s'\n", argc > 1 ? argv[1] : "");
		return 2;
	}
	doc = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	while (doc && end && (*end == ' ' || *end == '\n' || *end == '\t' || *end == '\r'))
		end++;
	if (!doc || (end && *end)) {
		fprintf(stderr, "jsoncheck: invalid JSON at byte %ld\n",
			end ? (long)(end - text) : -1L);
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--keys") == 0) {
			print_keys(doc, "");
			continue;
		}
		v = walk(doc, argv[i]);
		if (v) {
			print_value(v);
			continue;
		}
		fprintf(stderr, "jsoncheck: no value at '%s'\n", argv[i]);
		puts("");
		missing = 1;
	}
	cJSON_Delete(doc);
	free(text);
	return missing;
}
