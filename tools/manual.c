/*
 * manual.c: what every command of `dlscan` uses, so that none calls back into main.c: the
 * usage text below, which is the command's manual (and, by manpage.c, its man page), the
 * version line, the one-line error messages and the arguments the file commands take alike
 * (cli.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "values.h"

#define MAX_CHUNK_ITEMS (1ull << 40)

const manual_part manual[] = {
    {"info", "dlscan info",
     "  dlscan info\n"
     "      Library version, the GPU and its SM count, items per tile on the GPU and CPU\n"
     "      backends for each type (a scan's tile is its output type's), and which backend\n"
     "      scan and bench would use.\n"},
    {"scan", "dlscan scan --type T [--op OP] [options] [IN [OUT]]",
     "  dlscan scan --type T [--op OP] [--out-type U] [--exclusive] [--init V]\n"
     "              [--keys KEYFILE [--key-type K] | --offsets OFFSETFILE |\n"
     "               --axis-length L [--axis-stride S] [--totals FILE]]\n"
     "              [--format binary|text] [--backend auto|gpu|cpu] [--threads N]\n"
     "              [--chunk-items N] [-q] [IN [OUT]]\n"
     "      Prefix scan of the values in IN, written to OUT ('-' or left out: standard input,\n"
     "      standard output). Under mpiexec (where dlscan has its MPI binding), each rank\n"
     "      scans its slice of IN, on its GPU (rank modulo the GPUs) or CPU, all of them one\n"
     "      scan, into the one file OUT: binary files, without --keys, --offsets or\n"
     "      --axis-length.\n"
     "      --type     the type of IN: int8, uint8, int16, uint16, int32, uint32, int64,\n"
     "                 uint64, float16 (IEEE half), bfloat16, float32 or float64\n"
     "      --out-type U  the type of OUT, in which the scan accumulates (default: --type).\n"
     "                 Besides a type into itself: an integer type into a 32- or 64-bit\n"
     "                 integer type at least as wide (signed items are sign-extended, so\n"
     "                 int8 -1 is uint32 4294967295); float16 and bfloat16 into float32;\n"
     "                 float32 into float64; int32 into float64. Other pairs are refused.\n"
     "                 An 8- or 16-bit type into itself accumulates in 32 bits and rounds\n"
     "                 each output to its type.\n"
     "      --op       sum (default), min or max (integer sums wrap around in the output\n"
     "                 type); prod, the running product (int32, uint32, int64, uint64 wrap\n"
     "                 around; float32, float64); logsumexp, log(exp(in[0]) + ... +\n"
     "                 exp(in[i])) without overflow (float32, float64; --init V counts as\n"
     "                 an item V in front). prod and logsumexp are compiled at run time on a\n"
     "                 GPU (NVRTC; dlscan.h, \"Your own operator\"), take no --out-type\n"
     "                 (logsumexp no --totals), and do not run under mpiexec.\n"
     "      --exclusive  out[i] = init op in[0] op ... op in[i-1]; the default is inclusive:\n"
     "                 out[i] = init op in[0] op ... op in[i]\n"
     "      --init V   the value folded in front of the first item, of the output type\n"
     "                 (default: the operator's identity: 0 (-0.0 for floats) for sum, the\n"
     "                 type's largest value or +inf for min, its smallest value or -inf for\n"
     "                 max); with segments or an axis, in front of each one's first item\n"
     "      --keys KEYFILE  scan by key: each run of equal keys (bit for bit: float -0 and\n"
     "                 0 differ) is a segment, where the scan starts over from the init.\n"
     "                 KEYFILE holds one key per value, in --format, of --key-type.\n"
     "      --key-type K  the type of KEYFILE's keys, any of --type's (default: --type)\n"
     "      --offsets OFFSETFILE  segments from num_segments + 1 offsets in --format\n"
     "                 (unsigned 64-bit), rising, at most the number of values: segment k\n"
     "                 is the items offsets[k] .. offsets[k+1]-1 (empty ones too). Items\n"
     "                 before the first offset or from the last on are copied from IN,\n"
     "                 converted to the output type. Not with --keys.\n"
     "      --axis-length L  scans along an axis: IN is arrays [outer][L][S] (in C order:\n"
     "                 the last index varies fastest), and each of an array's S columns is\n"
     "                 scanned down its L values, from the init; with S = 1 (the default)\n"
     "                 each run of L values is one scan (the rows of a matrix of L\n"
     "                 columns). IN must hold whole arrays. Each chunk holds whole arrays:\n"
     "                 the default chunk grows to one array where it holds less, and a\n"
     "                 --chunk-items that holds less is refused. Not with --keys or\n"
     "                 --offsets.\n"
     "      --axis-stride S  the values from one value of a scan to the next (default 1):\n"
     "                 the product of the extents after the axis (the columns of N rows of M\n"
     "                 values: --axis-length N --axis-stride M).\n"
     "      --totals FILE  each scan's total along the axis (the init and all its values), of\n"
     "                 the output type, in --format, in the order of the arrays and then of\n"
     "                 their columns; written as OUT is ('-': standard output, where OUT is a\n"
     "                 file)\n"
     "      --format   binary (default): raw little-endian values (float16 and bfloat16\n"
     "                 as their 16-bit patterns); text: numbers separated by any white space\n"
     "                 (spaces, tabs, newlines, blank lines), written one a line; integers\n"
     "                 also as 1e3 or 25.0 where the value is whole (1.5 and 1e-1 are\n"
     "                 refused); float16 and bfloat16 are rounded once from the decimal\n"
     "                 text to the nearest, ties to even; floats are written as the\n"
     "                 shortest text that reads back as the same value. Binary is never\n"
     "                 written to a terminal (give --format text\n"
     "                 or a file), and without --format an IN whose first 64 bytes are only\n"
     "                 digits, signs, points, e and white space, with a newline, is refused as\n"
     "                 text: --format text reads it as numbers, --format binary as raw values.\n"
     "      --backend  auto (default): the GPU where dlscan_create finds one, else the CPU\n"
     "                 backend, saying so on stderr in a build with the GPU backend (one\n"
     "                 without it says nothing); gpu: the GPU or fail; cpu: the CPU\n"
     "                 backend (host memory, no GPU needed)\n"
     "      --threads N  threads of the CPU backend (default 0: one per online core)\n"
     "      --chunk-items N  items per chunk (advanced; default: 256 MiB on a GPU, 64 MiB\n"
     "                 on the CPU, of the widest type). Larger inputs stream through chunk\n"
     "                 by chunk, each chunk's scan starting from the last one's total,\n"
     "                 which stays on the GPU (with segments: its last segment's).\n"
     "      -q, --quiet  no notes on stderr: neither auto's fallback to the CPU backend nor\n"
     "                 the progress bar (errors still show)\n"
     "      A file OUT is written to a temporary file in its directory (through a symbolic\n"
     "      link: its target's) and renamed into place at the end, so a failed scan leaves\n"
     "      it as it was. It keeps the replaced file's permissions, and its owner and group\n"
     "      where the system allows; it is a new file: other hard links to OUT keep the old\n"
     "      contents, and ACLs and extended attributes are not kept. Standard output that\n"
     "      is a file gets the result once it is complete. A pipe, a terminal, a FIFO or a\n"
     "      device receives the output as it is computed, and may hold a partial result if\n"
     "      the scan fails. A read-only OUT is\n"
     "      not replaced. IN or OUT on standard input or output that is closed is refused\n"
     "      (no file of dlscan takes descriptors 0-2). A progress bar shows on a terminal\n"
     "      when the input takes more than a second.\n"},
    {"select", "dlscan select --type T (--flags FLAGFILE | --if TEST) [options] [IN [OUT]]",
     "  dlscan select --type T (--flags FLAGFILE | --if TEST) [--format binary|text]\n"
     "                [--backend auto|gpu|cpu] [--threads N] [--chunk-items N] [-q]\n"
     "                [IN [OUT]]\n"
     "      The values of IN that are kept, in their order, written to OUT. IN, OUT, --type,\n"
     "      --format, --backend, --threads, --chunk-items and -q are as for scan; so are\n"
     "      those of unique and run-length-encode.\n"
     "      --flags FLAGFILE  one flag per value (uint8, in --format): a value is kept where\n"
     "                 its flag is not 0\n"
     "      --if TEST  a value is kept where the test holds: 'lt V', 'le V', 'gt V', 'ge V',\n"
     "                 'eq V', 'ne V' (or <, <=, >, >=, ==, !=; V a value of --type, as C\n"
     "                 compares: a NaN passes only ne) or 'nonzero'\n"},
    {"unique", "dlscan unique --type T [options] [IN [OUT]]",
     "  dlscan unique --type T [--format binary|text] [--backend auto|gpu|cpu] [--threads N]\n"
     "                [--chunk-items N] [-q] [IN [OUT]]\n"
     "      The first value of each run of equal values of IN (compared bit for bit: float\n"
     "      -0 and 0 differ, a NaN equals the same NaN), written to OUT; of sorted values,\n"
     "      the distinct ones. A run may cross chunks: the output is the same for any\n"
     "      --chunk-items.\n"},
    {"run-length-encode",
     "dlscan run-length-encode --type T --lengths LENFILE [options] [IN [OUT]]",
     "  dlscan run-length-encode --type T --lengths LENFILE [--format binary|text]\n"
     "                [--backend auto|gpu|cpu] [--threads N] [--chunk-items N] [-q]\n"
     "                [IN [OUT]]\n"
     "      The runs of equal values of IN (compared bit for bit, as unique compares them):\n"
     "      each run's value written to OUT, and its length to LENFILE. A run may cross\n"
     "      chunks: the output is the same for any --chunk-items.\n"
     "      --lengths LENFILE  the runs' lengths, uint64 in --format, written as OUT is ('-':\n"
     "                 standard output, where OUT is a file)\n"},
    {"bench",
     "dlscan bench [--quick] [--types LIST] [--op OP] [--csv FILE] [--plot FILE] [options]",
     "  dlscan bench [--quick] [--types LIST] [--op OP] [--exclusive] [--min-log N]\n"
     "               [--max-log N] [--repeats N] [--csv FILE] [--plot FILE]\n"
     "               [--backend auto|gpu|cpu] [--threads N] [-q]\n"
     "               [--variants LIST] [--markdown FILE] [--stats]   (GPU only)\n"
     "      With a GPU: the bench harness's sweep (dlscan against memcpy, CUB and the\n"
     "      baselines). Without one: dlscan's CPU backend against a sequential loop and\n"
     "      memcpy on this machine, 2^16 .. 2^26 items, with the ratio to the loop.\n"
     "      --csv writes the results (as scan writes OUT); --plot draws them with\n"
     "      bench/plot.py (python3 with matplotlib); -q, --quiet: no note when auto falls\n"
     "      back to the CPU sweep. The harness is found through DLSCAN_BENCH, then next to\n"
     "      this command (installed: " DLSCAN_CLI_LIBEXEC "/bench; build tree:\n"
     "      ../bench/bench); the CPU sweep's program bench_cpu through DLSCAN_BENCH_CPU, and\n"
     "      plot.py through DLSCAN_PLOT, then the same places.\n"},
    {NULL, NULL,
     "  dlscan help [COMMAND] | --help | -h   this text, or one command's part of it\n"
     "  dlscan COMMAND --help | -h            one command's part\n"
     "  dlscan --version | -V                 the version\n"},
    {NULL, NULL,
     "Exit status: 0 success; 1 bad usage or bad input (unknown options, missing arguments,\n"
     "a pair of types that scan does not take, unreadable or unwritable files, a read-only\n"
     "OUT, a truncated binary file, text that is not a number, values out of range for the\n"
     "type, whole numbers' types given 1.5, a KEYFILE with fewer or more keys than IN has\n"
     "values, offsets that fall or pass the number of values, an IN that is not a whole\n"
     "number of arrays along an axis, binary output to a terminal, an IN that looks like\n"
     "text without --format, a closed standard input or output as IN or OUT, a type that\n"
     "compaction does not take, a FLAGFILE with fewer or more flags than IN has values); 2\n"
     "the library, CUDA or the system failed (no GPU with --backend gpu, out of memory, a\n"
     "failed write, a missing helper program).\n"},
    {NULL, NULL,
     "Examples (each runs as it is, in a directory it may write):\n"
     "  seq 10 | dlscan scan --type int64 --format text   the running totals of 1 .. 10\n"
     "  seq 5 | dlscan scan --type uint32 --exclusive --format text   0, 1, 3, 6, 10\n"
     "  echo 3 1 4 1 5 | dlscan scan --type int32 --op max --format text   3, 3, 4, 4, 5\n"
     "  seq 6 | dlscan scan --type int32 --format text --axis-length 3 --totals n   1, 3, 6, 4, 9, 15\n"
     "          (the rows 1 2 3 and 4 5 6, each scanned; and in the file n their sums: 6, 15)\n"
     "  seq 6 | dlscan scan --type int32 --format text --axis-length 2 --axis-stride 3 --backend cpu   1, 2, 3, 5, 7, 9\n"
     "          (the columns of the rows 1 2 3 and 4 5 6, each scanned down)\n"
     "  head -c 4096 /dev/urandom > in; dlscan scan --type uint32 in out   1024 random\n"
     "          values, summed in raw uint32 (binary is never written to a terminal)\n"
     "  seq 5 | dlscan select --type int32 --format text --if 'gt 3'   4, 5\n"
     "  echo 1 0 1 > f; seq 3 | dlscan select --type int32 --format text --flags f   1, 3\n"
     "  echo 7 7 7 2 2 7 | dlscan unique --type int32 --format text   7, 2, 7\n"
     "  echo 7 7 7 2 2 | dlscan run-length-encode --type int32 --format text --lengths n   7, 2\n"
     "          (and in the file n: 3, 2)\n"},
    {NULL, NULL, NULL},
};

int fail(int status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("dlscan: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    return status;
}

int take_common_argument(const char *command, const char *a, common_arguments *common,
                         int *taken)
{
    *taken = 1;
    if (common->positional_only || a[0] != '-' || strcmp(a, "-") == 0) {
        if (common->in_path && common->out_path)
            return fail(STATUS_BAD_INPUT, "%s: unexpected argument '%s' (IN and OUT are "
                                          "already %s and %s)",
                        command, a, common->in_path, common->out_path);
        *(common->in_path ? &common->out_path : &common->in_path) = a;
    } else if (strcmp(a, "--") == 0) {
        common->positional_only = 1;
    } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
        common->quiet = 1;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        print_usage(command);
        return -1;
    } else {
        *taken = 0;
    }
    return STATUS_OK;
}

int take_stream_option(const char *command, const char *a, const char *value, stream_options *s,
                       int *taken)
{
    *taken = 1;
    unsigned long long number;
    if (strcmp(a, "--format") == 0) {
        if (strcmp(value, "binary") != 0 && strcmp(value, "text") != 0)
            return fail(STATUS_BAD_INPUT, "%s: unknown format '%s' (binary or text)", command,
                        value);
        s->text = strcmp(value, "text") == 0;
        s->format_given = 1;
    } else if (strcmp(a, "--backend") == 0) {
        if (!parse_backend(value, &s->backend))
            return fail(STATUS_BAD_INPUT, "%s: unknown backend '%s' (auto, gpu or cpu)", command,
                        value);
    } else if (strcmp(a, "--threads") == 0) {
        if (!parse_count(value, 0, 4096, &number))
            return fail(STATUS_BAD_INPUT, "%s: --threads takes 0 .. 4096, not '%s'", command,
                        value);
        s->threads = (int)number;
    } else if (strcmp(a, "--chunk-items") == 0) {
        if (!parse_count(value, 1, MAX_CHUNK_ITEMS, &s->chunk_items))
            return fail(STATUS_BAD_INPUT, "%s: --chunk-items takes 1 .. %llu, not '%s'", command,
                        MAX_CHUNK_ITEMS, value);
    } else {
        *taken = 0;
    }
    return STATUS_OK;
}

void print_usage(const char *command)
{
    const manual_part *part = manual;
    if (command) { /* "usage: dlscan scan ...", its section, then what every command shares */
        while (part->command && strcmp(part->command, command) != 0)
            ++part;
        printf("usage: %s\n\n%s", part->usage, part->text);
        while (part->command)
            ++part;
    } else {
        fputs("usage: dlscan <command> [options]\n", stdout);
    }
    for (; part->text; ++part) /* one command's part leaves out the last, the examples */
        if (!command || (!part->command && part[1].text))
            printf("\n%s", part->text);
}

void print_version_line(void)
{
    const int v = dlscan_version();
    printf("dlscan %d.%d.%d (library %d.%d.%d)\n", DLSCAN_VERSION_MAJOR, DLSCAN_VERSION_MINOR,
           DLSCAN_VERSION_PATCH, v / 10000, v / 100 % 100, v % 100);
}
