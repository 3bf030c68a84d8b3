/*
 * select.c: `dlscan select`: the items of IN that a flag or a test keeps, in their order,
 * into OUT, streamed chunk by chunk (compact.h). --flags FLAGFILE: one uint8 flag an item,
 * in --format, read next to IN (dlscan_select_flagged: kept where not 0); --if TEST: the
 * item against a value of --type (dlscan_select_if: "ge 3", ">= 3", ... or "nonzero").
 * Nothing crosses a chunk's edge.
 */
#include <string.h>

#include "compact.h"

/* The tests of --if, by name and by sign, in dlscan_predicate's order. */
static const char *const test_names[7][2] = {
    {"lt", "<"}, {"le", "<="}, {"gt", ">"}, {"ge", ">="}, {"eq", "=="}, {"ne", "!="},
    {"nonzero", "nonzero"},
};

/* --if TEST: the predicate and its operand, a value of `type`. */
static int parse_test(const char *text, const type_info *type, dlscan_predicate *predicate,
                      scan_value *operand)
{
    const size_t name_length = strcspn(text, " ");
    int which = -1;
    for (int k = 0; k < 7; ++k)
        for (int form = 0; form < 2; ++form)
            if (strlen(test_names[k][form]) == name_length &&
                strncmp(text, test_names[k][form], name_length) == 0)
                which = k;
    const char *value = text + name_length + strspn(text + name_length, " ");
    if (which < 0 || (which == DLSCAN_NONZERO) != (*value == '\0'))
        return fail(STATUS_BAD_INPUT, "select: --if takes 'lt V', 'le V', 'gt V', 'ge V', "
                                      "'eq V', 'ne V' (or <, <=, >, >=, ==, !=) or 'nonzero', "
                                      "not '%s'",
                    text);
    *predicate = (dlscan_predicate)which;
    memset(operand, 0, sizeof *operand);
    const parse_result parsed = parse_value(type->type, value, strlen(value), operand);
    if (which != DLSCAN_NONZERO && parsed != PARSE_OK)
        return bad_value(parsed, "select: --if: ", value, strlen(value), type);
    return STATUS_OK;
}

int cmd_select(int argc, char **argv)
{
    static const char *const own[] = {"--flags", "--if", NULL};
    compact_options o;
    int status = parse_compact_options("select", argc, argv, own, &o);
    if (status != STATUS_OK)
        return status < 0 ? STATUS_OK : status;
    const char *flags_path = o.own[0], *test = o.own[1];
    if (!flags_path == !test)
        return fail(STATUS_BAD_INPUT, "select: give one of --flags FLAGFILE and --if TEST");
    if (flags_path && strcmp(flags_path, "-") == 0 && strcmp(o.in_path, "-") == 0)
        return fail(STATUS_BAD_INPUT, "select: IN and --flags cannot both be standard input");
    dlscan_predicate predicate = DLSCAN_NONZERO;
    scan_value operand;
    if (test && (status = parse_test(test, o.type, &predicate, &operand)) != STATUS_OK)
        return status;

    const type_info *flag_type = find_type("uint8");
    input_file flags = {0};
    compact_stream s;
    status = compact_open(&s, &o, flags_path ? 1 : 0);
    if (status == STATUS_OK && flags_path)
        status = input_open(&flags, flags_path);
    size_t n, got, count;
    while (status == STATUS_OK && (status = compact_next(&s, &n)) == STATUS_OK && n > 0) {
        dlscan_status called;
        if (flags_path) {
            if ((status = read_chunk(&flags, flag_type, o.stream.text, s.m.host_extra, n, &got)) !=
                STATUS_OK)
                break;
            if (got < n) {
                status = fail(STATUS_BAD_INPUT, "select: %s has fewer flags than %s has values "
                                                "(one flag per value)",
                              flags.name, s.in.name);
                break;
            }
            if ((status = chunk_copy(&s.m, CHUNK_EXTRA, 1, n)) != STATUS_OK)
                break;
            called = dlscan_select_flagged(s.h, chunk_working(&s.m, CHUNK_IN),
                                           chunk_working(&s.m, CHUNK_EXTRA),
                                           chunk_working(&s.m, CHUNK_OUT), s.m.carry, n,
                                           o.type->type, NULL);
        } else {
            called = dlscan_select_if(s.h, chunk_working(&s.m, CHUNK_IN),
                                      chunk_working(&s.m, CHUNK_OUT), s.m.carry, n,
                                      o.type->type, predicate, &operand, NULL);
        }
        if (called != DLSCAN_SUCCESS) {
            status = compact_call_failed(&s, flags_path ? "dlscan_select_flagged"
                                                        : "dlscan_select_if");
            break;
        }
        if ((status = compact_fetch(&s, &count, 0)) != STATUS_OK)
            break;
        output_values(&s.out, o.type, o.stream.text, s.m.host_out, count);
        status = output_chunk_done(&s.out);
    }
    scan_value extra;
    if (status == STATUS_OK && flags_path &&
        (status = read_chunk(&flags, flag_type, o.stream.text, &extra, 1, &got)) == STATUS_OK && got)
        status = fail(STATUS_BAD_INPUT, "select: %s has more flags than %s has values (one "
                                        "flag per value)",
                      flags.name, s.in.name);
    input_close(&flags);
    return compact_close(&s, status);
}
