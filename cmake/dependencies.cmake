# Every third-party library hammer uses, found the Debian way. scripts/deps.sh
# installs the packages named in the messages below.
find_package(PkgConfig REQUIRED)
pkg_check_modules(URING REQUIRED IMPORTED_TARGET liburing)
pkg_check_modules(OPENSSL REQUIRED IMPORTED_TARGET openssl)
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)
pkg_check_modules(SQLITE REQUIRED IMPORTED_TARGET sqlite3)
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
# hammer matrix reads its profiles file with inih (libinih-dev).
pkg_check_modules(INIH REQUIRED IMPORTED_TARGET inih)
# Brotli (libbrotli-dev): bench_app --brotli encodes, its tests decode.
pkg_check_modules(BROTLIENC REQUIRED IMPORTED_TARGET libbrotlienc)
pkg_check_modules(BROTLIDEC REQUIRED IMPORTED_TARGET libbrotlidec)
# Flow files (hammer flow FILE.yaml) are YAML, read and written with libyaml
# (libyaml-dev).
pkg_check_modules(YAML REQUIRED IMPORTED_TARGET yaml-0.1)
# The live view (src/cli/live_view.c): the wide-character ncurses.
pkg_check_modules(NCURSES REQUIRED IMPORTED_TARGET ncursesw)
# HTTP/2 (libnghttp2-dev): hammer's --http2 client and bench_app's h2 and h2c.
pkg_check_modules(NGHTTP2 REQUIRED IMPORTED_TARGET libnghttp2)
find_package(Threads REQUIRED)

# Debian's libmimalloc-dev ships a CMake config but no pkg-config file.
find_package(mimalloc CONFIG)
if(NOT mimalloc_FOUND)
  message(FATAL_ERROR "mimalloc not found: install the Debian package libmimalloc-dev")
endif()

# llhttp: Debian's node-llhttp ships the generated C sources; we build them.
find_path(LLHTTP_INCLUDE_DIR llhttp.h PATHS /usr/share/include/llhttp /usr/include/llhttp)
find_file(LLHTTP_C llhttp.c PATHS /usr/share/llhttp NO_DEFAULT_PATH)
find_file(LLHTTP_API_C api.c PATHS /usr/share/llhttp NO_DEFAULT_PATH)
find_file(LLHTTP_HTTP_C http.c PATHS /usr/share/llhttp NO_DEFAULT_PATH)
if(NOT LLHTTP_INCLUDE_DIR OR NOT LLHTTP_C OR NOT LLHTTP_API_C OR NOT LLHTTP_HTTP_C)
  message(FATAL_ERROR "llhttp C sources not found: install the Debian package node-llhttp "
    "(dpkg -L node-llhttp lists /usr/share/llhttp/*.c)")
endif()
add_library(llhttp STATIC ${LLHTTP_C} ${LLHTTP_API_C} ${LLHTTP_HTTP_C})
target_include_directories(llhttp SYSTEM PUBLIC ${LLHTTP_INCLUDE_DIR})
set_target_properties(llhttp PROPERTIES POSITION_INDEPENDENT_CODE ON C_STANDARD 99)
target_compile_options(llhttp PRIVATE -w)
