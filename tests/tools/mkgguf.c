/* Writes a GGUF header (no tensor data) for the e2e tests:
 *   mkgguf OUT ARCH EMBD FF LAYERS HEADS HEADS_KV VOCAB tokens|tensor
 * tokens: the vocabulary as tokenizer.ggml.tokens; tensor: only as output.weight. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_write.h"

static uint32_t num(const char *s)
{
	return (uint32_t)strtoul(s, NULL, 10);
}

int main(int argc, char **argv)
{
	struct gw w = {0};
	FILE *f;

	if (argc != 10) {
		fprintf(stderr, "usage: mkgguf OUT ARCH EMBD FF LAYERS HEADS HEADS_KV VOCAB "
				"tokens|tensor\n");
		return 2;
	}
	gw_model(&w, argv[2], num(argv[3]), num(argv[4]), num(argv[5]), num(argv[6]), num(argv[7]),
		 num(argv[8]), strcmp(argv[9], "tokens") == 0);
	f = fopen(argv[1], "wb");
	if (!f || fwrite(w.buf, 1, w.len, f) != w.len || fclose(f) != 0) {
		perror(argv[1]);
		return 1;
	}
	free(w.buf);
	return 0;
}
