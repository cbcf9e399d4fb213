/*
 * reference_answers.c: prints the reference library's answers, one line per
 * input, so capi/tests/c_abi.rs can compare them with what `tpbconform`
 * prints for the same inputs (the JSON shapes must be the same).
 *
 *     reference_answers ARCH decode HEX128...   the tpb_decode text of each bundle
 *     reference_answers ARCH encode JSON...     tpb_encode of each request: the
 *                                               bundle as hex, or "refused NAME"
 *     reference_answers ARCH lower FILE         the tpb_lower text of the file
 *
 * Exit 0, or 2 with a message on a bad argument or a status other than
 * TPB_OK.
 */
#include "tpb_subject.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char text[1 << 20];

static int nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static int decode(const char *hex) {
    uint8_t b[64];
    size_t i, len = 0;
    if (strlen(hex) != 128) {
        fprintf(stderr, "not 128 hex digits: %s\n", hex);
        return 2;
    }
    for (i = 0; i < 64; i++) {
        int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            fprintf(stderr, "bad hex at %zu: %s\n", 2 * i, hex);
            return 2;
        }
        b[i] = (uint8_t)(hi * 16 + lo);
    }
    if (tpb_decode(b, text, sizeof text, &len) != TPB_OK) {
        fprintf(stderr, "tpb_decode failed on %s\n", hex);
        return 2;
    }
    printf("%.*s\n", (int)len, text);
    return 0;
}

static int encode(const char *json) {
    uint8_t out[64];
    const char *refused = NULL;
    int i;
    if (tpb_encode(json, strlen(json), out, &refused) != TPB_OK) {
        fprintf(stderr, "tpb_encode failed on %s\n", json);
        return 2;
    }
    if (refused != NULL) {
        printf("refused %s\n", refused);
        return 0;
    }
    for (i = 0; i < 64; i++) {
        printf("%02x", out[i]);
    }
    printf("\n");
    return 0;
}

static int lower(const char *path) {
    static char doc[1 << 20];
    size_t n, len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        return 2;
    }
    n = fread(doc, 1, sizeof doc, f);
    fclose(f);
    if (tpb_lower(doc, n, text, sizeof text, &len) != TPB_OK) {
        fprintf(stderr, "tpb_lower failed on %s\n", path);
        return 2;
    }
    printf("%.*s\n", (int)len, text);
    return 0;
}

int main(int argc, char **argv) {
    int i, rc = 0;
    if (argc < 4) {
        fprintf(stderr, "usage: reference_answers ARCH decode|encode|lower INPUT...\n");
        return 2;
    }
    if (tpb_subject_init(argv[1]) != TPB_OK) {
        fprintf(stderr, "tpb_subject_init(%s) failed\n", argv[1]);
        return 2;
    }
    for (i = 3; i < argc && rc == 0; i++) {
        if (strcmp(argv[2], "decode") == 0) {
            rc = decode(argv[i]);
        } else if (strcmp(argv[2], "encode") == 0) {
            rc = encode(argv[i]);
        } else if (strcmp(argv[2], "lower") == 0) {
            rc = lower(argv[i]);
        } else {
            fprintf(stderr, "unknown operation %s\n", argv[2]);
            rc = 2;
        }
    }
    return rc;
}
