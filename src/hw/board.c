/* Known RK3588 boards and their memory (board.h). */
#include "hw/board.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "host/devtree.h"

#define MAX_ALIASES 3

/* One board: its device-tree compatible string (mainline kernels), the models vendor and
 * mainline device trees give it (normalized: lower case, '+' as "plus", other
 * punctuation as one space, a trailing "board" dropped) and its memory as its maker
 * publishes it. */
struct known_board {
	const char *name;
	const char *compatible;
	const char *models[MAX_ALIASES];
	enum rb_ddr_type ddr;
	const char *source;
};

#define ORANGEPI "http://www.orangepi.org/html/hardWare/computerAndMicrocontrollers/details/"

static const struct known_board boards[] = {
    {"Radxa ROCK 5B",
     "radxa,rock-5b",
     {"radxa rock 5b", "radxa rock 5 model b"},
     RB_DDR_LPDDR4X,
     "https://radxa.com/products/rock5/5b (LPDDR4x)"},
    {"Radxa ROCK 5B+",
     "radxa,rock-5b-plus",
     {"radxa rock 5b plus"},
     RB_DDR_LPDDR5,
     "https://radxa.com/products/rock5/5bp (LPDDR5)"},
    {"Radxa ROCK 5A",
     "radxa,rock-5a",
     {"radxa rock 5a", "radxa rock 5 model a"},
     RB_DDR_LPDDR4X,
     "https://radxa.com/products/rock5/5a (LPDDR4x)"},
    {"Radxa ROCK 5C",
     "radxa,rock-5c",
     {"radxa rock 5c"},
     RB_DDR_LPDDR4X,
     "https://radxa.com/products/rock5/5c (LPDDR4x)"},
    {"Orange Pi 5",
     "xunlong,orangepi-5",
     {"xunlong orange pi 5", "orange pi 5"},
     RB_DDR_LPDDR4X,
     ORANGEPI "Orange-Pi-5.html (LPDDR4/4x)"},
    {"Orange Pi 5B",
     "xunlong,orangepi-5b",
     {"xunlong orange pi 5b", "orange pi 5b"},
     RB_DDR_LPDDR4X,
     ORANGEPI "Orange-Pi-5B.html (LPDDR4/4x)"},
    {"Orange Pi 5 Plus",
     "xunlong,orangepi-5-plus",
     {"xunlong orange pi 5 plus", "orange pi 5 plus"},
     RB_DDR_LPDDR4X,
     ORANGEPI "Orange-Pi-5-plus.html (LPDDR4/4x)"},
    {"Orange Pi 5 Pro",
     "xunlong,orangepi-5-pro",
     {"xunlong orange pi 5 pro", "orange pi 5 pro"},
     RB_DDR_LPDDR5,
     ORANGEPI "Orange-Pi-5-Pro.html (LPDDR5)"},
    {"Orange Pi 5 Max",
     "xunlong,orangepi-5-max",
     {"xunlong orange pi 5 max", "orange pi 5 max"},
     RB_DDR_LPDDR5,
     ORANGEPI "Orange-Pi-5-Max.html (LPDDR5)"},
    {"Orange Pi 5 Ultra",
     "xunlong,orangepi-5-ultra",
     {"xunlong orange pi 5 ultra", "orange pi 5 ultra"},
     RB_DDR_LPDDR5,
     ORANGEPI "Orange-Pi-5-Ultra.html (LPDDR5)"},
    {"FriendlyElec NanoPC-T6",
     "friendlyarm,nanopc-t6",
     {"friendlyelec nanopc t6", "friendlyelec nanopc t6 lts"},
     RB_DDR_LPDDR4X,
     "https://wiki.friendlyelec.com/wiki/index.php/NanoPC-T6 (LPDDR4X)"},
    {"Khadas Edge2",
     "khadas,edge2",
     {"khadas edge2"},
     RB_DDR_LPDDR4X,
     "https://www.khadas.com/edge2 (LPDDR4X)"},
};

#define N_BOARDS ARRAY_SIZE(boards)

const char *rb_board_dt_root(void)
{
	const char *root = getenv("RKNN_BENCH_DTROOT");

	return root && *root ? root : "/proc/device-tree";
}

/* The first NUL- or newline-terminated string of dt_root/name into buf ("" if none). */
static void read_dt_string(const char *dt_root, const char *name, char *buf, size_t size)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dt_root, name);
	rb_devtree_read(path, buf, size);
	buf[strcspn(buf, "\n")] = '\0';
}

/* Lower case, '+' as " plus", every other run of non-alphanumerics as one space, no
 * leading or trailing space and no trailing " board". */
static void normalize(const char *in, char *out, size_t size)
{
	size_t n = 0;
	bool space = false;

	for (; *in && n + 6 < size; in++) {
		unsigned char c = (unsigned char)*in;

		if (isalnum(c)) {
			if (space && n > 0)
				out[n++] = ' ';
			out[n++] = (char)tolower(c);
			space = false;
		} else if (c == '+') {
			memcpy(out + n, " plus", 5);
			n += 5;
			space = true;
		} else {
			space = true;
		}
	}
	out[n] = '\0';
	if (n > 6 && strcmp(out + n - 6, " board") == 0)
		out[n - 6] = '\0';
}

static const struct known_board *by_model(const char *model)
{
	char norm[128];

	normalize(model, norm, sizeof(norm));
	for (size_t i = 0; i < N_BOARDS; i++)
		for (size_t j = 0; j < MAX_ALIASES && boards[i].models[j]; j++)
			if (strcmp(norm, boards[i].models[j]) == 0)
				return &boards[i];
	return NULL;
}

static const struct known_board *by_compatible(const char *compatible)
{
	for (size_t i = 0; i < N_BOARDS; i++)
		if (strcmp(compatible, boards[i].compatible) == 0)
			return &boards[i];
	return NULL;
}

void rb_board_detect(struct rb_board *b, const char *dt_root)
{
	const struct known_board *k = NULL;

	memset(b, 0, sizeof(*b));
	read_dt_string(dt_root, "model", b->model, sizeof(b->model));
	read_dt_string(dt_root, "compatible", b->compatible, sizeof(b->compatible));
	if (b->compatible[0] && (k = by_compatible(b->compatible)) != NULL)
		b->matched_by = "compatible";
	else if (b->model[0] && (k = by_model(b->model)) != NULL)
		b->matched_by = "model";
	if (!k)
		return;
	b->name = k->name;
	b->ddr = k->ddr;
	b->source = k->source;
}

const char *rb_ddr_type_name(enum rb_ddr_type t)
{
	return t == RB_DDR_LPDDR4X ? "LPDDR4x" : t == RB_DDR_LPDDR5 ? "LPDDR5" : "unknown";
}

const char *rb_ddr_type_key(enum rb_ddr_type t)
{
	return t == RB_DDR_LPDDR4X ? "lpddr4x" : t == RB_DDR_LPDDR5 ? "lpddr5" : NULL;
}
