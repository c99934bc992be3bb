/* Progress of a long command (run, tune) on stderr, for a terminal and for a log.
 *
 * The command is a list of items (shapes), each with an estimated amount of work (its
 * share of the whole command, e.g. 2·M·N·K); the ETA is the elapsed time scaled by the
 * work left over the work done, over the whole command (every item, every phase).
 *   live (a terminal): one line redrawn in place ("\r", erase line); each item's
 *     result is printed as a line of its own above it, so it is never erased.
 *   log (not a terminal): each item's result line carries done/total, elapsed and ETA;
 *     between them, a progress line at most every `interval_s` (10 s).
 * Lines look like:
 *   rknn-bench: [2/3] ffn_up-0: 1196.9 us (modeled) | 2/3 done, 12 s elapsed, ETA 6 s
 *   rknn-bench: 1/3 done, 10 s elapsed, ETA 20 s | ffn_out-0: run 4/9
 *
 * Times are passed in (seconds on any monotonic clock), so the module is tested
 * without waiting. It writes only to the FILE the caller gives it (the CLI's stderr). */
#ifndef RB_CORE_PROGRESS_H
#define RB_CORE_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define RB_PROGRESS_INTERVAL_S 10.0

struct rb_progress {
	FILE *out;
	bool live;         /* a terminal: redraw one line */
	double interval_s; /* log: seconds between progress lines */
	size_t total_items, done_items;
	double total_work, done_work; /* the work of every item; of the finished ones */
	double item_work, item_frac;  /* the item under way: its work, the part done */
	char item[96], detail[160];   /* its label; what it is doing */
	double t0_s, last_s;          /* the start; the last line printed (log) */
	bool drawn;                   /* a live line is on the terminal */
};

void rb_progress_init(struct rb_progress *p, FILE *out, bool live, size_t total_items,
		      double total_work, double now_s);
/* The next item starts: its label and its work. */
void rb_progress_item(struct rb_progress *p, const char *label, double work, double now_s);
/* The item under way has done `frac` (0..1) of its work; `detail` says what it does. */
void rb_progress_update(struct rb_progress *p, double frac, const char *detail, double now_s);
/* The item is done: prints `result` (one line, kept on a terminal) with the counts. */
void rb_progress_item_done(struct rb_progress *p, const char *result, double now_s);
/* Prints a line of its own (a warning, a note) without breaking the live line. */
void rb_progress_print(struct rb_progress *p, const char *line);
/* Erases the live line (before the command prints its report). */
void rb_progress_end(struct rb_progress *p);

/* Seconds left at now_s, from the work done so far; NAN before any work is done. */
double rb_progress_eta_s(const struct rb_progress *p, double now_s);
/* "2/3 done, 12 s elapsed, ETA 6 s" */
void rb_progress_counts(const struct rb_progress *p, double now_s, char *buf, size_t size);

#endif
