/*
 * handles.c: the handles behind the Python calls, one per thread and device (a dlscan handle
 * is used by one thread at a time), created on a thread's first call for that device and
 * destroyed when the thread ends; and, in builds with the GPU backend (DLPY_GPU), the CUDA
 * devices and streams a call runs on.
 */
#include "binding.h" /* Python.h first, as Python asks */

#include <pthread.h>

#ifdef DLPY_GPU
#include <cuda_runtime_api.h>
#endif

enum { DLPY_MAX_DEVICES = 64 };

typedef struct dlpy_thread_handles {
    dlscan_handle_t cpu;
    dlscan_handle_t gpu[DLPY_MAX_DEVICES];
} dlpy_thread_handles;

static _Thread_local dlpy_thread_handles *dlpy_this_thread;
static pthread_key_t dlpy_thread_key; /* its destructor frees a thread's handles at its end */
static pthread_once_t dlpy_key_once = PTHREAD_ONCE_INIT;

static void dlpy_free_thread_handles(void *p)
{
    dlpy_thread_handles *t = p;
    dlscan_destroy(t->cpu);
    for (int d = 0; d < DLPY_MAX_DEVICES; ++d)
        dlscan_destroy(t->gpu[d]);
    free(t);
}

static void dlpy_make_key(void) { pthread_key_create(&dlpy_thread_key, dlpy_free_thread_handles); }

static dlpy_thread_handles *dlpy_thread(void)
{
    if (dlpy_this_thread)
        return dlpy_this_thread;
    pthread_once(&dlpy_key_once, dlpy_make_key);
    dlpy_thread_handles *t = calloc(1, sizeof *t);
    if (!t) {
        PyErr_NoMemory();
        return NULL;
    }
    pthread_setspecific(dlpy_thread_key, t);
    return dlpy_this_thread = t;
}

#ifdef DLPY_GPU

/* A failed CUDA call as dlscan.Error with DLSCAN_ERROR_CUDA, as the library reports its own. */
static int dlpy_cuda_failed(cudaError_t error, const char *what, const char *func)
{
    char message[256];
    snprintf(message, sizeof message, "%s failed: %s", what, cudaGetErrorString(error));
    dlpy_raise_status(DLSCAN_ERROR_CUDA, message, func);
    return -1;
}

dlscan_handle_t dlpy_handle(const dlpy_place *place, const char *func, int *previous_device)
{
    *previous_device = -1;
    dlpy_thread_handles *t = dlpy_thread();
    if (!t)
        return NULL;
    if (place->device == DLPY_HOST) {
        if (!t->cpu) {
            const dlscan_status status = dlscan_create_cpu(&t->cpu, 0);
            if (status != DLSCAN_SUCCESS)
                return dlpy_raise_status(status, NULL, func), NULL;
        }
        return t->cpu;
    }
    if (place->device >= DLPY_MAX_DEVICES) {
        PyErr_Format(PyExc_ValueError, "dlscan.%s: CUDA device %d: dlscan takes devices 0 .. %d",
                     func, place->device, DLPY_MAX_DEVICES - 1);
        return NULL;
    }
    /* The handle belongs to the array's device, which the call must find current. */
    int current;
    cudaError_t error = cudaGetDevice(&current);
    if (error != cudaSuccess)
        return dlpy_cuda_failed(error, "cudaGetDevice", func), NULL;
    if (current != place->device) {
        if ((error = cudaSetDevice(place->device)) != cudaSuccess)
            return dlpy_cuda_failed(error, "cudaSetDevice", func), NULL;
        *previous_device = current;
    }
    if (!t->gpu[place->device]) {
        const dlscan_status status = dlscan_create(&t->gpu[place->device]);
        if (status != DLSCAN_SUCCESS) {
            dlpy_restore_device(*previous_device);
            return dlpy_raise_status(status, NULL, func), NULL;
        }
    }
    return t->gpu[place->device];
}

void dlpy_restore_device(int previous_device)
{
    if (previous_device >= 0)
        cudaSetDevice(previous_device);
}

int dlpy_pointer_device(const void *p, const char *func, const char *name)
{
    if (!p) { /* an empty array's: the current device */
        int device;
        const cudaError_t error = cudaGetDevice(&device);
        return error == cudaSuccess ? device : dlpy_cuda_failed(error, "cudaGetDevice", func);
    }
    struct cudaPointerAttributes attributes;
    const cudaError_t error = cudaPointerGetAttributes(&attributes, p);
    if (error != cudaSuccess) {
        cudaGetLastError(); /* not sticky: clear it */
        return dlpy_cuda_failed(error, "cudaPointerGetAttributes", func);
    }
    if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged) {
        PyErr_Format(PyExc_ValueError,
                     "dlscan.%s: %s has a __cuda_array_interface__ whose data is not device "
                     "memory",
                     func, name);
        return -1;
    }
    return attributes.device;
}

int dlpy_wait_for(const dlpy_place *place, uintptr_t producer, const char *func)
{
    if (producer == place->handle)
        return 0;
    /* The event belongs to the arrays' device, which may not be the current one. */
    int current;
    cudaError_t error = cudaGetDevice(&current);
    if (error == cudaSuccess && current != place->device)
        error = cudaSetDevice(place->device);
    if (error != cudaSuccess)
        return dlpy_cuda_failed(error, "selecting the arrays' device", func);
    cudaEvent_t event;
    if ((error = cudaEventCreateWithFlags(&event, cudaEventDisableTiming)) == cudaSuccess) {
        if ((error = cudaEventRecord(event, (cudaStream_t)producer)) == cudaSuccess)
            error = cudaStreamWaitEvent((cudaStream_t)place->handle, event, 0);
        cudaEventDestroy(event); /* freed once the wait is done */
    }
    if (current != place->device)
        cudaSetDevice(current);
    return error == cudaSuccess ? 0 : dlpy_cuda_failed(error, "ordering the streams", func);
}

#else /* a build without the GPU backend: every array is host memory */

dlscan_handle_t dlpy_handle(const dlpy_place *place, const char *func, int *previous_device)
{
    *previous_device = -1;
    dlpy_thread_handles *t = dlpy_thread();
    if (!t)
        return NULL;
    if (place->device != DLPY_HOST) /* dlpy_array_take refuses device arrays first */
        return dlpy_raise_status(DLSCAN_ERROR_NO_DEVICE, NULL, func), NULL;
    if (!t->cpu) {
        const dlscan_status status = dlscan_create_cpu(&t->cpu, 0);
        if (status != DLSCAN_SUCCESS)
            return dlpy_raise_status(status, NULL, func), NULL;
    }
    return t->cpu;
}

void dlpy_restore_device(int previous_device) { (void)previous_device; }

int dlpy_pointer_device(const void *p, const char *func, const char *name)
{
    (void)p;
    char message[200];
    snprintf(message, sizeof message,
             "%s is a CUDA array, and this dlscan was built without the GPU backend (no nvcc "
             "when it was built)",
             name);
    dlpy_raise_status(DLSCAN_ERROR_NO_DEVICE, message, func);
    return -1;
}

int dlpy_wait_for(const dlpy_place *place, uintptr_t producer, const char *func)
{
    (void)place, (void)producer, (void)func;
    return 0;
}

#endif

int dlpy_call_stream(dlpy_place *place, PyObject *like, uintptr_t producer, int has_producer)
{
    if (place->stream_known)
        return 0;
    place->stream_known = 1;
    place->handle = 0;
    PyObject *handle = NULL;
    if (place->stream) {
        if (PyLong_Check(place->stream)) {
            handle = Py_NewRef(place->stream);
        } else if (!(handle = PyObject_CallOneArg(dlpy_stream_helper, place->stream))) {
            return -1;
        }
    } else if (has_producer) {
        place->handle = producer;
        return 0;
    } else {
        PyObject *device = PyLong_FromLong(place->device);
        if (!device)
            return -1;
        handle = PyObject_CallFunctionObjArgs(dlpy_current_stream_helper, like, device, NULL);
        Py_DECREF(device);
        if (!handle)
            return -1;
        if (handle == Py_None) { /* a library without a current stream: the legacy default */
            Py_DECREF(handle);
            return 0;
        }
    }
    /* The stream protocols' numbers 1 and 2 are the legacy and per-thread default streams,
     * which are also the CUDA runtime's handles cudaStreamLegacy and cudaStreamPerThread. */
    place->handle = (uintptr_t)PyLong_AsUnsignedLongLong(handle);
    Py_DECREF(handle);
    if (PyErr_Occurred()) {
        PyErr_SetString(PyExc_TypeError, "dlscan: stream= takes a CUDA stream handle (an int) "
                                         "or a stream object of PyTorch, CuPy or Numba");
        return -1;
    }
    return 0;
}

int dlpy_set_deterministic(dlscan_handle_t h, int deterministic, const char *func)
{
    const dlscan_status status = dlscan_set_option(h, DLSCAN_OPTION_DETERMINISTIC, deterministic);
    return status == DLSCAN_SUCCESS ? 0 : (dlpy_raise(h, status, func), -1);
}
