hm_test(http1 SOURCES test_http1.c LIBS hm_proto)
hm_test(content_coding SOURCES test_content_coding.c LIBS hm_proto PkgConfig::BROTLIENC PkgConfig::ZLIB)
