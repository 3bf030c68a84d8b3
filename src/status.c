/*
 * status.c: status strings (generated from the one list in dlscan.h), the per-handle
 * last-error message and the runtime version.
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

int dlscan_version(void) { return DLSCAN_VERSION; }

const char *dlscan_status_string(dlscan_status status)
{
    switch (status) {
#define DLSCAN_STATUS_STRING_CASE(name, number, message)                                          \
    case name: return #name ": " message;
        DLSCAN_STATUS_LIST(DLSCAN_STATUS_STRING_CASE)
#undef DLSCAN_STATUS_STRING_CASE
    }
    return "unknown dlscan_status";
}

const char *dlscan_last_error(dlscan_handle_t h)
{
    return h ? h->last_error : "the handle is NULL (dlscan_create failed or was not called)";
}

dlscan_status dl_fail(dlscan_handle_t h, dlscan_status status, const char *format, ...)
{
    if (!h)
        return status;
    va_list args;
    va_start(args, format);
    vsnprintf(h->last_error, sizeof h->last_error, format, args);
    va_end(args);
    return status;
}
