/*
 * manpage.c: `dlscan --man` prints the man page, dlscan.1, in roff; tools/meson.build runs
 * it at build time and installs the page. The page is the manual of `dlscan --help`
 * (manual.c), line by line, so the two cannot drift apart (its last parts are the sections
 * HELP AND VERSION, EXIT STATUS and EXAMPLES):
 *
 *     "  dlscan scan --type ..." and the lines under it, deeper    a subsection, its synopsis
 *     "      --type     int32, ..." (an option, then 2 blanks)     a tagged paragraph
 *     "  dlscan --version | -V      the version" (3 blanks)        a tagged paragraph
 *     other lines at 6 blanks or none; deeper lines                text; the text goes on
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* `length` bytes of text, in roff: backslashes and hyphens escaped, a leading control
 * character made text. */
static void put_roff(const char *text, size_t length)
{
    if (length > 0 && (text[0] == '.' || text[0] == '\''))
        fputs("\\&", stdout);
    for (size_t k = 0; k < length; ++k) {
        if (text[k] == '\\')
            fputs("\\e", stdout);
        else if (text[k] == '-')
            fputs("\\-", stdout);
        else
            putchar(text[k]);
    }
}

/* A line of text in roff. */
static void put_line(const char *text, size_t length)
{
    put_roff(text, length);
    putchar('\n');
}

/* A tagged paragraph: the tag (bold) ends where `gap` blanks begin; the rest is its text.
 * Returns 0 where the line has no such gap. */
static int put_tagged(const char *line, size_t length, const char *gap)
{
    const char *split = strstr(line, gap);
    if (!split || split >= line + length)
        return 0;
    const char *text = split + strspn(split, " ");
    fputs(".TP\n\\fB", stdout);
    put_roff(line, (size_t)(split - line));
    fputs("\\fR\n", stdout);
    put_line(text, length - (size_t)(text - line));
    return 1;
}

/* One part of the manual (manual_part.text). */
static void put_part(const char *text)
{
    enum { NONE, SYNOPSIS, PARAGRAPH, TAGGED } state = NONE;
    for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
        const char *end = strchr(line, '\n');
        const size_t indent = strspn(line, " ");
        const char *body = line + indent;
        const size_t length = (size_t)(end - body);
        if (indent > 6 && state == SYNOPSIS) { /* aligned under the first line */
            put_line(line + 2, (size_t)(end - line) - 2);
            continue;
        }
        if (indent > 6 && state != NONE) {
            put_line(body, length);
            continue;
        }
        if (state == SYNOPSIS)
            fputs(".fi\n", stdout);
        if ((indent == 2 && put_tagged(body, length, "   ")) ||
            (indent == 6 && body[0] == '-' && put_tagged(body, length, "  "))) {
            state = TAGGED;
        } else if (indent == 2) { /* "dlscan scan --type ...": titled "dlscan scan" */
            const size_t first = strcspn(body, " \n");
            const size_t title = first + strcspn(body + first + 1, " \n") + 1;
            fputs(".SS ", stdout);
            put_line(body, title < length ? title : length);
            fputs(".nf\n", stdout);
            put_line(body, length);
            state = SYNOPSIS;
        } else {
            if (state != PARAGRAPH)
                fputs(".PP\n", stdout);
            put_line(body, length);
            state = PARAGRAPH;
        }
    }
    if (state == SYNOPSIS)
        fputs(".fi\n", stdout);
}

void print_man_page(void)
{
    printf(".TH DLSCAN 1 \"\" \"dlscan %d.%d.%d\" \"User Commands\"\n.SH NAME\n"
           "dlscan \\- prefix scans of files on an NVIDIA GPU or the CPU\n.SH SYNOPSIS\n.nf\n",
           DLSCAN_VERSION_MAJOR, DLSCAN_VERSION_MINOR, DLSCAN_VERSION_PATCH);
    const manual_part *part = manual;
    for (; part->command; ++part)
        put_line(part->usage, strlen(part->usage));
    fputs("dlscan help [COMMAND]\ndlscan \\-\\-version\n.fi\n.SH COMMANDS\n", stdout);
    for (part = manual; part->command; ++part)
        put_part(part->text);
    fputs(".SH HELP AND VERSION\n", stdout);
    put_part(part->text);
    fputs(".SH EXIT STATUS\n", stdout);
    put_part(part[1].text);
    fputs(".SH EXAMPLES\n", stdout);
    put_part(part[2].text);
}
