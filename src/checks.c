/*
 * checks.c: the argument checks the scans (api.c) and the compactions (compact.c) share:
 * types, counts, pointers and overlaps. Each failed check records a message naming the
 * argument (dl_fail) and returns its status.
 */
#include "internal.h"

/* Tiles per call are counted in 32 bits and the GPU grid's x dimension holds 2^31 - 1. */
#define DL_MAX_TILES 0x7fffffffull

size_t dl_tiles(size_t n, size_t tile) { return n / tile + (n % tile != 0); }

dlscan_status dl_check_type(dlscan_handle_t h, dlscan_type type)
{
    if (!dl_type_valid(type))
        return dl_fail(h, DLSCAN_ERROR_INVALID_TYPE,
                       "type = %d is not a dlscan_type (DLSCAN_INT32 = 0 .. DLSCAN_BFLOAT16 = 11)",
                       (int)type);
    return DLSCAN_SUCCESS;
}

dlscan_status dl_check_compact_type(dlscan_handle_t h, dlscan_type type)
{
    const dlscan_status status = dl_check_type(h, type);
    if (status == DLSCAN_SUCCESS && dl_type_size(type) < 4)
        return dl_fail(h, DLSCAN_ERROR_INVALID_TYPE,
                       "type = %s: compaction takes the 32- and 64-bit types (DLSCAN_INT32 .. "
                       "DLSCAN_FLOAT64)",
                       dl_type_name(type));
    return status;
}

dlscan_status dl_check_count(dlscan_handle_t h, size_t n, dlscan_type type, size_t tile)
{
    const size_t size = dl_type_size(type);
    size_t max_n = SIZE_MAX / size;
    if (max_n / tile > DL_MAX_TILES)
        max_n = (size_t)DL_MAX_TILES * tile;
    if (n > max_n)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT,
                       "n = %zu is more than the %zu %s items one call can scan", n, max_n,
                       dl_type_name(type));
    return DLSCAN_SUCCESS;
}

dlscan_status dl_check_pointer(dlscan_handle_t h, const void *p, size_t size, const char *what)
{
    if (!p)
        return dl_fail(h, DLSCAN_ERROR_INVALID_ARGUMENT, "%s is NULL", what);
    if ((uintptr_t)p % size)
        return dl_fail(h, DLSCAN_ERROR_MISALIGNED,
                       "%s = %p is not aligned to %zu bytes, the size of its elements", what, p,
                       size);
    return DLSCAN_SUCCESS;
}

int dl_ranges_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    if (!a_bytes || !b_bytes)
        return 0;
    return x < y ? y - x < a_bytes : x - y < b_bytes;
}

