/* Latencies in the unit that reads best, as wrk writes them (issue 15: the
 * summary was fixed to milliseconds with three decimals), and byte counts. */
#include "hm_test.h"
#include "stats/results.h"

static void us(double v, int width, const char *want)
{
    char buf[64];
    hm_format_us(buf, sizeof(buf), v, width);
    ASSERT_STREQ(buf, want);
}

static void bytes(double v, const char *want)
{
    char buf[64];
    hm_format_bytes(buf, sizeof(buf), v);
    ASSERT_STREQ(buf, want);
}

int main(void)
{
    us(0, 0, "0µs");
    us(812, 0, "812µs");
    us(999, 0, "999µs");
    us(1000, 0, "1.00ms");
    us(4339, 0, "4.34ms");
    us(999994, 0, "999.99ms");
    us(1.2e6, 0, "1.20s");
    us(90e6, 0, "90.00s");
    /* width counts columns: µ is two bytes and one column */
    us(812, 8, "   812µs");
    us(4339, 8, "  4.34ms");
    us(1.2e6, 8, "   1.20s");
    bytes(812, "812 B");
    bytes(4198, "4.10 KiB");
    bytes(12.34 * 1048576, "12.34 MiB");
    bytes(1.5 * 1073741824.0, "1.50 GiB");
    printf("latencies as µs, ms and s; bytes as B, KiB, MiB, GiB\n");
    return 0;
}
