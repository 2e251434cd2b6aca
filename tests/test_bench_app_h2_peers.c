/* bench_app --http2 against HTTP/2 clients that are not ours: h2load
 * (nghttp2-client) multiplexing 10 streams on each of 4 connections, and
 * curl (over h2c with prior knowledge and h2 over TLS, a page, then the
 * SSE stream it opens, --brotli compressed, decoded by curl). Each tool
 * that is not installed is named and skipped; with none of them the test
 * skips (77). */
#include "bench_app_client.h"
#include "run_util.h"

#include <stdio.h>

/* Runs a shell command; its output (stdout and stderr) into out. */
static int run(const char *cmd, char *out, size_t cap)
{
    char full[4096];
    snprintf(full, sizeof(full), "%s 2>&1", cmd);
    FILE *f = popen(full, "r");
    ASSERT(f);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static char out[1 << 16];

static void h2load(const char *exe, int port, bool tls)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s -n 4000 -c 4 -m 10 %s://127.0.0.1:%d/_health", exe,
             tls ? "https" : "http", port);
    ASSERT_EQ(run(cmd, out, sizeof(out)), 0);
    if (!strstr(out, "4000 succeeded, 0 failed") || !strstr(out, "4000 2xx") ||
        !strstr(out, tls ? "Application protocol: h2\n" : "Application protocol: h2c"))
        HM_FAIL_("h2load over %s:\n%s", tls ? "h2" : "h2c", out);
    printf("h2load: 4000 requests, 10 streams on each of 4 %s connections: all 200\n",
           tls ? "h2" : "h2c");
}

static void curl_tab(const char *exe, int port, bool tls)
{
    char base[64], opts[512], cmd[2048];
    snprintf(base, sizeof(base), "%s://127.0.0.1:%d", tls ? "https" : "http", port);
    snprintf(opts, sizeof(opts), "%s -s %s", exe,
             tls ? "--http2 --cacert " : "--http2-prior-knowledge");
    if (tls) strncat(opts, g_ca, sizeof(opts) - strlen(opts) - 1);
    char jar[300];
    snprintf(jar, sizeof(jar), "%s/jar-%d", g_tmp, tls);
    snprintf(cmd, sizeof(cmd), "%s -c %s -w '\\nversion=%%{http_version}\\n' %s/bench/counter",
             opts, jar, base);
    ASSERT_EQ(run(cmd, out, sizeof(out)), 0);
    ASSERT(strstr(out, "version=2\n"));
    const char *m = strstr(out, "{\"via_ctx\":\"\\/bench\\/counter_\\/");
    ASSERT(m);
    char hex[17];
    copy_str(hex, sizeof(hex), m + strlen("{\"via_ctx\":\"\\/bench\\/counter_\\/"), 16);
    ASSERT(is_hex(hex, 16));
    /* The SSE stream, compressed (--brotli), decoded by curl: it must see
     * the sync events, and curl ends it after 1 s. */
    snprintf(cmd, sizeof(cmd),
             "%s -N -m 1 --compressed -D - -b %s "
             "'%s/_sse?datastar=%%7B%%22via_ctx%%22%%3A%%22%%2Fbench%%2Fcounter_%%2F%s%%22%%7D'",
             opts, jar, base, hex);
    run(cmd, out, sizeof(out)); /* exit 28: the time limit */
    if (!strstr(out, "content-encoding: br") || !strstr(out, ELEMENTS_EVENT) ||
        !strstr(out, "event: datastar-patch-signals\n"))
        HM_FAIL_("curl's SSE stream over %s:\n%s", tls ? "h2" : "h2c", out);
    printf("curl: page and brotli-compressed SSE stream over %s: ok\n", tls ? "h2" : "h2c");
}

int main(int argc, char **argv)
{
    ba_test_begin(argc, argv, false);
    char h2load_exe[256], curl_exe[256];
    bool have_h2load = find_tool("h2load", h2load_exe, sizeof(h2load_exe));
    bool have_curl = find_tool("curl", curl_exe, sizeof(curl_exe));
    if (have_curl) { /* curl without HTTP/2 is no peer here */
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "%s --version", curl_exe);
        run(cmd, out, sizeof(out));
        have_curl = strstr(out, "HTTP2") != NULL;
    }
    if (!have_h2load && !have_curl) HM_SKIP("neither h2load (nghttp2-client) nor curl with HTTP2");
    if (!have_h2load) printf("skipped: h2load: not installed (nghttp2-client)\n");
    if (!have_curl) printf("skipped: curl: not installed or without HTTP2\n");
    make_pki();
    hm_bench_app_options o = ba_test_options(HM_BACKEND_AUTO);
    o.http2 = true;
    o.brotli = true;
    for (int tls = 0; tls < 2; tls++) {
        if (tls) {
            o.tls_cert = g_cert;
            o.tls_key = g_key;
        }
        int port;
        pid_t pid = start_server(&o, &port);
        if (have_h2load) h2load(h2load_exe, port, tls);
        if (have_curl) curl_tab(curl_exe, port, tls);
        stop_server(pid);
    }
    return 0;
}
