/* shell_words.h — a command's words as one line a POSIX shell splits back
 * into the same words: plain where a word needs no quoting, else in single
 * quotes (a ' inside as '\''). The reports show command lines this way
 * (hammer's own in --html, a matrix profile's server command), so a user
 * can paste them.
 *
 * Ownership: reads the caller's JSON array of strings; writes to out. */
#ifndef HM_CLI_SHELL_WORDS_H
#define HM_CLI_SHELL_WORDS_H

#include <jansson.h>
#include <stdio.h>

/* Writes the strings of words (a JSON array; a non-string is an empty
 * word), separated by single spaces. */
void hm_shell_words(FILE *out, json_t *words);

#endif
