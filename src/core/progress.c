/* Progress on stderr for a terminal and for a log (progress.h). */
#include "core/progress.h"

#include <math.h>
#include <string.h>

void rb_progress_init(struct rb_progress *p, FILE *out, bool live, size_t total_items,
		      double total_work, double now_s)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->live = live;
	p->interval_s = RB_PROGRESS_INTERVAL_S;
	p->total_items = total_items;
	p->total_work = total_work;
	p->t0_s = p->last_s = now_s;
}

void rb_progress_item(struct rb_progress *p, const char *label, double work, double now_s)
{
	snprintf(p->item, sizeof(p->item), "%s", label);
	p->detail[0] = '\0';
	p->item_work = work;
	p->item_frac = 0;
	rb_progress_update(p, 0, "", now_s);
}

double rb_progress_eta_s(const struct rb_progress *p, double now_s)
{
	double done = p->done_work + p->item_work * p->item_frac;
	double elapsed = now_s - p->t0_s;

	if (!(done > 0) || !(p->total_work > 0) || elapsed < 0)
		return NAN;
	if (done >= p->total_work)
		return 0;
	return elapsed * (p->total_work - done) / done;
}

/* "12 s", "3 min 20 s", "1 h 05 min": short enough for a live line. */
static void fmt_duration(char *buf, size_t size, double s)
{
	long t = lround(s);

	if (!isfinite(s))
		snprintf(buf, size, "?");
	else if (t < 60)
		snprintf(buf, size, "%ld s", t);
	else if (t < 3600)
		snprintf(buf, size, "%ld min %02ld s", t / 60, t % 60);
	else
		snprintf(buf, size, "%ld h %02ld min", t / 3600, t / 60 % 60);
}

void rb_progress_counts(const struct rb_progress *p, double now_s, char *buf, size_t size)
{
	char elapsed[32], eta[32];

	fmt_duration(elapsed, sizeof(elapsed), now_s - p->t0_s);
	fmt_duration(eta, sizeof(eta), rb_progress_eta_s(p, now_s));
	snprintf(buf, size, "%zu/%zu done, %s elapsed, ETA %s", p->done_items, p->total_items,
		 elapsed, eta);
}

static void erase(struct rb_progress *p)
{
	if (p->drawn)
		fputs("\r\033[K", p->out);
	p->drawn = false;
}

static void draw(struct rb_progress *p, double now_s)
{
	char counts[128];

	rb_progress_counts(p, now_s, counts, sizeof(counts));
	if (p->live) {
		fprintf(p->out, "\r\033[K[%zu/%zu] %s%s%s | %s", p->done_items + 1, p->total_items,
			p->item, p->detail[0] ? ": " : "", p->detail, counts);
		p->drawn = true;
	} else {
		fprintf(p->out, "rknn-bench: %s | %s%s%s\n", counts, p->item,
			p->detail[0] ? ": " : "", p->detail);
	}
	fflush(p->out);
	p->last_s = now_s;
}

void rb_progress_update(struct rb_progress *p, double frac, const char *detail, double now_s)
{
	p->item_frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
	snprintf(p->detail, sizeof(p->detail), "%s", detail);
	if (p->live || now_s - p->last_s >= p->interval_s)
		draw(p, now_s);
}

void rb_progress_item_done(struct rb_progress *p, const char *result, double now_s)
{
	char counts[128];

	p->done_items++;
	p->done_work += p->item_work;
	p->item_work = p->item_frac = 0;
	rb_progress_counts(p, now_s, counts, sizeof(counts));
	erase(p);
	fprintf(p->out, "rknn-bench: [%zu/%zu] %s: %s | %s\n", p->done_items, p->total_items,
		p->item, result, counts);
	fflush(p->out);
	p->last_s = now_s;
}

void rb_progress_print(struct rb_progress *p, const char *line)
{
	bool was_drawn = p->drawn;

	erase(p);
	fprintf(p->out, "%s\n", line);
	if (was_drawn)
		draw(p, p->last_s);
	fflush(p->out);
}

void rb_progress_end(struct rb_progress *p)
{
	erase(p);
	fflush(p->out);
}
