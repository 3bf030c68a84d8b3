/*
 * chunks.c: the memory of a chunk of `dlscan scan` and of the compaction commands (chunks.h):
 * host buffers, device buffers for a GPU handle (pinned host memory where it can be had),
 * the carry, and the copies between them.
 */
#include "chunks.h"

#include <stdlib.h>
#include <string.h>

#ifdef DLSCAN_CLI_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "cli.h"

size_t chunk_items_for(const stream_options *s, const input_file *in, size_t item_size,
                       size_t widest, int buffers, int on_gpu)
{
    size_t bytes = on_gpu ? (size_t)256 << 20 : (size_t)64 << 20;
#ifdef DLSCAN_CLI_HAVE_CUDA
    size_t free_bytes = 0, total_bytes = 0;
    if (on_gpu && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess &&
        free_bytes / (size_t)buffers < bytes)
        bytes = free_bytes / (size_t)buffers;
#else
    (void)buffers;
#endif
    size_t items = s->chunk_items ? (size_t)s->chunk_items : bytes / widest;
    if (in->size >= 0) {
        const size_t most = s->text ? (size_t)in->size / 2 + 1 : (size_t)in->size / item_size;
        if (most < items)
            items = most;
    }
    return items > 0 ? items : 1;
}

/* The buffers of each kind, in one order: in, out, extra. */
static void chunk_buffers(chunk_memory *m, void **host[CHUNK_BUFFERS],
                          void **device[CHUNK_BUFFERS])
{
    host[0] = &m->host_in, host[1] = &m->host_out, host[2] = &m->host_extra;
    device[0] = &m->device_in, device[1] = &m->device_out, device[2] = &m->device_extra;
}

void chunk_memory_free(chunk_memory *m)
{
    void **host[CHUNK_BUFFERS], **device[CHUNK_BUFFERS];
    chunk_buffers(m, host, device);
#ifdef DLSCAN_CLI_HAVE_CUDA
    if (m->on_gpu) {
        for (int k = 0; k < CHUNK_BUFFERS; ++k) {
            cudaFree(*device[k]);
            if (m->pinned)
                cudaFreeHost(*host[k]), *host[k] = NULL;
        }
        cudaFree(m->carry);
    }
#endif
    for (int k = 0; k < CHUNK_BUFFERS; ++k)
        free(*host[k]);
    memset(m, 0, sizeof *m);
}

int chunk_memory_alloc(chunk_memory *m, int on_gpu, size_t items, size_t in_size,
                              size_t out_size, size_t extra_bytes)
{
    memset(m, 0, sizeof *m);
    m->on_gpu = on_gpu;
    m->carry = m->host_carry;
    void **host[CHUNK_BUFFERS], **device[CHUNK_BUFFERS];
    chunk_buffers(m, host, device);
    const size_t bytes[CHUNK_BUFFERS] = {items * in_size, items * out_size, extra_bytes};
    const size_t all = bytes[0] + bytes[1] + bytes[2];
#ifdef DLSCAN_CLI_HAVE_CUDA
    if (on_gpu) {
        m->carry = NULL;
        cudaError_t error = cudaMalloc(&m->carry, CHUNK_CARRY_BYTES);
        for (int k = 0; k < CHUNK_BUFFERS && error == cudaSuccess; ++k)
            if (bytes[k])
                error = cudaMalloc(device[k], bytes[k]);
        if (error != cudaSuccess) {
            (void)cudaGetLastError();
            chunk_memory_free(m);
            return fail(STATUS_FAILED, "cudaMalloc of %zu bytes for a chunk failed: %s", all,
                        cudaGetErrorString(error));
        }
        /* Pinned host memory copies faster; plain memory will do where it runs out. */
        m->pinned = 1;
        for (int k = 0; k < CHUNK_BUFFERS && m->pinned; ++k)
            if (bytes[k] && cudaMallocHost(host[k], bytes[k]) != cudaSuccess)
                m->pinned = 0;
        if (!m->pinned) {
            (void)cudaGetLastError();
            for (int k = 0; k < CHUNK_BUFFERS; ++k)
                cudaFreeHost(*host[k]), *host[k] = NULL;
        }
    }
#endif
    if (!m->pinned)
        for (int k = 0; k < CHUNK_BUFFERS; ++k)
            if (bytes[k] && !(*host[k] = malloc(bytes[k]))) {
                chunk_memory_free(m);
                return fail(STATUS_FAILED, "out of memory: %zu bytes of host memory", all);
            }
    return STATUS_OK;
}

void *chunk_working(const chunk_memory *m, int buffer)
{
    void **host[CHUNK_BUFFERS], **device[CHUNK_BUFFERS];
    chunk_buffers((chunk_memory *)m, host, device);
    return m->on_gpu ? *device[buffer] : *host[buffer];
}

int chunk_copy(chunk_memory *m, int buffer, int to_device, size_t bytes)
{
#ifdef DLSCAN_CLI_HAVE_CUDA
    if (m->on_gpu && bytes) {
        void **host[CHUNK_BUFFERS], **device[CHUNK_BUFFERS];
        chunk_buffers(m, host, device);
        void *host_buffer = *host[buffer], *device_buffer = *device[buffer];
        const cudaError_t error =
            to_device ? cudaMemcpy(device_buffer, host_buffer, bytes, cudaMemcpyHostToDevice)
                      : cudaMemcpy(host_buffer, device_buffer, bytes, cudaMemcpyDeviceToHost);
        if (error != cudaSuccess)
            return fail(STATUS_FAILED, "cudaMemcpy %s the GPU failed: %s",
                        to_device ? "to" : "from", cudaGetErrorString(error));
    }
#else
    (void)m, (void)buffer, (void)to_device, (void)bytes;
#endif
    return STATUS_OK;
}

int chunk_carry(chunk_memory *m, void *value, size_t size)
{
#ifdef DLSCAN_CLI_HAVE_CUDA
    if (m->on_gpu) {
        const cudaError_t error = cudaMemcpy(value, m->carry, size, cudaMemcpyDeviceToHost);
        if (error != cudaSuccess)
            return fail(STATUS_FAILED, "the call or the copy back failed: %s",
                        cudaGetErrorString(error));
        return STATUS_OK;
    }
#endif
    memcpy(value, m->carry, size);
    return STATUS_OK;
}
