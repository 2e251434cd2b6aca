hm_test(http1 SOURCES test_http1.c LIBS hm_proto)
