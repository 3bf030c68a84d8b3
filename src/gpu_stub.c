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
