/* lut_batch.c: the bench's C subject (scripts/bench/lut_subject.c, which
 * exports tpb_lut and tpb_lut_batch), except that its tpb_lut_batch crashes
 * (-DLUT_CRASH: SIGSEGV), hangs (-DLUT_HANG) or leaves the answer unwritten
 * (-DLUT_DROP) for ordinal 0xEE00EE. tpb_lut itself is never wrong, so a
 * fault named on that ordinal shows the batch entry point was the one run. */
#define tpb_lut_batch bench_lut_batch
#include "../../../scripts/bench/lut_subject.c"
#undef tpb_lut_batch

#define PLANTED 0xEE00EEu

EXPORT tpb_status tpb_lut_batch(const char *table, const uint32_t *inputs, size_t n,
                                uint32_t *wires, const char **refused) {
    for (size_t i = 0; i < n; i++) {
        if (inputs[i] == PLANTED) {
#if defined(LUT_CRASH)
            volatile int *volatile p = 0;
            *p = 1;
#elif defined(LUT_HANG)
            for (volatile int spin = 1; spin;) {
            }
#elif defined(LUT_DROP)
            continue; /* the entry is left as the harness gave it */
#endif
        }
        tpb_status s = bench_lut_batch(table, inputs + i, 1, wires + i, refused + i);
        if (s != TPB_OK) return s;
    }
    return TPB_OK;
}
