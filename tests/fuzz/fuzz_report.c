/* Fuzz target: the report page (src/page/): any input as a run report, a tuned JSON
 * or a tune cache, whichever its schema says, then the whole HTML page written. */
#include "core/error.h"
#include "fuzz.h"
#include "page/page.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rb_page page;
	char *html = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	rb_page_init(&page, "fuzz");
	ret = rb_page_add_text(&page, "fuzz.json", (const char *)data, size);
	FUZZ_CHECK(ret == 0 || rb_last_error()[0] != '\0');
	f = open_memstream(&html, &len);
	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(rb_page_write_html(f, &page) == 0);
	fclose(f);
	FUZZ_CHECK(len > 0 && strstr(html, "</html>") != NULL);
	free(html);
	rb_page_release(&page);
	return 0;
}
