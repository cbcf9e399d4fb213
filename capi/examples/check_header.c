/*
 * check_header.c: calls the reference CUSTOM_OP header validator (SPEC §3)
 * of libtpb_reference.so through include/tpb_subject.h on one bundle.
 *
 *     check_header HEX128 [v2|v3|v4|v5]
 *
 * Prints "valid" or the first failing predicate's SPEC name. Exit 0 valid,
 * 1 invalid, 2 bad usage (the message names the bad argument).
 */
#include "tpb_subject.h"

#include <stdio.h>
#include <string.h>

static int nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int main(int argc, char **argv) {
    uint8_t bundle[64];
    const char *arch = argc > 2 ? argv[2] : "v2";
    const char *failed = NULL;
    size_t i;
    if (argc < 2 || argc > 3 || strlen(argv[1]) != 128) {
        fprintf(stderr, "usage: check_header HEX128 [v2|v3|v4|v5] (one bundle, 128 hex digits)\n");
        return 2;
    }
    for (i = 0; i < 64; i++) {
        int hi = nibble(argv[1][2 * i]);
        int lo = nibble(argv[1][2 * i + 1]);
        if (hi < 0 || lo < 0) {
            fprintf(stderr, "check_header: not a hex digit at offset %zu of the bundle\n", 2 * i);
            return 2;
        }
        bundle[i] = (uint8_t)(hi * 16 + lo);
    }
    if (tpb_subject_init(arch) != TPB_OK) {
        fprintf(stderr, "check_header: unknown generation \"%s\" (v2, v3, v4, v5)\n", arch);
        return 2;
    }
    if (tpb_validate_header(bundle, &failed) != TPB_OK) {
        fprintf(stderr, "check_header: tpb_validate_header failed\n");
        return 2;
    }
    puts(failed == NULL ? "valid" : failed);
    return failed == NULL ? 0 : 1;
}
