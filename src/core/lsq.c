/* Levenberg-Marquardt (see lsq.h). Small dense problems: a handful of parameters and
 * tens of rows, so plain normal equations are accurate enough and simplest. */
#include "core/lsq.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define LAMBDA_START 1e-3
#define LAMBDA_MAX   1e12
#define PIVOT_MIN    1e-300

int rb_lsq_solve_linear(double *a, double *b, size_t n)
{
	for (size_t col = 0; col < n; col++) {
		size_t piv = col;

		for (size_t r = col + 1; r < n; r++)
			if (fabs(a[r * n + col]) > fabs(a[piv * n + col]))
				piv = r;
		if (!(fabs(a[piv * n + col]) > PIVOT_MIN))
			return -ERANGE;
		if (piv != col) {
			for (size_t c = 0; c < n; c++) {
				double t = a[col * n + c];

				a[col * n + c] = a[piv * n + c];
				a[piv * n + c] = t;
			}
			double t = b[col];
			b[col] = b[piv];
			b[piv] = t;
		}
		for (size_t r = col + 1; r < n; r++) {
			double f = a[r * n + col] / a[col * n + col];

			for (size_t c = col; c < n; c++)
				a[r * n + c] -= f * a[col * n + c];
			b[r] -= f * b[col];
		}
	}
	for (size_t i = n; i-- > 0;) {
		double s = b[i];

		for (size_t c = i + 1; c < n; c++)
			s -= a[i * n + c] * b[c];
		b[i] = s / a[i * n + i];
	}
	return 0;
}

/* Scratch space of one fit. */
struct work {
	const struct rb_lsq_problem *p;
	double *r, *r_try, *r_step, *jac, *jtj, *grad, *a, *delta, *x_try;
	int evaluations;
};

static double clamp(const struct rb_lsq_problem *p, size_t j, double v)
{
	if (p->lo && v < p->lo[j])
		return p->lo[j];
	if (p->hi && v > p->hi[j])
		return p->hi[j];
	return v;
}

static double sum_squares(const double *r, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += r[i] * r[i];
	return s;
}

static int eval(struct work *w, const double *x, double *r)
{
	int ret = w->p->residuals(x, r, w->p->ctx);

	w->evaluations++;
	if (ret)
		return ret;
	for (size_t i = 0; i < w->p->n_rows; i++)
		if (!isfinite(r[i]))
			return rb_set_error(-EINVAL, "the model gave no finite value for row %zu",
					    i);
	return 0;
}

/* jac[i * n_params + j] = d r_i / d x_j by forward differences (backward at an upper
 * bound), given r = r(x). */
static int jacobian(struct work *w, const double *x)
{
	const struct rb_lsq_problem *p = w->p;
	double h = p->step > 0 ? p->step : 1e-4;

	memcpy(w->x_try, x, p->n_params * sizeof(*x));
	for (size_t j = 0; j < p->n_params; j++) {
		double step = clamp(p, j, x[j] + h) > x[j] ? h : -h;
		int ret;

		w->x_try[j] = x[j] + step;
		ret = eval(w, w->x_try, w->r_step);
		w->x_try[j] = x[j];
		if (ret)
			return ret;
		for (size_t i = 0; i < p->n_rows; i++)
			w->jac[i * p->n_params + j] = (w->r_step[i] - w->r[i]) / step;
	}
	return 0;
}

/* JᵀJ and Jᵀr. */
static void normal_equations(struct work *w)
{
	size_t n = w->p->n_params, m = w->p->n_rows;

	for (size_t j = 0; j < n; j++) {
		w->grad[j] = 0;
		for (size_t i = 0; i < m; i++)
			w->grad[j] += w->jac[i * n + j] * w->r[i];
		for (size_t k = 0; k < n; k++) {
			double s = 0;

			for (size_t i = 0; i < m; i++)
				s += w->jac[i * n + j] * w->jac[i * n + k];
			w->jtj[j * n + k] = s;
		}
	}
}

/* The damped step for lambda into x_try; false if the system is singular. */
static bool damped_step(struct work *w, const double *x, double lambda)
{
	size_t n = w->p->n_params;

	memcpy(w->a, w->jtj, n * n * sizeof(double));
	for (size_t j = 0; j < n; j++) {
		/* a parameter no row moves still gets a damping term, so the system stays
		 * solvable and its step stays 0 */
		w->a[j * n + j] += lambda * (w->jtj[j * n + j] > 0 ? w->jtj[j * n + j] : 1);
		w->delta[j] = -w->grad[j];
	}
	if (rb_lsq_solve_linear(w->a, w->delta, n))
		return false;
	for (size_t j = 0; j < n; j++)
		w->x_try[j] = clamp(w->p, j, x[j] + w->delta[j]);
	return true;
}

static double largest_change(const double *a, const double *b, size_t n)
{
	double d = 0;

	for (size_t j = 0; j < n; j++)
		d = fmax(d, fabs(a[j] - b[j]));
	return d;
}

/* One iteration: 1 if x moved, 0 if converged (no step lowers the cost), <0 error. */
static int iterate(struct work *w, double *x, double *cost, double *lambda)
{
	const struct rb_lsq_problem *p = w->p;
	double tol = p->tol > 0 ? p->tol : 1e-7;
	int ret = jacobian(w, x);

	if (ret)
		return ret;
	normal_equations(w);
	/* raise lambda tenfold until a step lowers the cost or it reaches LAMBDA_MAX */
	for (int tries = 0; *lambda < LAMBDA_MAX; tries++) {
		double c;

		if (tries)
			*lambda *= 10;
		if (!damped_step(w, x, *lambda))
			continue;
		if (largest_change(w->x_try, x, p->n_params) < tol)
			return 0;
		ret = eval(w, w->x_try, w->r_try);
		if (ret)
			return ret;
		c = sum_squares(w->r_try, p->n_rows);
		if (c < *cost) {
			memcpy(x, w->x_try, p->n_params * sizeof(*x));
			memcpy(w->r, w->r_try, p->n_rows * sizeof(*w->r));
			*cost = c;
			*lambda = fmax(*lambda / 10, 1e-12);
			return 1;
		}
	}
	return 0;
}

static void work_free(struct work *w)
{
	free(w->r);
	w->r = NULL;
}

/* One block for everything: rows r, r_try, r_step; the Jacobian; jtj, a; grad, delta,
 * x_try. */
static int work_init(struct work *w, const struct rb_lsq_problem *p)
{
	size_t n = p->n_params, m = p->n_rows;

	memset(w, 0, sizeof(*w));
	w->p = p;
	if (!n || !m || !p->residuals) {
		rb_set_error(-EINVAL, "least squares: no parameters, rows or model");
		return -EINVAL;
	}
	w->r = calloc(3 * m + m * n + 2 * n * n + 3 * n, sizeof(double));
	if (!w->r) {
		rb_set_error(-ENOMEM, "least squares: out of memory");
		return -ENOMEM;
	}
	w->r_try = w->r + m;
	w->r_step = w->r_try + m;
	w->jac = w->r_step + m;
	w->jtj = w->jac + m * n;
	w->a = w->jtj + n * n;
	w->grad = w->a + n * n;
	w->delta = w->grad + n;
	w->x_try = w->delta + n;
	return 0;
}

int rb_lsq_fit(const struct rb_lsq_problem *p, double *x, struct rb_lsq_result *out)
{
	int max_iter = p->max_iter > 0 ? p->max_iter : 100;
	double cost, lambda = LAMBDA_START;
	struct work w;
	int ret = work_init(&w, p), it = 0;

	if (ret)
		return ret;
	for (size_t j = 0; j < p->n_params; j++)
		x[j] = clamp(p, j, x[j]);
	ret = eval(&w, x, w.r);
	cost = sum_squares(w.r, p->n_rows);
	while (ret == 0 && it < max_iter && cost > 0) {
		ret = iterate(&w, x, &cost, &lambda);
		if (ret <= 0)
			break;
		it++;
		ret = 0;
	}
	if (out) {
		out->iterations = it;
		out->evaluations = w.evaluations;
		out->cost = cost;
	}
	work_free(&w);
	return ret < 0 ? ret : 0;
}

/* w set up for p, with the residuals and the Jacobian at x; 0, or an error with w
 * freed. */
static int work_at(struct work *w, const struct rb_lsq_problem *p, const double *x)
{
	int ret = work_init(w, p);

	if (ret)
		return ret;
	ret = eval(w, x, w->r);
	if (ret == 0)
		ret = jacobian(w, x);
	if (ret)
		work_free(w);
	return ret;
}

int rb_lsq_sensitivity(const struct rb_lsq_problem *p, const double *x, double *norms)
{
	struct work w;
	int ret = work_at(&w, p, x);

	if (ret)
		return ret;
	for (size_t j = 0; j < p->n_params; j++) {
		double s = 0;

		for (size_t i = 0; i < p->n_rows; i++)
			s += w.jac[i * p->n_params + j] * w.jac[i * p->n_params + j];
		norms[j] = sqrt(s);
	}
	work_free(&w);
	return ret;
}

/* Column j of the inverse of jtj (n×n) into col, using a as scratch. */
static int inverse_column(const double *jtj, double *a, double *col, size_t n, size_t j)
{
	memcpy(a, jtj, n * n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		col[i] = i == j ? 1 : 0;
	return rb_lsq_solve_linear(a, col, n);
}

int rb_lsq_spread(const struct rb_lsq_problem *p, const double *x, double noise, double *spread)
{
	struct work w;
	int ret = work_at(&w, p, x);

	if (ret)
		return ret;
	normal_equations(&w);
	for (size_t j = 0; j < p->n_params; j++) {
		/* delta and x_try are free scratch here: n values each, contiguous */
		if (inverse_column(w.jtj, w.a, w.delta, p->n_params, j) || !(w.delta[j] >= 0))
			spread[j] = INFINITY;
		else
			spread[j] = noise * sqrt(w.delta[j]);
	}
	work_free(&w);
	return ret;
}
