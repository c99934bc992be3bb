/* Per-model totals (totals.h). */
#include "results/totals.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* After the last layer's attention, llama.cpp keeps the output rows only (totals.h). */
static const char *const output_rows_nodes[] = {"ffn_up", "ffn_gate", "ffn_out", "result_output"};

static size_t group_of(struct rb_total *out, size_t *n, size_t max, int64_t m)
{
	size_t i = 0, j;

	while (i < *n && out[i].m < m)
		i++;
	if (i < *n && out[i].m == m)
		return i;
	if (*n == max)
		return max; /* left out */
	for (j = *n; j > i; j--)
		out[j] = out[j - 1];
	out[i] = (struct rb_total){.m = m, .complete = true};
	++*n;
	return i;
}

static void add_time(struct rb_total *t, double us, size_t pairs)
{
	t->pairs += pairs;
	if (isfinite(us))
		t->total_us += us * (double)pairs;
	else
		t->complete = false;
}

bool rb_totals_output_rows_node(const char *node)
{
	for (size_t i = 0; i < sizeof(output_rows_nodes) / sizeof(output_rows_nodes[0]); i++)
		if (strcmp(node, output_rows_nodes[i]) == 0)
			return true;
	return false;
}

/* The layer of a "node-il" name (the node's length in *len), or -1 for a name without
 * one (*len: the whole name). */
static long name_layer(const char *name, size_t *len)
{
	const char *dash = strrchr(name, '-');
	char *end;
	long il;

	*len = strlen(name);
	if (!dash || !isdigit((unsigned char)dash[1]))
		return -1;
	il = strtol(dash + 1, &end, 10);
	if (*end)
		return -1;
	*len = (size_t)(dash - name);
	return il;
}

static long last_layer(const struct rb_total_pair *pairs, size_t n)
{
	long last = -1;

	for (size_t i = 0; i < n; i++) {
		size_t len;
		long il = pairs[i].name ? name_layer(pairs[i].name, &len) : -1;

		last = il > last ? il : last;
	}
	return last;
}

/* result_output, or a node after the last layer's attention. */
static bool output_row_pair(const char *name, long last)
{
	char node[64];
	size_t len;
	long il;

	if (!name)
		return false;
	il = name_layer(name, &len);
	if ((il >= 0 && il != last) || len >= sizeof(node))
		return false;
	memcpy(node, name, len);
	node[len] = '\0';
	return rb_totals_output_rows_node(node);
}

static bool has_name_at(const struct rb_total_pair *pairs, size_t n, const char *name, int64_t m)
{
	for (size_t i = 0; i < n; i++)
		if (pairs[i].m == m && pairs[i].name && strcmp(pairs[i].name, name) == 0)
			return true;
	return false;
}

/* A prompt's pairs at M = 1: those of its output row it does not list at its own M. */
static void add_output_rows(const struct rb_total_pair *pairs, size_t n, struct rb_total *t)
{
	long last = last_layer(pairs, n);

	for (size_t i = 0; i < n; i++)
		if (pairs[i].m == 1 && output_row_pair(pairs[i].name, last) &&
		    !has_name_at(pairs, n, pairs[i].name, t->m)) {
			add_time(t, pairs[i].us, 1);
			t->output_rows++;
		}
}

size_t rb_totals_sum_pairs(const struct rb_total_pair *pairs, size_t n, struct rb_total *out,
			   size_t max)
{
	size_t groups = 0;

	for (size_t i = 0; i < n; i++) {
		size_t g = group_of(out, &groups, max, pairs[i].m);

		if (g < max)
			add_time(&out[g], pairs[i].us, 1);
	}
	for (size_t g = 0; g < groups; g++)
		if (out[g].m > 1)
			add_output_rows(pairs, n, &out[g]);
	return groups;
}

cJSON *rb_totals_json(const struct rb_total *t, size_t n)
{
	cJSON *array = cJSON_CreateArray();

	for (size_t i = 0; array && i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o || !cJSON_AddItemToArray(array, o)) {
			cJSON_Delete(o);
			cJSON_Delete(array);
			return NULL;
		}
		cJSON_AddNumberToObject(o, "m", (double)t[i].m);
		cJSON_AddStringToObject(o, "kind", rb_total_kind(&t[i]));
		cJSON_AddStringToObject(o, "per", rb_total_per(&t[i]));
		cJSON_AddNumberToObject(o, "pairs", (double)t[i].pairs);
		if (t[i].m > 1)
			cJSON_AddNumberToObject(o, "output_rows", (double)t[i].output_rows);
		if (t[i].complete)
			cJSON_AddNumberToObject(o, "total_us", t[i].total_us);
		else
			cJSON_AddNullToObject(o, "total_us");
	}
	return array;
}

const char *rb_total_kind(const struct rb_total *t)
{
	return t->m == 1 ? "decode" : "prefill";
}

const char *rb_total_per(const struct rb_total *t)
{
	return t->m == 1 ? "token" : "prompt";
}

/* A whole number from `min` that a long long holds exactly. */
static bool count_in_range(const cJSON *v, double min)
{
	return cJSON_IsNumber(v) && v->valuedouble >= min && v->valuedouble < 9007199254740992.0 &&
	       v->valuedouble == floor(v->valuedouble);
}

/* kind and per follow from m: absent (an older writer) or as rb_totals_json writes them */
static bool string_is(const cJSON *o, const char *key, const char *want)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return !v || (cJSON_IsString(v) && strcmp(v->valuestring, want) == 0);
}

static bool total_parse(const cJSON *o, struct rb_total *t)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "m");
	const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(o, "pairs");
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(o, "output_rows");
	const cJSON *us = cJSON_GetObjectItemCaseSensitive(o, "total_us");

	if (!count_in_range(m, 1) || !count_in_range(pairs, 0) ||
	    !(cJSON_IsNumber(us) || cJSON_IsNull(us)) || (rows && !count_in_range(rows, 0)))
		return false;
	t->m = (int64_t)m->valuedouble;
	t->pairs = (size_t)pairs->valuedouble;
	t->output_rows = rows ? (size_t)rows->valuedouble : 0;
	t->complete = cJSON_IsNumber(us);
	t->total_us = t->complete ? us->valuedouble : NAN;
	return string_is(o, "kind", rb_total_kind(t)) && string_is(o, "per", rb_total_per(t));
}

int rb_totals_parse(const cJSON *array, const char *label, const char *where, struct rb_total *out,
		    size_t max, size_t *n)
{
	const cJSON *o;

	*n = 0;
	if (!array)
		return 0;
	if (!cJSON_IsArray(array))
		return rb_set_error(-EINVAL, "%s: %s is not an array", label, where);
	cJSON_ArrayForEach(o, array)
	{
		if (*n >= max)
			break;
		if (!total_parse(o, &out[*n]))
			return rb_set_error(-EINVAL,
					    "%s: %s[%zu] needs whole numbers m and pairs, kind "
					    "and per as m makes them, and total_us (a number "
					    "or null)",
					    label, where, *n);
		(*n)++;
	}
	return 0;
}

void rb_total_text(const struct rb_total *t, char *buf, size_t size)
{
	char amount[48], rows[64] = "";

	if (t->complete)
		snprintf(amount, sizeof(amount), "%.1f µs", t->total_us);
	else
		snprintf(amount, sizeof(amount), "- (a shape has no time)");
	if (t->m == 1) {
		snprintf(buf, size, "decode (M = 1): %s per token over %zu pairs", amount,
			 t->pairs);
		return;
	}
	if (t->output_rows)
		snprintf(rows, sizeof(rows), ", %zu of them at M = 1 (output row)", t->output_rows);
	snprintf(buf, size, "prefill (M = %lld): %s per %lld-token prompt over %zu pairs%s",
		 (long long)t->m, amount, (long long)t->m, t->pairs, rows);
}
