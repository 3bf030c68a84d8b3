/*
 * peers.c: the peer exchange (dlscan_peers_create, dlscan.h): an exchange for scans across
 * ranks whose all-gather is one kernel (device/peers_kernel.cu) writing into the ranks' device
 * memory. Creation maps every rank's slots once, through the caller's exchange: each rank's
 * record (its slots' IPC handle and address, its process and host) is all-gathered, and each
 * rank maps the others' slots, within its process by the pointer, across processes by CUDA IPC.
 */
#define _POSIX_C_SOURCE 200809L /* gethostname */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "peers.h"

/* What each rank tells the others at creation. */
typedef struct dl_peer_record {
    cudaIpcMemHandle_t handle; /* its slots' allocation, where `ipc` */
    uint64_t address;          /* the slots' address in its process */
    uint64_t process;          /* dl_process_token() */
    int32_t device;
    int32_t ipc;               /* 1: cudaIpcGetMemHandle gave `handle` */
    char host[48];             /* the host's boot id, or its name */
} dl_peer_record;

struct dlscan_peers {
    int rank, ranks, device;
    dl_peer_slot *own;          /* one allocation: the slots (2 x ranks), the count of calls, the table */
    unsigned long long *calls;
    dl_peer_slot **table;       /* device memory: each rank's slots, as this rank maps them */
    dl_peer_slot **mapped;      /* host memory: the same pointers */
    unsigned char *opened;      /* 1 where mapped[k] came from cudaIpcOpenMemHandle */
};

/* A token of this process: its id and where its statics lie (which ASLR moves), so that two
 * processes of one host with the same id in different namespaces still differ. */
static uint64_t dl_process_token(void)
{
    static const char here = 0;
    return (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)&here;
}

/* The host's boot id (/proc/sys/kernel/random/boot_id), or its name. */
static void dl_host_id(char *id, size_t size)
{
    memset(id, 0, size);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        const int ok = fgets(id, (int)size, f) != NULL;
        fclose(f);
        if (ok)
            return;
    }
    if (gethostname(id, size - 1) != 0)
        snprintf(id, size, "unknown host");
}

/* An all-gather through `bootstrap` of `bytes` a rank, from and into host memory, through `d`
 * (the handle's scratch, of ranks + 1 values: the exchange of a GPU handle gathers device
 * memory), waited for. */
static dlscan_status dl_peers_gather(dlscan_handle_t h, const dlscan_exchange *bootstrap, unsigned char *d,
                                     const void *mine, void *all, size_t bytes, cudaStream_t stream)
{
    cudaError_t error;
    char why[256] = "";
    if ((error = cudaMemcpyAsync(d, mine, bytes, cudaMemcpyHostToDevice, stream)) != cudaSuccess)
        return dl_cuda_fail(h, error, "dlscan_peers_create: cudaMemcpyAsync");
    if (bootstrap->all_gather(bootstrap->context, d, d + bytes, bytes, 1, stream, why, sizeof why) != 0)
        return dl_fail(h, DLSCAN_ERROR_EXCHANGE, "dlscan_peers_create: the bootstrap exchange's all-gather failed: %s",
                       why[0] ? why : "(it gave no reason)");
    if ((error = cudaMemcpyAsync(all, d + bytes, bytes * (size_t)bootstrap->ranks, cudaMemcpyDeviceToHost, stream)) !=
            cudaSuccess ||
        (error = cudaStreamSynchronize(stream)) != cudaSuccess)
        return dl_cuda_fail(h, error, "dlscan_peers_create: copying the ranks' records");
    return DLSCAN_SUCCESS;
}

void dlscan_peers_destroy(dlscan_peers_t peers)
{
    if (!peers)
        return;
    int current = -1;
    const int switched = cudaGetDevice(&current) == cudaSuccess && current != peers->device &&
                         cudaSetDevice(peers->device) == cudaSuccess;
    for (int k = 0; peers->mapped && peers->opened && k < peers->ranks; ++k)
        if (peers->opened[k])
            cudaIpcCloseMemHandle(peers->mapped[k]);
    cudaFree(peers->own);
    (void)cudaGetLastError();
    if (switched)
        cudaSetDevice(current);
    free(peers->mapped);
    free(peers->opened);
    free(peers);
}

/* Maps rank k's slots from its record; 0, or non-zero with why. */
static int dl_peers_map(dlscan_peers_t p, int k, const dl_peer_record *mine, const dl_peer_record *theirs, char *why,
                        size_t why_size)
{
    if (strncmp(mine->host, theirs->host, sizeof mine->host) != 0) {
        snprintf(why, why_size, "rank %d is on another host", k);
        return 1;
    }
    if (theirs->process == mine->process) {
        if (theirs->device != mine->device) {
            int can = 0;
            cudaError_t error = cudaDeviceCanAccessPeer(&can, mine->device, theirs->device);
            if (error == cudaSuccess && !can) {
                snprintf(why, why_size, "device %d cannot reach device %d's memory (rank %d)", mine->device,
                         theirs->device, k);
                return 1;
            }
            if (error == cudaSuccess)
                error = cudaDeviceEnablePeerAccess(theirs->device, 0);
            if (error == cudaErrorPeerAccessAlreadyEnabled)
                error = cudaSuccess, (void)cudaGetLastError();
            if (error != cudaSuccess) {
                snprintf(why, why_size, "peer access from device %d to device %d (rank %d): %s", mine->device,
                         theirs->device, k, cudaGetErrorString(error));
                (void)cudaGetLastError();
                return 1;
            }
        }
        p->mapped[k] = (dl_peer_slot *)(uintptr_t)theirs->address;
        return 0;
    }
    if (!theirs->ipc) {
        snprintf(why, why_size, "rank %d's process could not export its memory (cudaIpcGetMemHandle)", k);
        return 1;
    }
    void *at = NULL;
    const cudaError_t error = cudaIpcOpenMemHandle(&at, theirs->handle, cudaIpcMemLazyEnablePeerAccess);
    if (error != cudaSuccess) {
        snprintf(why, why_size, "cudaIpcOpenMemHandle of rank %d's memory: %s", k, cudaGetErrorString(error));
        (void)cudaGetLastError();
        return 1;
    }
    p->mapped[k] = at;
    p->opened[k] = 1;
    return 0;
}

/* dlscan_peers_create's work on p (its rank, ranks and host arrays made): the slots, the records'
 * gathers, the mapping, the table. `records` and `failed` hold `ranks` entries each. */
static dlscan_status dl_peers_make(dlscan_handle_t h, const dlscan_exchange *bootstrap, cudaStream_t stream,
                                   dlscan_peers_t p, dl_peer_record *records, int32_t *failed)
{
    const int ranks = p->ranks;
    /* The slots, the count of calls and the table, zeroed before any rank can write them. */
    const size_t slots = 2 * (size_t)ranks * sizeof(dl_peer_slot), table = (size_t)ranks * sizeof(dl_peer_slot *);
    cudaError_t error = cudaGetDevice(&p->device);
    if (error == cudaSuccess)
        error = cudaMalloc((void **)&p->own, slots + 8 + table);
    if (error != cudaSuccess)
        return dl_cuda_fail(h, error, "dlscan_peers_create: allocating the rank's slots");
    /* on the handle's device (the current one) */
    dlscan_status status = h->backend->check_range(h, p->own, slots + 8 + table, "the peers' slots");
    if (status != DLSCAN_SUCCESS)
        return status;
    if ((error = cudaMemsetAsync(p->own, 0, slots + 8 + table, stream)) != cudaSuccess ||
        (error = cudaStreamSynchronize(stream)) != cudaSuccess)
        return dl_cuda_fail(h, error, "dlscan_peers_create: zeroing the rank's slots");
    p->calls = (unsigned long long *)((char *)p->own + slots);
    p->table = (dl_peer_slot **)((char *)p->own + slots + 8);
    /* The handle's scratch, for the records' gathers here and a call's values (across.c), grown
     * now and not during a call: a growth frees memory, which waits for the device. */
    const size_t values = DL_PEER_VALUE_BYTES * (1 + 2 * (size_t)ranks),
                 records_bytes = sizeof(dl_peer_record) * (1 + (size_t)ranks);
    unsigned char *scratch = NULL;
    if ((status = h->backend->scratch(h, values > records_bytes ? values : records_bytes, stream,
                                      (void **)&scratch)) != DLSCAN_SUCCESS)
        return status;

    /* Every rank's record; each maps the others; every rank learns who could not. */
    dl_peer_record mine;
    memset(&mine, 0, sizeof mine);
    mine.ipc = cudaIpcGetMemHandle(&mine.handle, p->own) == cudaSuccess;
    (void)cudaGetLastError();
    mine.address = (uint64_t)(uintptr_t)p->own;
    mine.process = dl_process_token();
    mine.device = p->device;
    dl_host_id(mine.host, sizeof mine.host);
    status = dl_peers_gather(h, bootstrap, scratch, &mine, records, sizeof mine, stream);
    char why[200] = "";
    int32_t mine_failed = 0;
    for (int k = 0; status == DLSCAN_SUCCESS && k < ranks && !mine_failed; ++k)
        if (k != p->rank && dl_peers_map(p, k, &mine, &records[k], why, sizeof why) != 0)
            mine_failed = k + 1;
    p->mapped[p->rank] = p->own;
    if (status == DLSCAN_SUCCESS)
        status = dl_peers_gather(h, bootstrap, scratch, &mine_failed, failed, sizeof mine_failed, stream);
    for (int k = 0; status == DLSCAN_SUCCESS && k < ranks; ++k)
        if (failed[k])
            status = k == p->rank ? dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                                            "dlscan_peers_create: rank %d cannot map the others' memory: %s", k, why)
                                  : dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED,
                                            "dlscan_peers_create: rank %d cannot map rank %d's memory (its own "
                                            "dlscan_last_error says why)",
                                            k, failed[k] - 1);
    if (status == DLSCAN_SUCCESS &&
        ((error = cudaMemcpyAsync(p->table, p->mapped, table, cudaMemcpyHostToDevice, stream)) != cudaSuccess ||
         (error = cudaStreamSynchronize(stream)) != cudaSuccess))
        status = dl_cuda_fail(h, error, "dlscan_peers_create: copying the table of slots");
    return status;
}

dlscan_status dlscan_peers_create(dlscan_handle_t h, const dlscan_exchange *bootstrap, cudaStream_t stream,
                                  dlscan_peers_t *peers)
{
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    dlscan_status status = dl_check_peers(h, bootstrap, peers);
    if (status != DLSCAN_SUCCESS)
        return status;
    if (bootstrap->ranks > DL_PEERS_THREADS)
        return dl_fail(h, DLSCAN_ERROR_NOT_SUPPORTED, "dlscan_peers_create: %d ranks, at most %d", bootstrap->ranks,
                       DL_PEERS_THREADS);
    const int ranks = bootstrap->ranks;
    dlscan_peers_t p = calloc(1, sizeof *p);
    dl_peer_record *records = calloc((size_t)ranks, sizeof *records);
    int32_t *failed = calloc((size_t)ranks, sizeof *failed);
    if (p) {
        p->rank = bootstrap->rank;
        p->ranks = ranks;
        p->mapped = calloc((size_t)ranks, sizeof *p->mapped);
        p->opened = calloc((size_t)ranks, 1);
    }
    status = p && p->mapped && p->opened && records && failed
                 ? dl_peers_make(h, bootstrap, stream, p, records, failed)
                 : dl_fail(h, DLSCAN_ERROR_OUT_OF_MEMORY, "dlscan_peers_create: host memory");
    free(records);
    free(failed);
    if (status != DLSCAN_SUCCESS) {
        dlscan_peers_destroy(p);
        return status;
    }
    *peers = p;
    return DLSCAN_SUCCESS;
}

static int dl_peers_all_gather(void *context, const void *send, void *recv, size_t bytes, int on_device,
                               cudaStream_t stream, char *why, size_t why_size)
{
    const dlscan_peers_t p = context;
    int current = -1;
    if (!on_device) {
        snprintf(why, why_size, "the peer exchange moves device memory: a CPU handle's ranks exchange through MPI");
        return 1;
    }
    if (bytes == 0 || bytes > DL_PEER_VALUE_BYTES) {
        snprintf(why, why_size, "the peer exchange takes values of 1 to %d bytes, not %zu", DL_PEER_VALUE_BYTES, bytes);
        return 1;
    }
    if (cudaGetDevice(&current) != cudaSuccess || current != p->device) {
        (void)cudaGetLastError();
        snprintf(why, why_size, "the peer exchange was made on device %d, and the current device is %d", p->device,
                 current);
        return 1;
    }
    const dl_peers_params params = {send, recv, (uint32_t)bytes, (uint32_t)p->rank, (uint32_t)p->ranks,
                                    (dl_peer_slot *const *)p->table, p->own, p->calls};
    const int error = dl_gpu_peers_launch(&params, stream);
    if (error != (int)cudaSuccess) {
        snprintf(why, why_size, "the peer exchange's kernel: %s", cudaGetErrorString((cudaError_t)error));
        return 1;
    }
    return 0;
}

dlscan_exchange dlscan_peers_exchange(dlscan_peers_t peers)
{
    if (!peers) {
        const dlscan_exchange none = {0, 1, dl_peers_all_gather, NULL, "peers is NULL: make them with dlscan_peers_create"};
        return none;
    }
    const dlscan_exchange exchange = {peers->rank, peers->ranks, dl_peers_all_gather, peers, NULL};
    return exchange;
}
