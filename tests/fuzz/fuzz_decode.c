/* Fuzz target: `rknn-bench dump` — the program reader (hex text or raw binary) and the
 * regcmd decoder (src/npu/decode.c). The first input byte picks the format (bit 0 set:
 * binary), the rest is the file. */
#include <string.h>

#include "core/error.h"
#include "fuzz.h"
#include "npu/regcmd.h"

static FILE *sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sink = fopen("/dev/null", "w");
	return 0;
}

/* Every word formats the same into a buffer too small, cut to a prefix of the text. */
static void check_format(uint64_t word)
{
	struct rb_decoded d;
	char full[512], cut[12];
	int len;

	FUZZ_CHECK(rb_decode_word(word, &d) == d.status);
	len = rb_decode_format(&d, full, sizeof(full));
	FUZZ_CHECK(len > 0 && (size_t)len < sizeof(full) && strlen(full) == (size_t)len);
	FUZZ_CHECK(rb_decode_format(&d, cut, sizeof(cut)) == len);
	FUZZ_CHECK(strncmp(cut, full, sizeof(cut) - 1) == 0 && strlen(cut) < sizeof(cut));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t *words = NULL;
	size_t n = 0, flagged = 0;
	int ret;

	if (size < 1)
		return 0;
	ret =
	    rb_regcmd_parse((const char *)data + 1, size - 1, data[0] & 1, "fuzz.hex", &words, &n);
	FUZZ_CHECK_ERROR(ret);
	if (ret < 0)
		return 0;
	FUZZ_CHECK(n >= 1 && words);
	for (size_t i = 0; i < n; i++) {
		struct rb_decoded d;

		check_format(words[i]);
		flagged += rb_decode_word(words[i], &d) != RB_DECODE_OK;
	}
	FUZZ_CHECK(rb_decode_print(sink, words, n) == flagged);
	free(words);
	return 0;
}
