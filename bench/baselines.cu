/* baselines.cu: the seed algorithms as bench variants (to be written). */
#include "variants.h"

extern "C" const bench_variant *bench_baseline_variants(int *count)
{
    *count = 0;
    return nullptr;
}
