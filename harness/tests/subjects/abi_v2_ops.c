/* A C subject for the harness tests of the version-2 operations' C
 * boundary (not of their meaning): tpb_validate_stream answers
 * "short_group" at index = the stream's bundle count for every stream, and
 * tpb_lower first asks for a 70000-byte buffer (TPB_BUFFER_TOO_SMALL; the
 * worker's first one is 65536), then writes a rejection naming instruction 0
 * (for an IR text that starts {"under": at once, only its first 10 bytes,
 * with the whole length reported: an under-written answer).
 * -DBAD_TABLES makes tpb_subject_lut_tables set an undefined bit (the
 * library must not load). */
#include <stdio.h>
#include <string.h>

#include "tpb_subject.h"

uint32_t tpb_subject_abi_version(void) { return 2; }
const char *tpb_subject_name(void) { return "abi-v2-ops"; }
uint32_t tpb_subject_capabilities(void) {
    return TPB_CAP_VALIDATE_STREAM | TPB_CAP_LOWER | TPB_CAP_LUT;
}
uint32_t tpb_subject_lut_tables(void) {
#ifdef BAD_TABLES
    return TPB_LUT_ALU_OP | (1u << 12);
#else
    return TPB_LUT_ALU_OP;
#endif
}
tpb_status tpb_subject_init(const char *arch) {
    (void)arch;
    return TPB_OK;
}

tpb_status tpb_lut(const char *table, uint32_t input, uint32_t *wire, const char **refused) {
    (void)table;
    (void)input;
    *wire = 0;
    *refused = NULL;
    return TPB_OK;
}

tpb_status tpb_validate_stream(const uint8_t *bytes, size_t len, const char **error,
                               size_t *index) {
    (void)bytes;
    *error = "short_group";
    *index = len / 64;
    return TPB_OK;
}

tpb_status tpb_lower(const char *ir, size_t ir_len, char *out, size_t cap, size_t *len) {
    static const char answer[] = "{\"error\":\"duplicate_rank\",\"instruction\":0}";
    if (ir_len >= 8 && memcmp(ir, "{\"under\"", 8) == 0) {
        memcpy(out, answer, 10);
        *len = sizeof answer - 1;
        return TPB_OK;
    }
    if (cap < 70000) {
        *len = 70000;
        return TPB_BUFFER_TOO_SMALL;
    }
    memcpy(out, answer, sizeof answer - 1);
    *len = sizeof answer - 1;
    return TPB_OK;
}
