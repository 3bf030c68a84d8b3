/*
 * gpu_stub.c: the GPU backend of a build without CUDA (meson -Dgpu=disabled): there is
 * no device, no pointer is device memory, and no operator is compiled. CPU handles work as
 * usual.
 */
#include "internal.h"

dlscan_status dl_gpu_backend_init(dlscan_handle_t h)
{
    return dl_fail(h, DLSCAN_ERROR_NO_DEVICE, "dlscan was built without CUDA (-Dgpu=disabled)");
}

int dl_is_device_pointer(const void *p)
{
    (void)p;
    return 0;
}

dlscan_status dl_jit_build(dlscan_handle_t h, struct dlscan_operator *op, int program)
{
    (void)op, (void)program;
    return dl_fail(h, DLSCAN_ERROR_NO_DEVICE, "dlscan was built without CUDA (-Dgpu=disabled)");
}

void dl_jit_free(struct dlscan_operator *op) { (void)op; }

int dl_jit_launch(const struct dlscan_operator *op, const dl_user_params *params, int left_fold,
                  int dependent_launch, cudaStream_t stream)
{
    (void)op, (void)params, (void)left_fold, (void)dependent_launch, (void)stream;
    return 1; /* not reached: no GPU handle exists */
}

int dl_jit_launch_columns(const struct dlscan_operator *op, const dl_user_column_params *params,
                          int dependent_launch, cudaStream_t stream)
{
    (void)op, (void)params, (void)dependent_launch, (void)stream;
    return 1; /* not reached */
}

/* The peer exchange (dlscan.h, src/peers.c) needs a GPU handle, which this build cannot make:
 * the checks refuse every handle it has. */
dlscan_status dlscan_peers_create(dlscan_handle_t h, const dlscan_exchange *bootstrap, cudaStream_t stream,
                                  dlscan_peers_t *peers)
{
    (void)stream;
    if (!h)
        return DLSCAN_ERROR_INVALID_HANDLE;
    h->last_error[0] = '\0';
    const dlscan_status status = dl_check_peers(h, bootstrap, peers);
    return status != DLSCAN_SUCCESS ? status
                                    : dl_fail(h, DLSCAN_ERROR_NO_DEVICE, "dlscan was built without CUDA (-Dgpu=disabled)");
}

dlscan_exchange dlscan_peers_exchange(dlscan_peers_t peers)
{
    (void)peers;
    const dlscan_exchange none = {0, 1, NULL, NULL, "peers is NULL: make them with dlscan_peers_create"};
    return none;
}

void dlscan_peers_destroy(dlscan_peers_t peers) { (void)peers; }
