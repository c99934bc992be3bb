/* Nonlinear least squares: Levenberg-Marquardt with a forward-difference Jacobian,
 * for the few parameters of a model fitted to measurements (rknn-bench calibrate).
 *
 * Minimises sum_i r_i(x)^2 over x (n_params values) where `residuals` fills r
 * (n_rows values) for a given x. Each step solves the damped normal equations
 * (JᵀJ + λ·diag(JᵀJ)) δ = −Jᵀr by Gaussian elimination with partial pivoting; a step
 * that lowers the cost is taken and λ shrinks, one that does not is retried with a
 * larger λ (towards gradient descent). Each x_j stays in [lo_j, hi_j].
 *
 * Ownership: the caller owns every array; rb_lsq_fit allocates only scratch space. */
#ifndef RB_CORE_LSQ_H
#define RB_CORE_LSQ_H

#include <stddef.h>

/* Fills r[0..n_rows) for x; 0, or a negative errno that stops the fit. */
typedef int (*rb_lsq_residuals)(const double *x, double *r, void *ctx);

struct rb_lsq_problem {
	size_t n_params, n_rows;
	rb_lsq_residuals residuals;
	void *ctx;
	const double *lo, *hi; /* bounds per parameter (NULL: none) */
	double step;           /* finite-difference step in x (0: 1e-4) */
	int max_iter;          /* 0: 100 */
	double tol;            /* stop when no |δ_j| exceeds it (0: 1e-7) */
};

struct rb_lsq_result {
	int iterations;
	int evaluations;
	double cost; /* sum of squared residuals at the solution */
};

/* Solves the n×n system a·x = b in place (a and b are overwritten, x ends in b).
 * 0, or -ERANGE for a singular (or nearly singular) matrix. */
int rb_lsq_solve_linear(double *a, double *b, size_t n);

/* Fits x (start values in, solution out). 0; -EINVAL for a bad problem; -ENOMEM; or
 * what `residuals` returned. out may be NULL. */
int rb_lsq_fit(const struct rb_lsq_problem *p, double *x, struct rb_lsq_result *out);

/* The column norms of the Jacobian at x (n_params values): how much the residuals
 * move per unit of each parameter; a column near 0 means the rows do not constrain
 * that parameter. Same errors as rb_lsq_fit. */
int rb_lsq_sensitivity(const struct rb_lsq_problem *p, const double *x, double *norms);

/* How far each parameter moves when the rows move by `noise` (a standard deviation)
 * at x: noise·sqrt(diag((JᵀJ)⁻¹)), the linearised standard error (n_params values).
 * Parameters the rows cannot tell apart get a large spread; INFINITY when JᵀJ is
 * singular. Same errors as rb_lsq_fit. */
int rb_lsq_spread(const struct rb_lsq_problem *p, const double *x, double noise, double *spread);

#endif
