# The watched signal's value without jansson (hm_datastar_scan_int), against
# the decode it stands for, and the hm_watch that uses it (value_only).
hm_test(datastar_scan SOURCES test_datastar_scan.c LIBS hm_load)
