/* A backend's view of a tuned JSON: built with -Iinclude only (the public headers) and
 * linked against librknn-bench.a, the way the ggml-rknn backend would use it.
 *
 *   consumer TUNED.json              load it, look up every seed shape (ffn_up, ffn_out,
 *                                    result_output) and a few others, print the configs
 *   consumer --every TUNED.json      look every tuned pair up by its own name and shape:
 *                                    each must come back as itself (match=name); prints
 *                                    "N pairs found, N missed" and the reader's warnings
 *   consumer --api TUNED.json        every tuned pair's rknn_matmul_api section as a
 *                                    backend on librknnrt would use it: contexts on
 *                                    distinct cores covering N exactly, each width a
 *                                    multiple of 32 except the last, launch threads;
 *                                    prints "N pairs fit the API, N do not"
 *   consumer --patched-reader FILE   read FILE as the backend patched by
 *                                    docs/ggml-rknn-tuned.patch does: the seed's keys
 *                                    plus rknn_matmul_api.contexts[].core, n_begin,
 *                                    n_end (each required when the section is there);
 *                                    prints "N pairs, N with contexts"
 *   consumer --seed-reader FILE      read FILE with only the seed backend's fields
 *                                    (pairs[].src0.row/col, src1.row/col, name) the way
 *                                    its read_shape_pairs_from_json does, print them
 * Prints TAP-free plain lines; exits 0 on success, 1 on any error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "rknn_bench/tuned.h"

struct query {
	const char *name;
	int64_t m, k, n;
};

static const struct query queries[] = {
    {"ffn_up-0", 1, 2048, 8192},
    {"ffn_out-3", 1, 8192, 2048},
    {"result_output", 1, 2048, 128256},
    {"no-such-name", 1, 2048, 8192},
    {NULL, 4, 2048, 8192},
    {NULL, 1, 4096, 4096},
};

static void print_config(const struct query *q, const struct rb_tuned_config *t,
			 enum rb_tuned_match how)
{
	printf("%s %lldx%lldx%lld: ", q->name ? q->name : "(no name)", (long long)q->m,
	       (long long)q->k, (long long)q->n);
	if (!t) {
		printf("match=none (use the default)\n");
		return;
	}
	printf("match=%s from=%s mask=0x%x axis=%s launch=%s banks=%u:%u kslice=%u cores=",
	       rb_tuned_match_name(how), t->name, t->core_mask, t->split_axis, t->launch,
	       t->data_banks, t->weight_banks, t->k_slice);
	for (unsigned i = 0; i < t->n_ranges; i++)
		printf("%s%u[%u,%u)", i ? "," : "", t->ranges[i].core, t->ranges[i].begin,
		       t->ranges[i].end);
	printf(" median_us=%.3f%s verify=%s config='%s'\n", t->median_us,
	       t->modeled ? " (modeled)" : "", t->verify, t->config);
}

static int lookup_all(const char *path)
{
	struct rb_tuned_db *db;

	if (rb_tuned_load_file(&db, path) < 0) {
		fprintf(stderr, "consumer: %s\n", rb_last_error());
		return 1;
	}
	printf("device=%s driver=%s soc=%s tuned=%zu\n", rb_tuned_info(db, "device"),
	       rb_tuned_info(db, "driver"), rb_tuned_info(db, "soc"), rb_tuned_count(db));
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		const struct query *q = &queries[i];
		enum rb_tuned_match how;
		const struct rb_tuned_config *t =
		    rb_tuned_lookup(db, q->m, q->k, q->n, RB_DTYPE_FP16, q->name, &how);

		print_config(q, t, how);
	}
	rb_tuned_free(db);
	return 0;
}

/* Every tuned pair, looked up the way a backend asks for it (name and shape). */
static int lookup_every(const char *path)
{
	struct rb_tuned_db *db;
	size_t found = 0, missed = 0;

	if (rb_tuned_load_file(&db, path) < 0) {
		fprintf(stderr, "consumer: %s\n", rb_last_error());
		return 1;
	}
	for (size_t i = 0; i < rb_tuned_warning_count(db); i++)
		printf("warning: %s\n", rb_tuned_warning(db, i));
	for (size_t i = 0; i < rb_tuned_count(db); i++) {
		const struct rb_tuned_config *t = rb_tuned_at(db, i), *got;
		enum rb_tuned_match how;

		got = rb_tuned_lookup(db, t->shape.m, t->shape.k, t->shape.n, t->shape.dtype,
				      t->name, &how);
		if (got && how == RB_TUNED_NAME && strcmp(got->config, t->config) == 0 &&
		    strcmp(got->launch, t->launch) == 0)
			found++;
		else
			missed++, printf("missed: %s\n", t->name);
	}
	printf("%zu pairs found, %zu missed\n", found, missed);
	rb_tuned_free(db);
	return missed || !found;
}

/* Why a pair's rknn_matmul_api section cannot be used as it is, or NULL. */
static const char *api_defect(const struct rb_tuned_config *t)
{
	const struct rb_tuned_api *a = &t->api;
	unsigned used = 0;
	uint32_t at = 0;

	if (!a->present)
		return "no rknn_matmul_api section";
	if (!a->n_contexts || strcmp(a->launch, "threads") != 0)
		return "no contexts, or a launch other than threads";
	for (unsigned i = 0; i < a->n_contexts; i++) {
		const struct rb_tuned_api_context *c = &a->contexts[i];
		bool last = i + 1 == a->n_contexts;

		if (c->n_begin != at || (used & (1u << c->core)))
			return "contexts overlap, leave a gap or share a core";
		if (!last && (c->n_end - c->n_begin) % 32)
			return "a context other than the last is not a multiple of 32 wide";
		used |= 1u << c->core;
		at = c->n_end;
	}
	if (at != (uint64_t)t->shape.n)
		return "the contexts do not end at N";
	if (strcmp(a->type, t->shape.dtype == RB_DTYPE_INT8
				? "RKNN_INT8_MM_INT8_TO_INT32"
				: "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32") != 0)
		return "the type is not the pair's";
	return NULL;
}

static int check_api(const char *path)
{
	struct rb_tuned_db *db;
	size_t fit = 0, bad = 0;

	if (rb_tuned_load_file(&db, path) < 0) {
		fprintf(stderr, "consumer: %s\n", rb_last_error());
		return 1;
	}
	for (size_t i = 0; i < rb_tuned_count(db); i++) {
		const struct rb_tuned_config *t = rb_tuned_at(db, i);
		const char *why = api_defect(t);

		if (why)
			bad++, printf("%s: %s\n", t->name, why);
		else
			fit++;
	}
	printf("%zu pairs fit the API, %zu do not\n", fit, bad);
	rb_tuned_free(db);
	return bad || !fit;
}

/* The seed backend's reader: src0/src1 row/col and name of every pair, nothing else. */
static int seed_reader(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	long len;
	cJSON *root, *pairs, *p;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return fprintf(stderr, "consumer: cannot read '%s'\n", path), 1;
	text = calloc((size_t)len + 1, 1);
	if (!text || fread(text, 1, (size_t)len, f) != (size_t)len)
		return fprintf(stderr, "consumer: cannot read '%s'\n", path), 1;
	fclose(f);
	root = cJSON_Parse(text);
	free(text);
	pairs = cJSON_GetObjectItem(root, "pairs");
	if (!cJSON_IsArray(pairs))
		return fprintf(stderr, "consumer: '%s' has no pairs array\n", path), 1;
	cJSON_ArrayForEach(p, pairs)
	{
		cJSON *s0 = cJSON_GetObjectItem(p, "src0"), *s1 = cJSON_GetObjectItem(p, "src1");

		printf("matrix_pair: (%d, %d), (%d, %d) %s\n",
		       cJSON_GetObjectItem(s0, "row")->valueint,
		       cJSON_GetObjectItem(s0, "col")->valueint,
		       cJSON_GetObjectItem(s1, "row")->valueint,
		       cJSON_GetObjectItem(s1, "col")->valueint,
		       cJSON_GetObjectItem(p, "name")->valuestring);
	}
	cJSON_Delete(root);
	return 0;
}

static cJSON *read_json_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	long len;
	cJSON *root = NULL;

	if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (text = calloc((size_t)len + 1, 1)) &&
	    fread(text, 1, (size_t)len, f) == (size_t)len)
		root = cJSON_Parse(text);
	if (f)
		fclose(f);
	free(text);
	return root;
}

/* What nlohmann's .at(key).get<int64_t>() accepts: a number (integral here). */
static bool get_int(const cJSON *o, const char *key, double *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(x) || x->valuedouble != (double)(int64_t)x->valuedouble)
		return false;
	*v = x->valuedouble;
	return true;
}

static int patched_reader(const char *path)
{
	cJSON *root = read_json_file(path), *pairs = cJSON_GetObjectItem(root, "pairs"), *p;
	size_t n = 0, with = 0;
	int bad = 0;

	if (!cJSON_IsArray(pairs))
		return fprintf(stderr, "consumer: '%s' has no pairs array\n", path), 1;
	cJSON_ArrayForEach(p, pairs)
	{
		const cJSON *api = cJSON_GetObjectItem(p, "rknn_matmul_api");
		const cJSON *ctxs = cJSON_GetObjectItem(api, "contexts"), *c;

		n++;
		if (!cJSON_IsObject(api))
			continue;
		if (!cJSON_IsArray(ctxs)) {
			bad = 1;
			continue;
		}
		with++;
		printf("%s:", cJSON_GetObjectItem(p, "name")->valuestring);
		cJSON_ArrayForEach(c, ctxs)
		{
			double core, b, e;

			if (!get_int(c, "core", &core) || !get_int(c, "n_begin", &b) ||
			    !get_int(c, "n_end", &e))
				bad = 1;
			else
				printf(" core %g [%g, %g)", core, b, e);
		}
		printf("\n");
	}
	printf("%zu pairs, %zu with contexts\n", n, with);
	cJSON_Delete(root);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--seed-reader") == 0)
		return seed_reader(argv[2]);
	if (argc == 3 && strcmp(argv[1], "--every") == 0)
		return lookup_every(argv[2]);
	if (argc == 3 && strcmp(argv[1], "--api") == 0)
		return check_api(argv[2]);
	if (argc == 3 && strcmp(argv[1], "--patched-reader") == 0)
		return patched_reader(argv[2]);
	if (argc == 2)
		return lookup_all(argv[1]);
	fprintf(stderr,
		"usage: consumer TUNED.json | consumer --every TUNED.json | consumer "
		"--api TUNED.json | consumer --patched-reader FILE | consumer --seed-reader "
		"FILE\n");
	return 2;
}
