/*
 * unique.c: `dlscan unique`: the first item of each run of equal items of IN (compared bit
 * for bit, as dlscan_unique compares them), into OUT, streamed chunk by chunk (compact.h).
 * What crosses a chunk's edge is the last item of the chunk before: a chunk whose first
 * item equals it goes on that run, and its first kept item is not written again.
 */
#include <string.h>

#include "compact.h"

int cmd_unique(int argc, char **argv)
{
    compact_options o;
    int status = parse_compact_options("unique", argc, argv, NULL, &o);
    if (status != STATUS_OK)
        return status < 0 ? STATUS_OK : status;
    const size_t size = o.type->size;
    compact_stream s;
    status = compact_open(&s, &o, 0);
    scan_value last; /* the chunk before's last item */
    int have_last = 0;
    size_t n, count;
    while (status == STATUS_OK && (status = compact_next(&s, &n)) == STATUS_OK && n > 0) {
        if (dlscan_unique(s.h, chunk_working(&s.m, CHUNK_IN), chunk_working(&s.m, CHUNK_OUT),
                          s.m.carry, n, o.type->type, NULL) != DLSCAN_SUCCESS) {
            status = compact_call_failed(&s, "dlscan_unique");
            break;
        }
        if ((status = compact_fetch(&s, &count, 0)) != STATUS_OK)
            break;
        const char *kept = s.m.host_out;
        const size_t skip = have_last && memcmp(kept, &last, size) == 0;
        output_values(&s.out, o.type, o.stream.text, kept + skip * size, count - skip);
        memcpy(&last, kept + (count - 1) * size, size);
        have_last = 1;
        status = output_chunk_done(&s.out);
    }
    return compact_close(&s, status);
}
