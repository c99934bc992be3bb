/* Per-model totals (totals.h). */
#include "core/totals.h"

#include <math.h>
#include <stdio.h>

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

size_t rb_totals_sum(const struct rb_total_item *items, size_t n, struct rb_total *out, size_t max)
{
	size_t groups = 0;

	for (size_t i = 0; i < n; i++) {
		size_t g = group_of(out, &groups, max, items[i].m);

		if (g == max)
			continue;
		out[g].pairs += items[i].pairs;
		if (isfinite(items[i].us))
			out[g].total_us += items[i].us * (double)items[i].pairs;
		else
			out[g].complete = false;
	}
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
		cJSON_AddStringToObject(o, "kind", t[i].m == 1 ? "decode" : "prefill");
		cJSON_AddStringToObject(o, "per", t[i].m == 1 ? "token" : "prompt");
		cJSON_AddNumberToObject(o, "pairs", (double)t[i].pairs);
		if (t[i].complete)
			cJSON_AddNumberToObject(o, "total_us", t[i].total_us);
		else
			cJSON_AddNullToObject(o, "total_us");
	}
	return array;
}

void rb_total_text(const struct rb_total *t, char *buf, size_t size)
{
	char amount[48];

	if (t->complete)
		snprintf(amount, sizeof(amount), "%.1f µs", t->total_us);
	else
		snprintf(amount, sizeof(amount), "- (a shape has no time)");
	if (t->m == 1)
		snprintf(buf, size, "decode (M = 1): %s per token over %zu pairs", amount,
			 t->pairs);
	else
		snprintf(buf, size, "prefill (M = %lld): %s per %lld-token prompt over %zu pairs",
			 (long long)t->m, amount, (long long)t->m, t->pairs);
}
