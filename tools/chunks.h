/*
 * chunks.h: a chunk's memory, for `dlscan scan` and the compaction commands (chunks.c): host
 * buffers for reading and writing files, device buffers for a GPU handle (a CPU handle works
 * on the host buffers), and the carry: one value that each call leaves for the next chunk
 * (scan: the running total; compaction: the count). Every function that can fail returns
 * an exit status (cli.h) after printing why.
 */
#ifndef DLSCAN_CLI_CHUNKS_H
#define DLSCAN_CLI_CHUNKS_H

#include <stddef.h>

#include "cli.h"
#include "files.h"
#include "values.h"

/* The carry's bytes: any value, a size_t, or a user operator's state (dlscan.h). */
#define CHUNK_CARRY_BYTES 32

typedef struct chunk_memory {
    int on_gpu;
    int pinned;
    void *host_in, *host_out, *host_extra; /* extra: scan's keys or offsets, select's flags,
                                              run-length encoding's lengths */
    void *device_in, *device_out, *device_extra;
    void *carry;           /* device memory for a GPU handle, else host_carry */
    _Alignas(16) unsigned char host_carry[CHUNK_CARRY_BYTES];
} chunk_memory;

enum { CHUNK_BUFFERS = 3, CHUNK_IN = 0, CHUNK_OUT = 1, CHUNK_EXTRA = 2 };

/* Items per chunk: --chunk-items, else 256 MiB on a GPU (at most a `buffers`-th of its free
 * memory: each device buffer twice over, room to spare) or 64 MiB on the CPU, in items of
 * `widest` bytes; never more than an input of known size holds (binary: its items of
 * `item_size` bytes; text: a number and a newline take two bytes at least). */
size_t chunk_items_for(const stream_options *s, const input_file *in, size_t item_size,
                       size_t widest, int buffers, int on_gpu);

/* Buffers for `items` items of `in_size` and of `out_size` bytes, `extra_bytes` (0: none),
 * and the carry. */
int chunk_memory_alloc(chunk_memory *m, int on_gpu, size_t items, size_t in_size,
                       size_t out_size, size_t extra_bytes);
void chunk_memory_free(chunk_memory *m);

/* The buffer CHUNK_IN, _OUT or _EXTRA that the library works on: the device's for a GPU
 * handle, else the host's. */
void *chunk_working(const chunk_memory *m, int buffer);

/* Copies the first `bytes` of buffer CHUNK_IN, _OUT or _EXTRA to the device or back; for a
 * CPU handle, nothing. */
int chunk_copy(chunk_memory *m, int buffer, int to_device, size_t bytes);

/* The carry's first `size` bytes, to the host (for a GPU handle, after the work before). */
int chunk_carry(chunk_memory *m, void *value, size_t size);

#endif /* DLSCAN_CLI_CHUNKS_H */
