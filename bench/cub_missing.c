/* cub_missing.c: the CUB variant where CUB headers were not found: none. */
#include "variants.h"

const bench_variant *bench_cub_variant(void) { return NULL; }

const char *bench_cub_version(void) { return "not built"; }
