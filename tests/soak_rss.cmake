# Memory flatness is a property of the normal build: under ASan the
# allocator's quarantine keeps freed memory resident by design.
if(HAMMER_SANITIZE)
  set(HM_SOAK_MODE sanitized)
else()
  set(HM_SOAK_MODE normal)
endif()
hm_test(soak_rss SOURCES test_soak_rss.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> ${HM_SOAK_MODE} TIMEOUT 300)
