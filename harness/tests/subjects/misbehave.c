/* A misbehaving C subject for the harness tests: the example subject of
 * examples/subjects/custom_op.c, except that its header validator crashes
 * (-DMISBEHAVE_CRASH: SIGSEGV), hangs (-DMISBEHAVE_HANG) or returns TPB_ERROR
 * (-DMISBEHAVE_ERROR) on every bundle whose last byte is 0xEE (on every
 * bundle with -DMISBEHAVE_ALWAYS). */
#define tpb_validate_header example_validate_header
#include "../../../examples/subjects/custom_op.c"
#undef tpb_validate_header

EXPORT tpb_status tpb_validate_header(const uint8_t bundle[64], const char **failed) {
#if defined(MISBEHAVE_ALWAYS)
    if (bundle) {
#else
    if (bundle[63] == 0xEE) {
#endif
#if defined(MISBEHAVE_CRASH)
        volatile int *volatile p = 0;
        *p = 1;
#elif defined(MISBEHAVE_HANG)
        for (volatile int spin = 1; spin;) {
        }
#else
        return TPB_ERROR;
#endif
    }
    return example_validate_header(bundle, failed);
}
