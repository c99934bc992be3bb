/* What `rknn-bench info` shows, on the stream the command hands it: the NPU as its
 * driver reports it, the host settings, the board the device tree names with the
 * hardware profile run and tune use without --soc (hw/board.h, rb_soc_choose). */
#ifndef RB_DEV_INFO_TEXT_H
#define RB_DEV_INFO_TEXT_H

#include <stdio.h>

#include <cJSON.h>

#include "dev/info.h"

void rb_npu_info_print(FILE *out, const struct rb_npu_info *n);
void rb_host_info_print(FILE *out, const struct rb_host_info *h);
void rb_board_print(FILE *out);
cJSON *rb_board_json(void);
/* The note of an emulated NPU: whose kernel, and that the values are the emulator's. */
const char *rb_npu_info_note(const struct rb_npu_info *n);

#endif
