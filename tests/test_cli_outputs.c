/* What the command line around a run promises about its outputs:
 *   unwritable  --json, --html and --hgrm that cannot be written are refused
 *               before the load (exit 2, the file and the system's reason),
 *               and the JSON is still written when it can be;
 *   write_fail  a write that fails at the end (a symlink to /dev/full) is
 *               exit 1 with the system's errno, not a green run;
 *   command_line  JSON command_line is argv exactly as typed (getopt
 *               reorders argv), the HTML report quotes it as a shell needs;
 *   signal_name the cpu scenario names its signal alike in both models;
 *   har_header  the command in import-har's header runs the imported flow;
 *   merge_cover hammer merge's Missing/Repeated shards lines and its stderr
 *               messages say the same, with the count of repeats.
 * argv: HAMMER SOURCE_DIR BEHAVIOUR */
#include "base/hm_base.h"
#include "run_util.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *hammer;
static char dir[] = "/tmp/hammer-outputs-XXXXXX";

/* A short run against the embedded bench_app: argv after the program,
 * NULL-terminated. */
static int run_hammer(proc *p, const char *const *args)
{
    char *argv[40];
    int n = 0;
    argv[n++] = (char *)hammer;
    for (; *args && n < 39; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    return proc_run(p, argv, 240);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void check_unwritable(void)
{
    char json[300], html[300], hgrm[300], plain[300], nodir[300], under_file[300];
    snprintf(json, sizeof(json), "%s/run.json", dir);
    snprintf(html, sizeof(html), "%s/run.html", dir);
    snprintf(hgrm, sizeof(hgrm), "%s/run.hgrm", dir);
    snprintf(plain, sizeof(plain), "%s/plain", dir);
    snprintf(nodir, sizeof(nodir), "%s/no/such/dir/run.json", dir);
    snprintf(under_file, sizeof(under_file), "%s/plain/run.hgrm", dir);
    write_file(plain, "a regular file, not a folder\n");
    proc p;
    char want[600];

    /* --json in a folder that does not exist: refused before any load. */
    int rc =
        run_hammer(&p, (const char *[]){"-n", "20", "-c", "2", "-q", "--timeout", "60s", "--json",
                                        nodir, "--hgrm", hgrm, "scenario", "counter", NULL});
    snprintf(want, sizeof(want), "hammer: cannot write %s: No such file or directory", nodir);
    if (rc != 2 || !strstr(p.out, want)) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 2);
    ASSERT(strstr(p.out, want));
    ASSERT(!strstr(p.out, "Input/output error"));
    ASSERT(!exists(hgrm)); /* nothing ran, so nothing else was written */

    /* --html naming a folder: refused, and --json still says why. */
    rc = run_hammer(&p, (const char *[]){"-n", "20", "-c", "2", "-q", "--timeout", "60s", "--json",
                                         json, "--html", dir, "scenario", "counter", NULL});
    snprintf(want, sizeof(want), "hammer: cannot write %s: Is a directory", dir);
    if (rc != 2 || !strstr(p.out, want)) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 2);
    ASSERT(strstr(p.out, want));
    json_t *doc = load_json(json);
    ASSERT_EQ(json_int_at(doc, "actions.sent"), 0);
    snprintf(want, sizeof(want), "cannot write %s: Is a directory", dir);
    ASSERT_STREQ(json_string_value(json_object_get(doc, "fatal")), want);
    json_decref(doc);
    unlink(json);

    /* --hgrm below a regular file; with --passes, each pass's file is checked. */
    rc = run_hammer(&p, (const char *[]){"-n", "20", "-c", "2", "-q", "--timeout", "60s",
                                         "--passes", "cold,warm", "--hgrm", under_file, "--html",
                                         html, "scenario", "counter", NULL});
    snprintf(want, sizeof(want), "hammer: cannot write %s/plain/run.cold.hgrm: Not a directory",
             dir);
    if (rc != 2 || !strstr(p.out, want)) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 2);
    ASSERT(strstr(p.out, want));
    char *report = slurp(html); /* the HTML, like the JSON, says why */
    ASSERT(strstr(report, "Not a directory"));
    free(report);
    unlink(html);
    unlink(plain);
    printf("unwritable: --json, --html and --hgrm refused up front with the system's reason\n");
}

static void check_write_fail(void)
{
    struct stat st;
    if (stat("/dev/full", &st) < 0 || !S_ISCHR(st.st_mode)) {
        printf("skip: no /dev/full here to make a write fail\n");
        exit(77);
    }
    char full[300], json[300], hgrm[300];
    snprintf(full, sizeof(full), "%s/full", dir);
    snprintf(json, sizeof(json), "%s/run.json", dir);
    snprintf(hgrm, sizeof(hgrm), "%s/run.hgrm", dir);
    ASSERT_EQ(symlink("/dev/full", full), 0);
    proc p;
    char want[600];
    snprintf(want, sizeof(want), "hammer: cannot write %s: No space left on device", full);
    const char *flags[] = {"--json", "--html", "--hgrm"};
    for (size_t i = 0; i < HM_ARRAY_LEN(flags); i++) {
        /* The run itself passes; only its report is lost. The others are
         * written all the same. */
        const char *other = i == 0 ? "--hgrm" : "--json", *other_path = i == 0 ? hgrm : json;
        int rc = run_hammer(&p, (const char *[]){"-n", "20", "-c", "2", "-q", "--timeout", "60s",
                                                 flags[i], full, other, other_path, "scenario",
                                                 "counter", NULL});
        if (rc != 1 || !strstr(p.out, want)) fprintf(stderr, "%s: %s\n", flags[i], p.out);
        ASSERT_EQ(rc, 1);
        ASSERT(strstr(p.out, want));
        ASSERT(!strstr(p.out, "Input/output error"));
        ASSERT(lstat(full, &st) == 0 && S_ISLNK(st.st_mode)); /* written through, not replaced */
        ASSERT(exists(other_path));
        if (other_path == json) {
            json_t *doc = load_json(json);
            ASSERT_EQ(json_int_at(doc, "actions.ok"), 20);
            json_decref(doc);
        }
        unlink(other_path);
    }
    unlink(full);
    printf("write_fail: a report lost at the end is exit 1 with ENOSPC's words\n");
}

static void check_command_line(void)
{
    char json[300], html[300];
    snprintf(json, sizeof(json), "%s/run.json", dir);
    snprintf(html, sizeof(html), "%s/run.html", dir);
    /* Operands first and options after: getopt moves them in its argv. */
    const char *args[] = {"scenario", "counter",   "-n",  "20",     "-c", "2",
                          "-q",       "--json",    json,  "--html", html, "--threshold",
                          "p99<10s",  "--timeout", "60s", NULL};
    proc p;
    int rc = run_hammer(&p, args);
    if (rc != 0) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0);
    json_t *doc = load_json(json);
    json_t *cl = json_object_get(doc, "command_line");
    size_t n = HM_ARRAY_LEN(args) - 1;
    ASSERT_EQ(json_array_size(cl), n + 1);
    ASSERT_STREQ(json_string_value(json_array_get(cl, 0)), hammer);
    for (size_t i = 0; i < n; i++)
        ASSERT_STREQ(json_string_value(json_array_get(cl, i + 1)), args[i]);
    json_decref(doc);
    /* The report's command is one a shell splits back into those words. */
    char *report = slurp(html);
    char want[1200];
    snprintf(want, sizeof(want),
             "<code>%s scenario counter -n 20 -c 2 -q --json %s --html %s --threshold "
             "'p99&lt;10s' --timeout 60s</code>",
             hammer, json, html);
    if (!strstr(report, want)) {
        char *at = strstr(report, "<h2>Command</h2>");
        fprintf(stderr, "want %s\nin %.400s\n", want, at ? at : "(no Command section)");
    }
    ASSERT(strstr(report, want));
    free(report);
    /* An argument that is not UTF-8 (a file name may be any bytes) is kept,
     * its refused byte as \xNN: jansson refuses the raw bytes, and the
     * entry would be dropped without a word. */
    char hgrm[300], kept[310];
    snprintf(hgrm, sizeof(hgrm), "%s/lat\xff.hgrm", dir);
    snprintf(kept, sizeof(kept), "%s/lat\\xff.hgrm", dir);
    const char *odd[] = {"scenario", "counter", "-n", "5",      "-c", "1",
                         "-q",       "--json",  json, "--hgrm", hgrm, NULL};
    rc = run_hammer(&p, odd);
    if (rc != 0) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0);
    doc = load_json(json);
    cl = json_object_get(doc, "command_line");
    ASSERT_EQ(json_array_size(cl), HM_ARRAY_LEN(odd));
    ASSERT_STREQ(json_string_value(json_array_get(cl, HM_ARRAY_LEN(odd) - 1)), kept);
    json_decref(doc);
    printf("command_line: as typed in the JSON, shell-quoted in the HTML; a non-UTF-8 "
           "byte kept as \\xNN\n");
}

static void check_signal_name(void)
{
    const char *modes[] = {"hammer", "browser"};
    for (size_t i = 0; i < HM_ARRAY_LEN(modes); i++) {
        char json[300];
        snprintf(json, sizeof(json), "%s/cpu-%s.json", dir, modes[i]);
        proc p;
        int rc = run_hammer(&p, (const char *[]){"-n", "10", "-c", "2", "-q", "--timeout", "60s",
                                                 "--mode", modes[i], "--json", json, "scenario",
                                                 "cpu", NULL});
        if (rc != 0) fprintf(stderr, "%s: %s\n", modes[i], p.out);
        ASSERT_EQ(rc, 0);
        json_t *doc = load_json(json);
        json_t *name = json_object_get(json_object_get(doc, "signal"), "name");
        if (!json_is_string(name))
            fprintf(stderr, "--mode %s: signal.name is not a string\n", modes[i]);
        ASSERT_STREQ(json_string_value(name), "count");
        json_decref(doc);
    }
    printf("signal_name: cpu names its signal \"count\" in both models\n");
}

/* The words of the header's "#   hammer ..." line, with -c and -n made
 * small and THIS.yaml the imported file; NULL-terminated into words. */
static int header_command(const char *flow_text, const char *flow_path, char *line, size_t cap,
                          char **words, int max)
{
    const char *at = strstr(flow_text, "\n#   hammer ");
    ASSERT(at);
    at += strlen("\n#   ");
    size_t len = strcspn(at, "\n");
    ASSERT(len < cap);
    memcpy(line, at, len);
    line[len] = 0;
    int n = 0;
    for (char *w = strtok(line, " "); w && n < max - 1; w = strtok(NULL, " ")) {
        if (n > 0 && !strcmp(words[n - 1], "-c")) w = "2";
        if (n > 0 && !strcmp(words[n - 1], "-n")) w = "4";
        words[n++] = !strcmp(w, "THIS.yaml") ? (char *)flow_path : w;
    }
    words[n] = NULL;
    return n;
}

static void check_har_header(const char *source_dir)
{
    char data[300];
    snprintf(data, sizeof(data), "%s/tests/data", source_dir);
    DIR *d = opendir(data);
    ASSERT(d);
    int hars = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".har")) continue;
        char har[600], flow[600];
        snprintf(har, sizeof(har), "%s/%s", data, e->d_name);
        snprintf(flow, sizeof(flow), "%s/%.*s.yaml", dir, (int)(len - 4), e->d_name);
        proc p;
        char *imp[] = {(char *)hammer, "import-har", har, NULL};
        proc_start(&p, imp);
        int rc = proc_wait(&p, 60);
        ASSERT_EQ(rc, 0);
        char *yaml = strdup(p.out);
        ASSERT(yaml);
        /* stdout is the flow; a note on stderr may follow it in p.out */
        char *note = strstr(yaml, "\nhammer import-har:");
        if (note) note[1] = 0;
        FILE *f = fopen(flow, "w");
        ASSERT(f);
        fputs(yaml, f);
        fclose(f);
        char line[600];
        char *words[40];
        int n = header_command(yaml, flow, line, sizeof(line), words, 36);
        ASSERT_STREQ(words[0], "hammer");
        words[0] = (char *)hammer;
        words[n++] = "--timeout";
        words[n++] = "60s";
        words[n++] = "-q";
        words[n] = NULL;
        rc = proc_run(&p, words, 240);
        if (rc != 0) fprintf(stderr, "%s: the header's command: %s\n", e->d_name, p.out);
        ASSERT_EQ(rc, 0);
        free(yaml);
        hars++;
    }
    closedir(d);
    ASSERT_GT(hars, 0);
    printf("har_header: the header's command runs each of %d imported recordings\n", hars);
}

static void check_merge_cover(void)
{
    char shard[300], md[300];
    snprintf(shard, sizeof(shard), "%s/shard0.json", dir);
    snprintf(md, sizeof(md), "%s/merged.md", dir);
    proc p;
    int rc =
        run_hammer(&p, (const char *[]){"--shard", "0/2", "-n", "20", "-c", "2", "-q", "--timeout",
                                        "60s", "--json", shard, "scenario", "counter", NULL});
    ASSERT_EQ(rc, 0);
    rc = run_hammer(&p, (const char *[]){"merge", "--markdown", md, shard, shard, NULL});
    ASSERT_EQ(rc, 1); /* shard 1 of 2 is missing */
    const char *lines[] = {
        "Missing shards    1 of 2 (no input is shard 1)\n",
        "Repeated shards   1 of 2 (2 inputs are shard 0)\n",
        "hammer merge: missing shards 1 of 2 (no input is shard 1): the merged run is incomplete",
        "hammer merge: repeated shards 1 of 2 (2 inputs are shard 0)\n",
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(lines); i++) {
        if (!strstr(p.out, lines[i])) fprintf(stderr, "want %s\nin %s\n", lines[i], p.out);
        ASSERT(strstr(p.out, lines[i]));
    }
    ASSERT(!strstr(p.out, "Repeated shards   0"));
    char *text = slurp(md);
    ASSERT(strstr(text, "| Missing shards | 1 of 2 (no input is shard 1) |"));
    ASSERT(strstr(text, "| Repeated shards | 1 of 2 (2 inputs are shard 0) |"));
    free(text);
    /* Three inputs of shard 0: counted as three. */
    rc = run_hammer(&p, (const char *[]){"merge", shard, shard, shard, NULL});
    ASSERT_EQ(rc, 1);
    ASSERT(strstr(p.out, "Repeated shards   1 of 2 (3 inputs are shard 0)\n"));
    ASSERT(strstr(p.out, "hammer merge: repeated shards 1 of 2 (3 inputs are shard 0)\n"));
    /* Its reports, like a run's, fail with the system's errno. */
    struct stat st;
    if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) {
        char full[300], want[400];
        snprintf(full, sizeof(full), "%s/full.md", dir);
        ASSERT_EQ(symlink("/dev/full", full), 0);
        rc = run_hammer(&p, (const char *[]){"merge", "-q", "--markdown", full, shard, NULL});
        snprintf(want, sizeof(want), "hammer merge: cannot write %s: No space left on device",
                 full);
        ASSERT(strstr(p.out, want));
        ASSERT_EQ(rc, 1);
    }
    printf("merge_cover: the Missing/Repeated shards lines and stderr agree\n");
}

int main(int argc, char **argv)
{
    if (argc < 4) HM_FAIL_("usage: %s HAMMER SOURCE_DIR BEHAVIOUR", argv[0]);
    hammer = argv[1];
    ASSERT(mkdtemp(dir));
    const char *b = argv[3];
    if (!strcmp(b, "unwritable"))
        check_unwritable();
    else if (!strcmp(b, "write_fail"))
        check_write_fail();
    else if (!strcmp(b, "command_line"))
        check_command_line();
    else if (!strcmp(b, "signal_name"))
        check_signal_name();
    else if (!strcmp(b, "har_header"))
        check_har_header(argv[2]);
    else if (!strcmp(b, "merge_cover"))
        check_merge_cover();
    else
        HM_FAIL_("unknown behaviour %s", b);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
