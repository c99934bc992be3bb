/* Text as a terminal draws it (text.h). */
#include "core/text.h"

int rb_display_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}
