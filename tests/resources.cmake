# Server resources in a soak: the least-squares fit and the leak rule on
# known data; soaks against bench_app with its leak switch on and off; a
# --server-pid that exits mid-run; a real process-exporter scraped by
# --server-metrics (skips without prometheus-process-exporter).
hm_test(trend SOURCES test_trend.c LIBS hm_stats)
