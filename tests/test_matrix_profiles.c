/* hammer matrix profiles files as php-via users write them: commands of
 * 330 and 1,000 characters on one line and one continued over indented
 * lines all run (Debian's inih cuts lines at 200 bytes on its own); a line
 * too long for any reason, or an indented key, is an error naming its line;
 * the reports and the JSON show each command as it ran ({bindir}, {dir},
 * {port}, $VARs expanded; env takes {port} too); and examples/php-via.ini
 * passes php exactly the -d flags of php-via's bench_opcache.php, run here
 * against bench_app through a php stand-in.
 * argv: HAMMER BENCH_APP PHP_VIA_INI */
#include "run_util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A command of exactly len characters that starts bench_app on {port}:
 * env(1) with a long variable in front. */
static char *long_command(size_t len)
{
    const char *head = "/usr/bin/env PAD=", *tail = " {bindir}/bench_app --port {port}";
    size_t pad = len - strlen(head) - strlen(tail);
    char *s = malloc(len + 1);
    ASSERT(s);
    strcpy(s, head);
    memset(s + strlen(head), 'x', pad);
    strcpy(s + strlen(head) + pad, tail);
    ASSERT_EQ(strlen(s), len);
    return s;
}

/* The run of profile in round (the only workload's). */
static json_t *run_of(json_t *doc, const char *profile, int round)
{
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(doc, "runs"), i, run)
    {
        if (!strcmp(json_string_value(json_object_get(run, "profile")), profile) &&
            json_int_at(run, "round") == round)
            return run;
    }
    HM_FAIL_("no run of profile %s in round %d", profile, round);
}

static json_t *first_run_of(json_t *doc, const char *profile)
{
    return run_of(doc, profile, 1);
}

/* The Markdown profiles-table row of profile. */
static char *md_row(const char *md, const char *profile)
{
    char key[64];
    snprintf(key, sizeof(key), "\n| %s | `` ", profile);
    const char *row = strstr(md, key);
    if (!row) HM_FAIL_("no profiles-table row for %s", profile);
    row++;
    return strndup(row, strcspn(row, "\n"));
}

static void long_lines(const char *hammer, const char *dir)
{
    char ini[300], md[300], js[300], logs[300], bindir[300];
    snprintf(ini, sizeof(ini), "%s/long.ini", dir);
    snprintf(md, sizeof(md), "%s/long.md", dir);
    snprintf(js, sizeof(js), "%s/long.json", dir);
    snprintf(logs, sizeof(logs), "%s/logs", dir);
    snprintf(bindir, sizeof(bindir), "%s", hammer);
    *strrchr(bindir, '/') = 0;
    char *c330 = long_command(330), *c1000 = long_command(1000);
    FILE *f = fopen(ini, "w");
    ASSERT(f);
    fprintf(f,
            "[matrix]\nruns = 2\nactions = 100\nconcurrency = 10\nhealth_timeout = 10s\n\n"
            "[profile long330]\ncommand = %s\nhealth = /_health\n\n"
            "[profile long1000]\ncommand = %s   ; a comment after it\nhealth = /_health\n\n"
            "; the port reaches the server only through env: {port} expands there too\n"
            "[profile continued]\ncommand = /bin/sh -c\n"
            "    'exec \"$0\" --port \"$MATRIX_TEST_PORT\" --workers 1'\n"
            "\n  ; a comment between continuation lines\n"
            "\t{bindir}/bench_app\n"
            "env = MATRIX_TEST_PORT={port}\nhealth = /_health\n\n"
            "[workload counter]\nscenario = counter\n",
            c330, c1000);
    fclose(f);
    proc p;
    char *m[] = {(char *)hammer, "matrix", "-q", "--markdown", md, "--json", js,
                 "--logs",       logs,     ini,  NULL};
    int rc = proc_run(&p, m, 120);
    if (rc != 0) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0); /* every run of every profile healthy and measured */
    ASSERT(!strstr(p.out, "unknown key"));

    json_t *doc = load_json(js);
    ASSERT_EQ(json_array_size(json_object_get(doc, "runs")), 6);
    /* The 1,000-character line arrived whole: PAD= and 962 x's, one word. */
    json_t *run = first_run_of(doc, "long1000");
    const char *pad = json_string_value(json_array_get(json_object_get(run, "server_argv"), 1));
    ASSERT(pad);
    ASSERT_EQ(strlen(pad), 1000 - strlen("/usr/bin/env  {bindir}/bench_app --port {port}"));
    ASSERT_EQ(strspn(pad + 4, "x"), strlen(pad) - 4);
    char *text = slurp(md);
    const char *names[] = {"long330", "long1000", "continued"};
    for (size_t k = 0; k < ARRAY_LEN(names); k++) {
        run = first_run_of(doc, names[k]);
        ASSERT_STREQ(json_string_value(json_object_get(run, "status")), "ok");
        int port = (int)json_int_at(run, "server_port");
        ASSERT_GT(port, 0);
        /* The row shows the words that ran, the path and port filled in. */
        char *row = md_row(text, names[k]), want[400];
        ASSERT(!strstr(row, "{port}") && !strstr(row, "{bindir}"));
        snprintf(want, sizeof(want), "%s/bench_app --port %d", bindir, port);
        if (strcmp(names[k], "continued")) ASSERT(strstr(row, want));
        /* Two rounds, a free port each: the other round's port is named. */
        json_t *later = run_of(doc, names[k], 2);
        snprintf(want, sizeof(want), "round 2 on port %d", (int)json_int_at(later, "server_port"));
        ASSERT(strstr(row, want));
        free(row);
    }
    /* The continuation lines joined with one space each. */
    run = first_run_of(doc, "continued");
    char want[400];
    snprintf(want, sizeof(want),
             "/bin/sh -c 'exec \"$0\" --port \"$MATRIX_TEST_PORT\" --workers 1' '%s'/bench_app",
             bindir);
    ASSERT_STREQ(json_string_value(json_object_get(run, "server_command")), want);
    snprintf(want, sizeof(want), "MATRIX_TEST_PORT=%d", (int)json_int_at(run, "server_port"));
    ASSERT_STREQ(json_string_value(json_array_get(json_object_get(run, "server_env"), 0)), want);
    char *row = md_row(text, "continued");
    ASSERT(strstr(row, want)); /* the environment column, expanded too */
    free(row);
    free(text);
    json_decref(doc);
    free(c330);
    free(c1000);
    printf("matrix profiles: 330- and 1,000-character and continued commands ran, as shown\n");
}

/* hammer matrix FILE must fail with exit 2 and this message. */
static void refused(const char *hammer, const char *ini, const char *message)
{
    proc p;
    char *m[] = {(char *)hammer, "matrix", (char *)ini, NULL};
    ASSERT_EQ(proc_run(&p, m, 30), 2);
    if (!strstr(p.out, message)) HM_FAIL_("expected '%s' in: %s", message, p.out);
    ASSERT(!strstr(p.out, "unknown key"));
}

static void bad_lines(const char *hammer, const char *dir)
{
    char ini[300], want[400];
    snprintf(ini, sizeof(ini), "%s/bad.ini", dir);
    /* Longer than any line hammer reads (1 MiB): refused, naming the line. */
    FILE *f = fopen(ini, "w");
    ASSERT(f);
    fprintf(f, "[profile a]\ncommand = x\n\n[workload w]\nscenario = counter\nargs = ");
    for (int i = 0; i < 1100000; i++)
        fputc('y', f);
    fprintf(f, "\nfoo = bar\n");
    fclose(f);
    snprintf(want, sizeof(want), "%s:6: this line is 1100008 bytes, more than the", ini);
    refused(hammer, ini, want);
    /* An indented key continues the value above, as inih reads it. */
    f = fopen(ini, "w");
    ASSERT(f);
    fprintf(f,
            "[profile a]\n  command = x\n  health = /_health\n[workload w]\nscenario = counter\n");
    fclose(f);
    snprintf(want, sizeof(want),
             "%s:3: this line starts with a space or tab, so it continues 'command' above; "
             "unindent 'health'",
             ini);
    refused(hammer, ini, want);
    f = fopen(ini, "w");
    ASSERT(f);
    fprintf(f, "[profile a]\ncommand = x\nport = 80\n  81\n[workload w]\nscenario = counter\n");
    fclose(f);
    snprintf(want, sizeof(want),
             "%s:4: this line starts with a space or tab, so it continues "
             "'port' above, which takes one line",
             ini);
    refused(hammer, ini, want);
    /* 0xf8 leads no UTF-8 sequence, though its continuation bytes fit one
     * of three bytes; jansson refuses it, so the file must be refused. */
    f = fopen(ini, "w");
    ASSERT(f);
    fprintf(f, "[profile a]\ncommand = x\xf8\x80\x80y\n[workload w]\nscenario = counter\n");
    fclose(f);
    refused(hammer, ini, "not UTF-8 text");
    printf("matrix profiles: a 1.1 MB line, indented keys and a 0xf8 lead byte are refused\n");
}

/* examples/php-via.ini with a php that runs bench_app: every profile
 * starts, and each passes exactly bench_opcache.php's flags. */
static void php_via_example(const char *hammer, const char *bench_app, const char *example,
                            const char *dir)
{
    char stub[300], md[300], js[300], logs[300], php[400];
    snprintf(stub, sizeof(stub), "%s/php", dir);
    snprintf(md, sizeof(md), "%s/php-via.md", dir);
    snprintf(js, sizeof(js), "%s/php-via.json", dir);
    snprintf(logs, sizeof(logs), "%s/logs", dir);
    FILE *f = fopen(stub, "w");
    ASSERT(f);
    fprintf(f,
            "#!/bin/sh\n# php stand-in: skips -d flags (the test checks them), then serves\n"
            "# bench_app.php's routes on VIA_PORT with VIA_BENCH_WORKERS workers\n"
            "while [ \"$1\" = -d ]; do shift 2; done\n"
            "case \"$1\" in */tests/Load/bench_app.php) ;; *) echo \"not bench_app.php: $1\" >&2;"
            " exit 64;; esac\n"
            "exec '%s' --port \"$VIA_PORT\" --workers \"${VIA_BENCH_WORKERS:-1}\""
            " --dispatch session\n",
            bench_app);
    fclose(f);
    ASSERT_EQ(chmod(stub, 0755), 0);
    snprintf(php, sizeof(php), "/bin/sh %s", stub);
    setenv("PHP", php, 1);
    setenv("PHP_VIA", "/srv/php-via", 1);
    char *m[] = {(char *)hammer,
                 "matrix",
                 "-q",
                 "--runs",
                 "1",
                 "-n",
                 "100",
                 "-c",
                 "10",
                 "--json",
                 js,
                 "--markdown",
                 md,
                 "--logs",
                 logs,
                 (char *)example,
                 NULL};
    proc p;
    int rc = proc_run(&p, m, 300);
    if (rc != 0 && rc != 1) fprintf(stderr, "%s\n", p.out);
    ASSERT(rc == 0 || rc == 1); /* the 4-worker profile loses contexts by design */
    ASSERT(!strstr(p.out, "SKIPPED"));

    /* php-via v0.12.0 tests/Load/bench_opcache.php, $profiles[*]['flags']. */
    static const char *const tuned[] = {
        "opcache.enable=1",
        "opcache.enable_cli=1",
        "opcache.memory_consumption=256",
        "opcache.interned_strings_buffer=64",
        "opcache.max_accelerated_files=100000",
        "opcache.validate_timestamps=0",
        "opcache.jit=function", /* [6..7]: the JIT profiles' two more */
        "opcache.jit_buffer_size=128M",
    };
    static const char *const off[] = {"opcache.enable=0", "opcache.enable_cli=0"};
    struct {
        const char *name;
        const char *const *flags;
        int n;
        const char *jit, *workers;
    } want[] = {
        {"no-opcache", off, 2, NULL, NULL},
        {"opcache-default-cli", tuned, 2, NULL, NULL},
        {"opcache-tuned", tuned, 6, NULL, NULL},
        {"jit-function", tuned, 8, "opcache.jit=function", NULL},
        {"jit-tracing", tuned, 8, "opcache.jit=tracing", NULL},
        {"multi-worker-4w", tuned, 8, "opcache.jit=tracing", "VIA_BENCH_WORKERS=4"},
    };
    json_t *doc = load_json(js);
    ASSERT_EQ(json_array_size(json_object_get(doc, "profiles")), ARRAY_LEN(want));
    char *text = slurp(md);
    for (size_t k = 0; k < ARRAY_LEN(want); k++) {
        json_t *run = first_run_of(doc, want[k].name);
        ASSERT_STREQ(json_string_value(json_object_get(run, "status")), "ok");
        json_t *argv = json_object_get(run, "server_argv");
        ASSERT_EQ(json_array_size(argv), (size_t)(3 + 2 * want[k].n));
        ASSERT_STREQ(json_string_value(json_array_get(argv, 1)), stub);
        for (int i = 0; i < want[k].n; i++) {
            const char *flag = i == 6 && want[k].jit ? want[k].jit : want[k].flags[i];
            ASSERT_STREQ(json_string_value(json_array_get(argv, (size_t)(2 + 2 * i))), "-d");
            ASSERT_STREQ(json_string_value(json_array_get(argv, (size_t)(3 + 2 * i))), flag);
        }
        ASSERT_STREQ(json_string_value(json_array_get(argv, (size_t)(2 + 2 * want[k].n))),
                     "/srv/php-via/tests/Load/bench_app.php");
        json_t *env = json_object_get(run, "server_env");
        char port[32];
        snprintf(port, sizeof(port), "VIA_PORT=%d", (int)json_int_at(run, "server_port"));
        ASSERT_STREQ(json_string_value(json_array_get(env, 0)), port);
        ASSERT_STREQ(json_string_value(json_array_get(env, 1)), "VIA_DISABLE_HTTPS=1");
        ASSERT_EQ(json_array_size(env), want[k].workers ? 3 : 2);
        if (want[k].workers)
            ASSERT_STREQ(json_string_value(json_array_get(env, 2)), want[k].workers);
        /* The report shows php's command line as it ran. */
        char *row = md_row(text, want[k].name), line[700];
        snprintf(line, sizeof(line), "/bin/sh %s -d %s -d %s", stub, want[k].flags[0],
                 want[k].flags[1]);
        ASSERT(strstr(row, line));
        ASSERT(strstr(row, port));
        free(row);
    }
    free(text);
    json_decref(doc);
    printf("examples/php-via.ini: six profiles started with bench_opcache.php's flags\n");
}

int main(int argc, char **argv)
{
    if (argc < 4) HM_FAIL_("usage: %s HAMMER BENCH_APP PHP_VIA_INI", argv[0]);
    char dir[] = "/tmp/hammer-matrix-profiles-XXXXXX";
    ASSERT(mkdtemp(dir));
    long_lines(argv[1], dir);
    bad_lines(argv[1], dir);
    php_via_example(argv[1], argv[2], argv[3], dir);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
