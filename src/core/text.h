/* Text as a terminal draws it. */
#ifndef RB_CORE_TEXT_H
#define RB_CORE_TEXT_H

/* Terminal columns of a UTF-8 string: one per code point (no wide characters here). */
int rb_display_width(const char *s);

#endif
