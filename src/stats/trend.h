/* trend.h — a straight line fitted to samples by least squares, with the
 * slope's 95% confidence interval (Student's t on n - 2 degrees of
 * freedom): whether a soak's server memory, file descriptors or contexts
 * grow, and how fast. Pure arithmetic on caller-owned arrays. */
#ifndef HM_STATS_TREND_H
#define HM_STATS_TREND_H

#include <stdbool.h>

typedef struct hm_trend {
    int n;            /* samples fitted */
    double slope;     /* y units per x unit */
    double se;        /* the slope's standard error */
    double half_ci;   /* t(0.975, n - 2) * se: the slope is slope ± half_ci */
    double mean;      /* of y */
    double x0, x1;    /* the span of x fitted */
    double intercept; /* y at x = 0 */
} hm_trend;

/* Fits y = intercept + slope * x to the n points whose y is not NAN.
 * False (out zeroed) when fewer than 3 such points or x does not vary:
 * no slope, or no interval for it. */
bool hm_trend_fit(const double *x, const double *y, int n, hm_trend *out);

/* The two-sided 95% critical value of Student's t with df degrees of
 * freedom (df >= 1): a table to 30, then a series in 1/df (error < 1e-3). */
double hm_t975(int df);

#endif
