/* Shared by the benchmark programs: medians and ranges over rounds. */
#ifndef HM_BENCH_UTIL_H
#define HM_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v and prints "label: median M (range LO..HI, N rounds) unit". */
static inline double print_median(const char *label, double *v, int n, const char *unit)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    printf("%-34s median %10.2f  range %10.2f .. %10.2f  (%d rounds) %s\n", label, med, v[0],
           v[n - 1], n, unit);
    return med;
}

#endif
