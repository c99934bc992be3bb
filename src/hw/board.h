/* Which RK3588 board this is and which memory it has, from the device tree.
 *
 * The DDR type decides the NPU's shared bandwidth (configs/soc/rk3588-lpddr4x.json,
 * rk3588-lpddr5.json), but no kernel interface tells it reliably: the type is known to
 * the boot loader and to TF-A, and neither the vendor DMC driver nor mainline exposes
 * it to user space. So the board is named by its device tree (the first "compatible"
 * string, else "model") and a table of known boards gives its memory, each row with the
 * vendor's published specification as source (board.c).
 *
 * The device tree is read under rb_board_dt_root(): $RKNN_BENCH_DTROOT when set (tests
 * point it at a directory of fake files), else /proc/device-tree. */
#ifndef RB_HW_BOARD_H
#define RB_HW_BOARD_H

enum rb_ddr_type {
	RB_DDR_UNKNOWN = 0,
	RB_DDR_LPDDR4X, /* LPDDR4 or LPDDR4x: the same 4224 MT/s on the RK3588 */
	RB_DDR_LPDDR5,
};

struct rb_board {
	char model[96];         /* the device tree's model, "" when there is none */
	char compatible[64];    /* its first compatible string, "" when there is none */
	const char *name;       /* the table's name of the board, NULL when not known */
	enum rb_ddr_type ddr;   /* RB_DDR_UNKNOWN when not known */
	const char *source;     /* where the table's memory type comes from, or NULL */
	const char *matched_by; /* "compatible" or "model", or NULL */
};

/* $RKNN_BENCH_DTROOT, else "/proc/device-tree". */
const char *rb_board_dt_root(void);

/* Reads the model and compatible files under dt_root and looks the board up. Never
 * fails: a machine without a device tree (a PC) or an unknown board gives a board of
 * unknown name and memory. */
void rb_board_detect(struct rb_board *b, const char *dt_root);

/* "LPDDR4x", "LPDDR5" or "unknown"; the profile suffix "lpddr4x", "lpddr5" or NULL. */
const char *rb_ddr_type_name(enum rb_ddr_type t);
const char *rb_ddr_type_key(enum rb_ddr_type t);

#endif
