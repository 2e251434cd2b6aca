hm_test(hdr SOURCES test_hdr.c LIBS hm_stats)
