# src/base: the pieces every layer shares.
hm_test(buf SOURCES test_buf.c LIBS hm_base)
hm_test(fail SOURCES test_fail.c LIBS hm_base)
