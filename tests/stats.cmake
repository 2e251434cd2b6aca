hm_test(hdr SOURCES test_hdr.c LIBS hm_stats)
hm_test(hdr_log SOURCES test_hdr_log.c LIBS hm_stats)
hm_test(format SOURCES test_format.c LIBS hm_stats)
hm_test(progress_series SOURCES test_progress_series.c LIBS hm_stats)
