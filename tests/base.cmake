# src/base: the pieces every layer shares.
hm_test(buf SOURCES test_buf.c LIBS hm_base)
