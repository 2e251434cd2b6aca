# SSE parser and Datastar decoding (src/proto/sse.c, src/proto/datastar.c).
hm_test(sse SOURCES test_sse.c LIBS hm_proto)
hm_test(datastar SOURCES test_datastar.c LIBS hm_proto)
