#include "core/json.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

cJSON *rb_json_parse_strict(const char *json, size_t len, ptrdiff_t *error_at)
{
	char *text = malloc(len + 1);
	const char *end = NULL;
	cJSON *root;

	*error_at = 0;
	if (!text)
		return NULL;
	/* cJSON wants a terminated string to check what follows the value. */
	memcpy(text, json, len);
	text[len] = '\0';
	root = cJSON_ParseWithOpts(text, &end, true);
	if (!root && end)
		*error_at = end - text;
	free(text);
	return root;
}

int rb_json_write(FILE *f, void *doc)
{
	char *text = cJSON_Print(doc);
	int ret = 0;

	if (!text)
		return -ENOMEM;
	if (fputs(text, f) < 0 || fputc('\n', f) < 0)
		ret = -EIO;
	free(text);
	return ret;
}
