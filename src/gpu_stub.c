/*
 * gpu_stub.c: the GPU backend of a build without CUDA (meson -Dgpu=disabled): there is
 * no device, and no pointer is device memory. CPU handles work as usual.
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
