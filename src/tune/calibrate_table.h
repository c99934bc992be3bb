/* A fit (tune/calibrate.h) on the stream the command hands it: every result's measured
 * and fitted time with the error, the fit error, then each parameter's base and fitted
 * value with how far 1 % of time error moves it. */
#ifndef RB_TUNE_CALIBRATE_TABLE_H
#define RB_TUNE_CALIBRATE_TABLE_H

#include <stdio.h>

#include "tune/calibrate.h"

void rb_calib_print(FILE *out, const struct rb_calib *c);

#endif
