/* A C subject for the harness tests that implements two LUT tables only,
 * the compiler's events tables of SPEC §6.5 (BIR wait mode 0, 1, 2 ->
 * 07 05 85; BIR update mode 0..5 -> 11 15 17 13 14 19; past a table:
 * out_of_range), declared with tpb_subject_lut_tables (ABI version 2).
 * -DCRASHING_HEADER: it also declares validate_header, which crashes
 * (SIGSEGV) on every call (issue 35: given up on that operation only, the
 * tables are still judged). */
#include <string.h>

#include "tpb_subject.h"

static const uint8_t WAIT[] = {0x07, 0x05, 0x85};
static const uint8_t UPDATE[] = {0x11, 0x15, 0x17, 0x13, 0x14, 0x19};

uint32_t tpb_subject_abi_version(void) { return 2; }
const char *tpb_subject_name(void) { return "some-tables-c"; }
#ifndef CRASHING_HEADER
uint32_t tpb_subject_capabilities(void) { return TPB_CAP_LUT; }
#else
uint32_t tpb_subject_capabilities(void) { return TPB_CAP_LUT | TPB_CAP_VALIDATE_HEADER; }
tpb_status tpb_validate_header(const uint8_t bundle[64], const char **failed) {
    volatile int *volatile p = 0;
    (void)bundle;
    (void)failed;
    *p = 1;
    return TPB_ERROR;
}
#endif
uint32_t tpb_subject_lut_tables(void) { return TPB_LUT_WAIT_MODE | TPB_LUT_UPDATE_MODE; }
tpb_status tpb_subject_init(const char *arch) {
    (void)arch;
    return TPB_OK;
}

tpb_status tpb_lut(const char *table, uint32_t input, uint32_t *wire, const char **refused) {
    const uint8_t *t;
    size_t n;
    if (strcmp(table, "wait_mode") == 0) {
        t = WAIT;
        n = sizeof WAIT;
    } else if (strcmp(table, "update_mode") == 0) {
        t = UPDATE;
        n = sizeof UPDATE;
    } else {
        return TPB_UNSUPPORTED;
    }
    *refused = NULL;
    if (input >= n) {
        *refused = "out_of_range";
        return TPB_OK;
    }
    *wire = t[input];
    return TPB_OK;
}
