/* The regcmd encoder: register programs ("regcmd") for matmul tasks (npu-facts.md §a),
 * and the decoder that turns 64-bit words back into text (decode.c).
 *
 * A program is a sequence of little-endian 64-bit words (§a.1). Each task is a body of
 * register writes followed by a 4-word tail:
 *   PC.BASE_ADDRESS = address of the next task's body   (a literal 0 word if last)
 *   PC.REGISTER_AMOUNTS = rb_regcmd_pc_amount(next body) (0 if last)
 *   sync word (target 0x0041)
 *   op-enable word (target 0x0081): the blocks this task runs
 * The submit ioctl takes a task's body length as `regcfg_amount` (the kernel adds the
 * tail); mainline rocket takes body + tail as `regcmd_count`.
 *
 * Ownership: a struct rb_regcmd is owned by the caller. _init sets it up empty,
 * _release frees the words it holds. _emit_task appends; _build_chain replaces the
 * contents. On error both return a negative errno, leave `count` where it was before
 * the call (0 for _build_chain), and rb_last_error() names every field that did not fit
 * ("CNA.DATA_SIZE0.DATAIN_HEIGHT: 2048 does not fit 11 bits") or the broken constraint. */
#ifndef RB_NPU_REGCMD_H
#define RB_NPU_REGCMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hw/task.h"

struct rb_regcmd {
	uint64_t *words;
	size_t count;
	size_t capacity;
};

/* Where one task of a chain lies in the buffer. */
struct rb_regcmd_layout {
	size_t offset;          /* index of the task's first body word in words[] */
	uint32_t addr;          /* its NPU address: base_addr + 8·offset (16-byte aligned) */
	uint32_t regcfg_amount; /* body words, without the tail: the submit's regcfg_amount */
	uint32_t words;         /* body + tail: mainline rocket's regcmd_count */
};

/* Words of the tail every task ends with. */
#define RB_REGCMD_TAIL_WORDS 4

void rb_regcmd_init(struct rb_regcmd *rc);
void rb_regcmd_release(struct rb_regcmd *rc);

/* Appends the complete program of one task: its body and the last-task tail. */
int rb_regcmd_emit_task(struct rb_regcmd *rc, const struct rb_npu_task *task);

/* Replaces rc's contents with the chain of n >= 1 tasks laid out back to back, the first
 * word at NPU address base_addr (16-byte aligned). Each task's tail points at the next
 * one; the last ends the chain. If layout is not NULL it receives n entries. */
int rb_regcmd_build_chain(struct rb_regcmd *rc, const struct rb_npu_task *tasks, size_t n,
			  uint32_t base_addr, struct rb_regcmd_layout *layout);

/* The PC fetch amount of a task whose body has body_words words: ceil((b + 4) / 2) − 1
 * (the PC fetches (amount + 1)·2 words, body and tail; §a.3). The kernel writes it for
 * the first task from regcfg_amount; the tail of task i holds it for task i+1. */
uint32_t rb_regcmd_pc_amount(uint32_t body_words);

/* The op-enable block bitmap of a task's program (the submit's enable_mask) and the
 * interrupt a matmul task ends with (the submit's int_mask, 0x300). */
uint32_t rb_regcmd_op_enable(const struct rb_npu_task *task);
uint32_t rb_regcmd_int_mask(void);

/* ---- decoder (decode.c) ---- */

enum rb_word_kind {
	RB_WORD_REG,       /* a register write */
	RB_WORD_SYNC,      /* target 0x0041: must precede op-enable */
	RB_WORD_OP_ENABLE, /* target 0x0081: a block bitmap */
	RB_WORD_END,       /* a whole word of 0: filler / no next task */
	RB_WORD_UNKNOWN,   /* a target code that is none of the above */
};

/* Status of a decoded word; anything but OK is flagged in the text. */
enum rb_decode_status {
	RB_DECODE_OK = 0,
	RB_DECODE_UNKNOWN_TARGET, /* target code not in the database */
	RB_DECODE_UNKNOWN_OFFSET, /* no register at this offset in the target's block */
	RB_DECODE_MISMATCH,       /* the offset lies in another block than the target's */
	RB_DECODE_UNKNOWN_BITS,   /* value bits that no field of the register covers */
	RB_DECODE_BAD_SPECIAL,    /* sync/op-enable word with an unexpected offset or value */
};

struct rb_decoded {
	uint64_t word;
	enum rb_word_kind kind;
	enum rb_decode_status status;
	uint16_t target, offset;
	uint32_t value;
	int block; /* the target's block, or -1 */
	int reg;   /* the register at offset (in whatever block holds it), or -1 */
};

/* Decodes one word; returns d->status. */
enum rb_decode_status rb_decode_word(uint64_t word, struct rb_decoded *d);

/* One line of text, e.g. "CNA.DATA_SIZE0 DATAIN_HEIGHT=4 DATAIN_WIDTH=1",
 * "PC.BASE_ADDRESS PC_SEL=0 PC_SOURCE_ADDR=0xffff8000", "sync (0x0041)",
 * "op_enable CNA|CORE|DPU", "end (0)", "unknown CNA offset 0x1234 value 0x0"; flagged
 * words carry a note after "  # ". Returns what snprintf returns. */
int rb_decode_format(const struct rb_decoded *d, char *buf, size_t size);

/* Writes "INDEX WORD TEXT" lines for a program to out; returns the number of flagged
 * words (status != OK). */
size_t rb_decode_print(FILE *out, const uint64_t *words, size_t n);

/* Reads a program from the text of a file (`label` names it in messages): with
 * `binary`, raw little-endian 64-bit words; else one word per line as 16 hex digits,
 * '0x' optional (the format of 'rknn-bench regcmd --format hex'), blank lines and '#'
 * comments ignored. 0 with *words (free()) holding *n >= 1 words, or -EINVAL / -ENOMEM
 * with a message naming the label and line. */
int rb_regcmd_parse(const char *data, size_t len, bool binary, const char *label, uint64_t **words,
		    size_t *n);

/* The one-task plan of a matmul (what `rknn-bench regcmd` encodes): K padded to 32
 * and N to the kernel group, ceil(M·K·bytes / 32 KiB) CBUF banks for the features (at
 * most 11), the rest for the weights; `out` "fp32", "fp16", "int32" or NULL (the
 * dtype's default); addr: NPU addresses of A, B and C. 0, or -EINVAL with a message
 * when it does not fit one task or `out` does not go with the dtype. */
int rb_regcmd_one_task(const struct rb_shape *s, const char *out, const uint32_t addr[3],
		       bool mainline, struct rb_npu_task *t);

#endif
