/*
 * disturb.cu: a kernel that keeps some SMs busy for a while, for tests that need the
 * scheduling of another kernel disturbed (the determinism test runs it on a second stream
 * while scans run).
 */
#include <cuda_runtime.h>
#include <stdint.h>

/* Each block spins until `nanoseconds` have passed on the GPU's global timer. */
__global__ void test_disturb_kernel(uint64_t nanoseconds)
{
    uint64_t start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(200);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
}

extern "C" int test_disturb(cudaStream_t stream, unsigned blocks, unsigned threads,
                            unsigned long long nanoseconds)
{
    test_disturb_kernel<<<blocks, threads, 0, stream>>>(nanoseconds);
    return (int)cudaGetLastError();
}
