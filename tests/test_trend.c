/* The least-squares fit and the leak rule on known data (stats/trend.h,
 * stats/resources.h). */
#include "hm_test.h"
#include "stats/resources.h"
#include "stats/trend.h"

#include <math.h>

#define CLOSE(a, b, tol)                                                                           \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            HM_FAIL_("%s = %.9g, expected %.9g (± %g)", #a, a_, b_, (double)(tol));                \
    } while (0)

int main(void)
{
    /* Anscombe's first set: slope 0.5001, intercept 3.0001, slope SE 0.1179. */
    const double ax[] = {10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5};
    const double ay[] = {8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68};
    hm_trend t;
    ASSERT(hm_trend_fit(ax, ay, 11, &t));
    ASSERT_EQ(t.n, 11);
    CLOSE(t.slope, 0.50009, 1e-4);
    CLOSE(t.intercept, 3.00009, 1e-4);
    CLOSE(t.se, 0.117906, 1e-5);
    CLOSE(t.half_ci, 2.262 * 0.117906, 1e-4); /* t(0.975, 9) */
    CLOSE(t.mean, 7.50091, 1e-4);

    /* NAN is no sample; fewer than 3 samples or no spread in x: no fit. */
    const double nx[] = {0, 1, 2, 3}, ny[] = {NAN, 1, NAN, 3};
    ASSERT(!hm_trend_fit(nx, ny, 4, &t));
    const double cx[] = {2, 2, 2}, cy[] = {1, 2, 3};
    ASSERT(!hm_trend_fit(cx, cy, 3, &t));
    const double ex[] = {0, 1, 2, 3, 4}, ey[] = {1, 3, NAN, 7, 9};
    ASSERT(hm_trend_fit(ex, ey, 5, &t));
    CLOSE(t.slope, 2, 1e-12);
    CLOSE(t.se, 0, 1e-12);

    /* The t table and its series beyond 30. */
    CLOSE(hm_t975(1), 12.706, 1e-3);
    CLOSE(hm_t975(30), 2.042, 1e-3);
    CLOSE(hm_t975(60), 2.000, 1e-3);
    CLOSE(hm_t975(120), 1.980, 1e-3);

    /* The warm-up: 20% of the run, at most 30 s. */
    CLOSE(hm_leak_warmup_s(20), 4, 1e-12);
    CLOSE(hm_leak_warmup_s(600), 30, 1e-12);

    /* 600 samples a second apart, RSS 100 MiB growing 1 MiB/s, with a
     * deterministic wobble of ±256 KiB: a WARNING, slope 3600 MiB/h. */
    enum { N = 600 };
    static double x[N], y[N];
    const double mib = 1024.0 * 1024.0;
    for (int i = 0; i < N; i++) {
        x[i] = i + 1;
        y[i] = 100 * mib + mib * x[i] + ((i * 7919) % 17 - 8) * 32 * 1024.0;
    }
    hm_leak l;
    hm_leak_judge(HM_LEAK_RSS, x, y, N, N, &l);
    ASSERT(l.known);
    ASSERT_EQ(l.fit.n, N - 29); /* t = 1..29 s left out */
    CLOSE(l.slope_h, 3600 * mib, 0.01 * 3600 * mib);
    ASSERT(l.half_h > 0 && l.half_h < 0.01 * l.slope_h);
    ASSERT(l.warning);

    /* Flat with the same wobble: no WARNING, the interval holds zero. */
    for (int i = 0; i < N; i++)
        y[i] = 100 * mib + ((i * 7919) % 17 - 8) * 32 * 1024.0;
    hm_leak_judge(HM_LEAK_RSS, x, y, N, N, &l);
    ASSERT(l.known);
    ASSERT(!l.warning);
    ASSERT(l.slope_h - l.half_h <= 0 && l.slope_h + l.half_h >= 0);

    /* Clearly growing, but not materially: 512 KiB/h, under the 1 MiB/h floor. */
    for (int i = 0; i < N; i++)
        y[i] = 100 * mib + 512 * 1024.0 * x[i] / 3600;
    hm_leak_judge(HM_LEAK_RSS, x, y, N, N, &l);
    ASSERT(l.slope_h - l.half_h > 0);
    ASSERT(!l.warning);

    /* Above the floor but under 1% of the mean over the span: 2 MiB/h on
     * 10 GiB for 10 minutes. */
    for (int i = 0; i < N; i++)
        y[i] = 10240 * mib + 2 * mib * x[i] / 3600;
    hm_leak_judge(HM_LEAK_RSS, x, y, N, N, &l);
    ASSERT(l.slope_h > mib && l.slope_h - l.half_h > 0);
    ASSERT(!l.warning);

    /* fds: one more every 10 s is a WARNING (floor 1/h, 1% of ~40). */
    for (int i = 0; i < N; i++)
        y[i] = 10 + (double)(i / 10);
    hm_leak_judge(HM_LEAK_FDS, x, y, N, N, &l);
    CLOSE(l.slope_h, 360, 5);
    ASSERT(l.warning);

    /* A count that steps up once and stays (a connection or a context the
     * server has not let go of yet) is a level, not a leak: a 45 s soak,
     * 14 fds, 15 from t = 35 s (a line fitted to it grows 1.2 fds over the
     * span, its interval above zero), then a step of two (3.0 at most). */
    enum { S = 45 };
    double sx[S], sy[S];
    for (int i = 0; i < S; i++) {
        sx[i] = i + 1;
        sy[i] = sx[i] >= 35 ? 15 : 14;
    }
    hm_leak_judge(HM_LEAK_FDS, sx, sy, S, S, &l);
    ASSERT(l.known && l.slope_h - l.half_h > 0 && l.growth > 1);
    ASSERT(!l.warning);
    for (int i = 0; i < S; i++)
        sy[i] = sx[i] >= 27 ? 3 : 1;
    hm_leak_judge(HM_LEAK_CONTEXTS, sx, sy, S, S, &l);
    ASSERT(l.known && l.slope_h - l.half_h > 0 && l.growth > 2.5);
    ASSERT(!l.warning);
    /* Four more fds over the same soak, one every 9 s, is a WARNING. */
    for (int i = 0; i < S; i++)
        sy[i] = 14 + (double)(i / 9);
    hm_leak_judge(HM_LEAK_FDS, sx, sy, S, S, &l);
    ASSERT(l.growth > HM_LEAK_MIN_COUNT_GROWTH);
    ASSERT(l.warning);

    /* Too short to judge after the warm-up. */
    hm_leak_judge(HM_LEAK_RSS, x, y, 3, 10, &l); /* t = 1 s is in the 2 s warm-up */
    ASSERT(!l.known);
    puts("ok");
    return 0;
}
