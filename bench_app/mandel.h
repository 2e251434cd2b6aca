/* mandel.h — bench_app's cpu workload: the Mandelbrot sum /bench/cpu's
 * action computes on every call (routes.c). hammer does not compute it: its
 * cpu scenario checks for the constant 65451 (src/scenarios/scenario.c).
 *
 * As php-via's tests/Load/bench_app.php: px, py in [0, size), cx =
 * px/size*3.5-2.5, cy = py/size*2-1, iterate z = z^2 + c from 0 while
 * |z|^2 <= 4 and iter < max_iter, and add up the iteration counts. For
 * size 50 and 100 iterations the sum is 65451. */
#ifndef BA_MANDEL_H
#define BA_MANDEL_H

#include <stdint.h>

static inline int64_t ba_mandel_sum(int size, int max_iter)
{
    int64_t sum = 0;
    for (int py = 0; py < size; py++) {
        for (int px = 0; px < size; px++) {
            double cx = (double)px / size * 3.5 - 2.5, cy = (double)py / size * 2.0 - 1.0;
            double zx = 0, zy = 0;
            int iter = 0;
            while (zx * zx + zy * zy <= 4.0 && iter < max_iter) {
                double t = zx * zx - zy * zy + cx;
                zy = 2.0 * zx * zy + cy;
                zx = t;
                iter++;
            }
            sum += iter;
        }
    }
    return sum;
}

#endif
