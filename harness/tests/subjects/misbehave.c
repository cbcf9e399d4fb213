/* A misbehaving C subject for the harness tests: the example subject of
 * examples/subjects/custom_op.c, except that its header validator crashes
 * (-DMISBEHAVE_CRASH: SIGSEGV), hangs (-DMISBEHAVE_HANG) or returns TPB_ERROR
 * (-DMISBEHAVE_ERROR) on every bundle whose last byte is 0xEE (on every
 * bundle with -DMISBEHAVE_ALWAYS; on every bundle whose byte MISBEHAVE_AT is
 * MISBEHAVE_IS with -DMISBEHAVE_AT=off -DMISBEHAVE_IS=value, and whose byte
 * MISBEHAVE_AT2 is MISBEHAVE_IS2 too if those are given: issue 35's 1 in 256
 * crash, 1 in 65536 hang; -DMISBEHAVE_SLOW_START=ms: every start takes
 * that long). It is a version-1 library (per-bundle
 * calls only) unless -DMISBEHAVE_BATCH, which makes it version 2 with a
 * batch header validator that misbehaves the same way inside the batch
 * (with -DMISBEHAVE_UNWRITTEN too: that leaves the misbehaving bundle's
 * entry of the batch unwritten instead). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#ifndef MISBEHAVE_BATCH
#define TPB_ABI_V1
#endif
#define tpb_validate_header example_validate_header
#define tpb_validate_header_batch example_validate_header_batch
#define tpb_subject_init example_subject_init
#include "../../../examples/subjects/custom_op.c"
#undef tpb_validate_header
#undef tpb_validate_header_batch
#undef tpb_subject_init

/* -DMISBEHAVE_SLOW_START=ms: every start for a generation it serves takes
 * that long (init sleeps), as a start does on a busy machine (issue 35). */
#include <time.h>
EXPORT tpb_status tpb_subject_init(const char *arch) {
    tpb_status st = example_subject_init(arch);
#ifdef MISBEHAVE_SLOW_START
    struct timespec ts = {MISBEHAVE_SLOW_START / 1000, (MISBEHAVE_SLOW_START % 1000) * 1000000L};
    if (st == TPB_OK) nanosleep(&ts, 0);
#endif
    return st;
}

/* True for a bundle the validator misbehaves on. */
static int misbehave_on(const uint8_t *bundle) {
#if defined(MISBEHAVE_ALWAYS)
    return bundle != 0;
#elif defined(MISBEHAVE_AT) && defined(MISBEHAVE_AT2)
    return bundle[MISBEHAVE_AT] == MISBEHAVE_IS && bundle[MISBEHAVE_AT2] == MISBEHAVE_IS2;
#elif defined(MISBEHAVE_AT)
    return bundle[MISBEHAVE_AT] == MISBEHAVE_IS;
#else
    return bundle[63] == 0xEE;
#endif
}

static tpb_status misbehave(const uint8_t *bundle) {
    if (misbehave_on(bundle)) {
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
    return TPB_OK;
}

EXPORT tpb_status tpb_validate_header(const uint8_t bundle[64], const char **failed) {
    if (misbehave(bundle) != TPB_OK) return TPB_ERROR;
    return example_validate_header(bundle, failed);
}

#if defined(MISBEHAVE_BATCH) && defined(MISBEHAVE_UNWRITTEN)
/* Answers every bundle but leaves the entry of each misbehaving one
 * unwritten (whatever the buffer held stays). */
EXPORT tpb_status tpb_validate_header_batch(const uint8_t *bundles, size_t n, uint16_t *verdicts) {
    for (size_t i = 0; i < n; i++) {
        if (misbehave_on(bundles + 64 * i)) continue;
        tpb_status s = example_validate_header_batch(bundles + 64 * i, 1, verdicts + i);
        if (s != TPB_OK) return s;
    }
    return TPB_OK;
}
#elif defined(MISBEHAVE_BATCH)
EXPORT tpb_status tpb_validate_header_batch(const uint8_t *bundles, size_t n, uint16_t *verdicts) {
    for (size_t i = 0; i < n; i++)
        if (misbehave(bundles + 64 * i) != TPB_OK) return TPB_ERROR;
    return example_validate_header_batch(bundles, n, verdicts);
}
#endif
