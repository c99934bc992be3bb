/* Fuzz target: the GGUF header reader (src/model/gguf.c), the input from memory. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "fuzz.h"
#include "model/gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rb_gguf_model m;
	int ret;

	if (!size)
		return 0;
	ret = rb_gguf_read_buffer(data, size, "fuzz.gguf", &m);
	FUZZ_CHECK_ERROR(ret);
	if (ret == 0) {
		FUZZ_CHECK(memchr(m.arch, '\0', sizeof(m.arch)) != NULL && m.arch[0]);
		FUZZ_CHECK(m.version == 2 || m.version == 3);
	}
	return 0;
}
