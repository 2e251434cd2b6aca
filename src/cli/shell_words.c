/* shell_words.c — command lines as a shell would need them; see shell_words.h. */
#include "cli/shell_words.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

/* Whether a word reads the same to a shell without quotes. */
static bool shell_safe(const char *w)
{
    if (!*w) return false;
    for (; *w; w++)
        if (!isalnum((unsigned char)*w) && !strchr("_@%+=:,./-", *w)) return false;
    return true;
}

void hm_shell_words(FILE *out, json_t *words)
{
    size_t i;
    json_t *word;
    json_array_foreach(words, i, word)
    {
        const char *w = json_string_value(word);
        if (!w) w = "";
        if (i) fputc(' ', out);
        if (shell_safe(w)) {
            fputs(w, out);
            continue;
        }
        fputc('\'', out);
        for (; *w; w++)
            *w == '\'' ? fputs("'\\''", out) : fputc(*w, out);
        fputc('\'', out);
    }
}
