/* trend.c — least-squares line and its slope's confidence (trend.h). */
#include "stats/trend.h"

#include <math.h>
#include <string.h>

double hm_t975(int df)
{
    static const double table[31] = {
        0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
        2.074, 2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    };
    if (df < 1) return INFINITY;
    if (df <= 30) return table[df];
    /* Cornish-Fisher expansion around the normal's 1.959964. */
    double z = 1.959964, d = (double)df;
    return z + (z * z * z + z) / (4 * d) + (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

bool hm_trend_fit(const double *x, const double *y, int n, hm_trend *out)
{
    memset(out, 0, sizeof(*out));
    int m = 0;
    double sx = 0, sy = 0, x0 = INFINITY, x1 = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (isnan(y[i]) || isnan(x[i])) continue;
        m++;
        sx += x[i];
        sy += y[i];
        if (x[i] < x0) x0 = x[i];
        if (x[i] > x1) x1 = x[i];
    }
    if (m < 3) return false;
    double mx = sx / m, my = sy / m, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(y[i]) || isnan(x[i])) continue;
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (sxx <= 0) return false;
    double slope = sxy / sxx, intercept = my - slope * mx, sse = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(y[i]) || isnan(x[i])) continue;
        double r = y[i] - (intercept + slope * x[i]);
        sse += r * r;
    }
    out->n = m;
    out->slope = slope;
    out->intercept = intercept;
    out->se = sqrt(sse / (m - 2) / sxx);
    out->half_ci = hm_t975(m - 2) * out->se;
    out->mean = my;
    out->x0 = x0;
    out->x1 = x1;
    return true;
}
