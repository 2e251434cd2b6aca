/* hm_parse_duration: one unit, parts that add up (1m30s), a bare number of
 * seconds alone; anything else refused. */
#include "base/hm_base.h"
#include "hm_test.h"

int main(void)
{
    const struct {
        const char *text;
        int64_t ns;
    } good[] = {
        {"250ms", 250000000LL},         {"500us", 500000LL},       {"10s", 10000000000LL},
        {"2m", 120000000000LL},         {"1h", 3600000000000LL},   {"5", 5000000000LL},
        {"1.5s", 1500000000LL},         {"1m30s", 90000000000LL},  {"1h30m", 5400000000000LL},
        {"1m30.5s", 90500000000LL},     {"2s500ms", 2500000000LL}, {"0s", 0},
        {"1h2m3s4ms", 3723004000000LL},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(good); i++) {
        int64_t ns = -1;
        if (hm_parse_duration(good[i].text, &ns) < 0 || ns != good[i].ns)
            HM_FAIL_("%s: got %lld, want %lld", good[i].text, (long long)ns, (long long)good[i].ns);
    }
    const char *bad[] = {"", "s", "1m30", "30s5", "-1s", "1x", "ms5", "1 s", " 5", "inf", "1e400s"};
    for (size_t i = 0; i < HM_ARRAY_LEN(bad); i++) {
        int64_t ns = 7;
        if (hm_parse_duration(bad[i], &ns) == 0)
            HM_FAIL_("'%s' parsed as %lld ns; want it refused", bad[i], (long long)ns);
    }
    printf("%zu durations parsed, %zu refused\n", HM_ARRAY_LEN(good), HM_ARRAY_LEN(bad));
    return 0;
}
