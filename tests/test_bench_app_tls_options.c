/* bench_app's TLS settings that cannot work are refused before anything
 * listens: a certificate without a key or the reverse, a missing file, a
 * file with no PEM certificate or no PEM key, a key that does not match
 * the certificate. The library returns -EINVAL and prints one line naming
 * the file; the executable exits 2 (also with --processes). argv[1]: the
 * bench_app executable. */
#include "bench_app_client.h"

#include <fcntl.h>
#include <unistd.h>

/* Runs hm_bench_app_run in this process with stderr in a file; returns its
 * result and the first line it printed. */
static int run_captured(const hm_bench_app_options *o, char *line, size_t cap)
{
    char path[320];
    snprintf(path, sizeof(path), "%s/stderr.txt", g_tmp);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    ASSERT(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    int rc = hm_bench_app_run(o, -1);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(path, "r");
    ASSERT(f);
    line[0] = '\0';
    if (!fgets(line, (int)cap, f)) line[0] = '\0';
    fclose(f);
    return rc;
}

/* Certificates and keys that do not load: -EINVAL before anything starts,
 * with one line naming the file. */
static void test_tls_options(void)
{
    hm_bench_app_options o;
    hm_bench_app_defaults(&o);
    ASSERT(!o.tls_cert && !o.tls_key);
    o.port = 0;
    o.quiet = true;
    char line[1024], missing[340];
    snprintf(missing, sizeof(missing), "%s/missing.pem", g_tmp);
    const struct {
        const char *cert, *key, *names, *says;
    } bad[] = {
        {g_cert, NULL, NULL, "both"},
        {NULL, g_key, NULL, "both"},
        {missing, g_key, missing, "No such file"},
        {g_key, g_key, g_key, "no PEM certificate"},
        {g_cert, g_cert, g_cert, "no PEM private key"},
        {g_cert, g_other_key, g_other_key, "does not match"},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(bad); i++) {
        o.tls_cert = bad[i].cert;
        o.tls_key = bad[i].key;
        ASSERT_EQ(run_captured(&o, line, sizeof(line)), -EINVAL);
        if (bad[i].names && !strstr(line, bad[i].names)) HM_FAIL_("%zu: %s", i, line);
        if (!strstr(line, bad[i].says)) HM_FAIL_("%zu: %s", i, line);
        ASSERT_EQ(strchr(line, '\n') - line, (long)strlen(line) - 1); /* one line */
    }
    printf("TLS: bad certificate / key / pairing: -EINVAL, one line naming the file: ok\n");
}

int main(int argc, char **argv)
{
    ba_test_begin(argc, argv, false);
    if (argc < 2) HM_FAIL_("usage: %s BENCH_APP", argv[0]);
    make_pki();
    test_tls_options();

    const char *exe = argv[1];
    char *nokey[] = {(char *)exe, "--port", "0", "--quiet", "--tls-cert", g_cert, NULL};
    ASSERT_EQ(wait_child(spawn(nokey), 5000), 2);
    char *mismatch[] = {(char *)exe,  "--port", "0",         "--quiet",   "--processes", "2",
                        "--tls-cert", g_cert,   "--tls-key", g_other_key, NULL};
    ASSERT_EQ(wait_child(spawn(mismatch), 5000), 2);
    printf("TLS executable: a bad pair exits 2, with --processes too: ok\n");
    return 0;
}
