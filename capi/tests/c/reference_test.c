/*
 * reference_test.c: calls every function of include/tpb_subject.h in the
 * reference library (libtpb_reference.so, crate tpb-capi) through the
 * header, as a compiler's own unit tests would, and checks each answer
 * against a value SPEC.md (or docs/subject-protocol.md) states. Built as C
 * and as C++ by capi/tests/c_abi.rs.
 *
 * Exit 0 and "reference_test: N checks passed" on success; otherwise each
 * failed check is printed with its line and the exit status is 1.
 */
#include "tpb_subject.h"

#include <stdio.h>
#include <string.h>

static int checks = 0;
static int failures = 0;

#define CHECK(cond)                                                        \
    do {                                                                   \
        checks++;                                                          \
        if (!(cond)) {                                                     \
            failures++;                                                    \
            fprintf(stderr, "reference_test.c:%d: failed: %s\n", __LINE__, \
                    #cond);                                                \
        }                                                                  \
    } while (0)

/* Name equality, NULL-safe: both NULL, or both the same text. */
static int same(const char *a, const char *b) {
    if (a == NULL || b == NULL) {
        return a == b;
    }
    return strcmp(a, b) == 0;
}

/* A CUSTOM_OP header (SPEC §3) that passes every predicate: opcode 0x85,
 * inst_word_len 0x10, events NONE/NONE, num_payloads 3, function_id 1,
 * num_arguments 1, no scratch space, reserved bytes zero. */
static void valid_header(uint8_t b[64]) {
    memset(b, 0, 64);
    b[0x00] = 0x85;
    b[0x01] = 0x10;
    b[0x0C] = 3;
    b[0x0E] = 1;
    b[0x0F] = 1;
}

/* A CUSTOM_OP payload (SPEC §4): opcode 0x86, inst_word_len 0x10,
 * arg_type TENSOR (1), bytes 0x0C..0x0E zero. */
static void valid_payload(uint8_t b[64]) {
    memset(b, 0, 64);
    b[0x00] = 0x86;
    b[0x01] = 0x10;
    b[0x0F] = 1;
}

/* A TensorCompletion 0xDE (SPEC §5, §5.2) with the canonical events band
 * 05 07 13 07 (SPEC §6.5), semaphore_value 1, handle 0x12345678 and
 * ap_byte 42. */
static void tensor_completion(uint8_t b[64]) {
    memset(b, 0, 64);
    b[0x00] = 0xDE;
    b[0x01] = 0x10;
    b[0x04] = 0x05;
    b[0x05] = 0x07;
    b[0x06] = 0x13;
    b[0x07] = 0x07;
    b[0x08] = 0x01;
    b[0x0C] = 0x78;
    b[0x0D] = 0x56;
    b[0x0E] = 0x34;
    b[0x0F] = 0x12;
    b[0x10] = 42;
}

/* SPEC §5.2: the header names first, then handle and ap_byte; ints as
 * numbers (0x12345678 = 305419896). */
static const char *TENSOR_COMPLETION_FIELDS =
    "\"fields\":{\"debug_cmd\":0,\"debug_hint\":0,\"wait_mode\":5,\"wait_idx\":7,"
    "\"update_mode\":19,\"update_idx\":7,\"semaphore_value\":1,\"handle\":305419896,"
    "\"ap_byte\":42}";

static void test_identity(void) {
    const char *name = tpb_subject_name();
    uint32_t caps = tpb_subject_capabilities();
    uint32_t v1 = TPB_CAP_VALIDATE_HEADER | TPB_CAP_VALIDATE_PAYLOAD | TPB_CAP_DECODE |
                  TPB_CAP_ENCODE | TPB_CAP_LUT;
    CHECK(tpb_subject_abi_version() == TPB_SUBJECT_ABI_VERSION);
    CHECK(name != NULL && name[0] != '\0');
    CHECK((caps & v1) == v1);
    if (TPB_SUBJECT_ABI_VERSION >= 2) {
        CHECK((caps & (TPB_CAP_VALIDATE_STREAM | TPB_CAP_LOWER)) ==
              (TPB_CAP_VALIDATE_STREAM | TPB_CAP_LOWER));
    } else {
        /* A version-1 harness refuses bits it does not know. */
        CHECK(caps == v1);
    }
    CHECK(tpb_subject_lut_tables() ==
          (TPB_LUT_COLLECTIVE_KIND | TPB_LUT_ALU_OP | TPB_LUT_CCE_OP | TPB_LUT_DGE |
           TPB_LUT_DTYPE | TPB_LUT_DTYPE_V4 | TPB_LUT_WAIT_MODE | TPB_LUT_UPDATE_MODE));
}

static void test_init(void) {
    uint8_t b[64];
    const char *failed = "unset";
    valid_header(b);
    /* No generation selected yet: nothing is answered. */
    CHECK(tpb_validate_header(b, &failed) == TPB_ERROR);
    CHECK(tpb_subject_init(NULL) == TPB_ERROR);
    /* FACTS §1 / the header: "v2", "v3", "v4" or "v5". */
    CHECK(tpb_subject_init("v1") == TPB_UNSUPPORTED);
    CHECK(tpb_subject_init("v6") == TPB_UNSUPPORTED);
    CHECK(tpb_subject_init("V2") == TPB_UNSUPPORTED);
    CHECK(tpb_subject_init("v5") == TPB_OK);
    CHECK(tpb_subject_init("sunda") == TPB_UNSUPPORTED);
    /* A refused init leaves no generation selected. */
    CHECK(tpb_validate_header(b, &failed) == TPB_ERROR);
    CHECK(tpb_subject_init("v4") == TPB_OK);
    CHECK(tpb_subject_init("\xff") == TPB_UNSUPPORTED); /* not even UTF-8 */
    CHECK(tpb_validate_header(b, &failed) == TPB_ERROR);
    CHECK(tpb_subject_init("v2") == TPB_OK);
    CHECK(tpb_validate_header(b, &failed) == TPB_OK && failed == NULL);
}

/* Runs the header validator on b; the predicate name, or "valid". */
static const char *header_verdict(const uint8_t b[64]) {
    const char *failed = "unset";
    if (tpb_validate_header(b, &failed) != TPB_OK) {
        return "status";
    }
    return failed == NULL ? "valid" : failed;
}

static const char *payload_verdict(const uint8_t b[64]) {
    const char *failed = "unset";
    if (tpb_validate_payload(b, &failed) != TPB_OK) {
        return "status";
    }
    return failed == NULL ? "valid" : failed;
}

/* One case of the validator tables: a bundle and the SPEC §3/§4 answer. */
struct vcase {
    uint8_t bundle[64];
    const char *name;
    uint16_t id;
};

/* A case as written below: `n` bytes set in the valid bundle, and the answer. */
struct poke {
    uint8_t at;
    uint8_t value;
};
struct vcase_def {
    int n;
    struct poke set[6];
    const char *name;
    uint16_t id;
};

#define HEADER_CASES 11
static const struct vcase_def header_defs[HEADER_CASES] = {
    /* 0: valid as built. */
    {0, {{0, 0}}, "valid", TPB_VERDICT_VALID},
    /* 1: bytes the validators never read (SPEC §3, D-2). */
    {6, {{0x02, 0xAA}, {0x03, 0xBB}, {0x05, 0xCC}, {0x07, 0xDD}, {0x08, 0xEE}, {0x0B, 0xFF}},
     "valid", TPB_VERDICT_VALID},
    /* 2: #1 valid_opcode: 0xFF is never valid (SPEC §2). */
    {1, {{0x00, 0xFF}}, "valid_opcode", TPB_PRED_VALID_OPCODE},
    /* 3: #2 inst_word_len: byte[1] != 0x10. */
    {1, {{0x01, 0x11}}, "inst_word_len", TPB_PRED_INST_WORD_LEN},
    /* 4: #3 wait_mode INVALID 0xFF is excluded (SPEC §6.5). */
    {1, {{0x04, 0xFF}}, "has_valid_neuron_events", TPB_PRED_HAS_VALID_NEURON_EVENTS},
    /* 5: #3 update_mode 0x06 is no UPDATE_MODE member (SPEC §6.5). */
    {1, {{0x06, 0x06}}, "has_valid_neuron_events", TPB_PRED_HAS_VALID_NEURON_EVENTS},
    /* 6: #4 a valid opcode that is not 0x85. */
    {1, {{0x00, 0x86}}, "is_custom_op_header_opcode", TPB_PRED_IS_CUSTOM_OP_HEADER_OPCODE},
    /* 7: #5 the 32-byte tail must be zero. */
    {1, {{0x3F, 0x01}}, "custom_op_header_reserved_zero",
     TPB_PRED_CUSTOM_OP_HEADER_RESERVED_ZERO},
    /* 8: #5 byte 0x11 is reserved. */
    {1, {{0x11, 0x01}}, "custom_op_header_reserved_zero",
     TPB_PRED_CUSTOM_OP_HEADER_RESERVED_ZERO},
    /* 9: #6 has_scratch_space set, size and partitions zero. */
    {1, {{0x10, 0x01}}, "custom_op_header_scratch_space_val",
     TPB_PRED_CUSTOM_OP_HEADER_SCRATCH_SPACE_VAL},
    /* 10: #6 all three nonzero: valid. */
    {3, {{0x10, 0x01}, {0x18, 0x01}, {0x1C, 0x01}}, "valid", TPB_VERDICT_VALID},
};
static struct vcase header_cases[HEADER_CASES];

#define PAYLOAD_CASES 6
static const struct vcase_def payload_defs[PAYLOAD_CASES] = {
    {0, {{0, 0}}, "valid", TPB_VERDICT_VALID},
    /* 1: byte 0x0F is NOT checked (SPEC §4, AC03-C2). */
    {1, {{0x0F, 0xFF}}, "valid", TPB_VERDICT_VALID},
    /* 2: #4 a header is not a payload. */
    {1, {{0x00, 0x85}}, "is_custom_op_payload_opcode", TPB_PRED_IS_CUSTOM_OP_PAYLOAD_OPCODE},
    /* 3, 4: #5 bytes 0x0C and 0x0E must be zero. */
    {1, {{0x0C, 0x01}}, "custom_op_payload_reserved_zero",
     TPB_PRED_CUSTOM_OP_PAYLOAD_RESERVED_ZERO},
    {1, {{0x0E, 0x80}}, "custom_op_payload_reserved_zero",
     TPB_PRED_CUSTOM_OP_PAYLOAD_RESERVED_ZERO},
    /* 5: #2 before #5. */
    {2, {{0x01, 0x00}, {0x0C, 0x01}}, "inst_word_len", TPB_PRED_INST_WORD_LEN},
};
static struct vcase payload_cases[PAYLOAD_CASES];

/* Builds `cases` from `defs`: each a bundle from `base` with the bytes set. */
static void build_cases(struct vcase *cases, const struct vcase_def *defs, int count,
                        void (*base)(uint8_t b[64])) {
    int i;
    int k;
    for (i = 0; i < count; i++) {
        base(cases[i].bundle);
        for (k = 0; k < defs[i].n; k++) {
            cases[i].bundle[defs[i].set[k].at] = defs[i].set[k].value;
        }
        cases[i].name = defs[i].name;
        cases[i].id = defs[i].id;
    }
}

static void test_validators(void) {
    uint8_t all[HEADER_CASES * 64];
    uint16_t verdicts[HEADER_CASES + 1];
    uint8_t b[64];
    int i;
    build_cases(header_cases, header_defs, HEADER_CASES, valid_header);
    build_cases(payload_cases, payload_defs, PAYLOAD_CASES, valid_payload);
    for (i = 0; i < HEADER_CASES; i++) {
        if (!same(header_verdict(header_cases[i].bundle), header_cases[i].name)) {
            fprintf(stderr, "header case %d: %s, expected %s\n", i,
                    header_verdict(header_cases[i].bundle), header_cases[i].name);
        }
        CHECK(same(header_verdict(header_cases[i].bundle), header_cases[i].name));
        memcpy(all + 64 * i, header_cases[i].bundle, 64);
    }
    for (i = 0; i < PAYLOAD_CASES; i++) {
        if (!same(payload_verdict(payload_cases[i].bundle), payload_cases[i].name)) {
            fprintf(stderr, "payload case %d: %s, expected %s\n", i,
                    payload_verdict(payload_cases[i].bundle), payload_cases[i].name);
        }
        CHECK(same(payload_verdict(payload_cases[i].bundle), payload_cases[i].name));
    }

    /* Batch: one verdict id per bundle, in order; the slot after n is untouched. */
    verdicts[HEADER_CASES] = 0xBEEF;
    CHECK(tpb_validate_header_batch(all, HEADER_CASES, verdicts) == TPB_OK);
    for (i = 0; i < HEADER_CASES; i++) {
        CHECK(verdicts[i] == header_cases[i].id);
    }
    CHECK(verdicts[HEADER_CASES] == 0xBEEF);
    for (i = 0; i < PAYLOAD_CASES; i++) {
        memcpy(all + 64 * i, payload_cases[i].bundle, 64);
    }
    CHECK(tpb_validate_payload_batch(all, PAYLOAD_CASES, verdicts) == TPB_OK);
    for (i = 0; i < PAYLOAD_CASES; i++) {
        CHECK(verdicts[i] == payload_cases[i].id);
    }
    CHECK(tpb_validate_header_batch(all, 0, verdicts) == TPB_OK);

    /* The generation decides the opcode enum: 0x87 is an opcode of v2 only
     * (SPEC §0, §2). */
    valid_header(b);
    b[0x00] = 0x87;
    CHECK(same(header_verdict(b), "is_custom_op_header_opcode"));
    CHECK(tpb_subject_init("v3") == TPB_OK);
    CHECK(same(header_verdict(b), "valid_opcode"));
    CHECK(tpb_validate_header_batch(b, 1, verdicts) == TPB_OK &&
          verdicts[0] == TPB_PRED_VALID_OPCODE);
    CHECK(tpb_subject_init("v2") == TPB_OK);
}

static void test_decode(void) {
    uint8_t b[64];
    char out[4096];
    char want[1024];
    size_t len = 0;
    size_t want_len;

    tensor_completion(b);
    snprintf(want, sizeof want, "{\"opcode\":\"0xDE\",%s}", TENSOR_COMPLETION_FIELDS);
    want_len = strlen(want);
    memset(out, 'x', sizeof out);
    CHECK(tpb_decode(b, out, sizeof out, &len) == TPB_OK);
    CHECK(len == want_len && memcmp(out, want, want_len) == 0);
    if (len != want_len || memcmp(out, want, want_len) != 0) {
        fprintf(stderr, "decode: %.*s\nwanted: %s\n", (int)len, out, want);
    }
    CHECK(out[len] == '\0'); /* NUL-terminated when there is room */

    /* Too small: the size needed, nothing promised in out. */
    len = 0;
    CHECK(tpb_decode(b, out, 10, &len) == TPB_BUFFER_TOO_SMALL);
    CHECK(len == want_len);
    /* Exactly the size: the text, no room for a NUL. */
    memset(out, 'x', sizeof out);
    CHECK(tpb_decode(b, out, want_len, &len) == TPB_OK);
    CHECK(len == want_len && memcmp(out, want, want_len) == 0 && out[want_len] == 'x');

    /* docs/subject-protocol.md's decode example: kind byte 0x0E outside
     * 0x01..0x09 (SPEC §6.1) at offset 14. */
    memset(b, 0, 64);
    b[0x00] = 0xD9;
    b[0x01] = 0x10;
    b[0x0C] = 0x04;
    b[0x0D] = 0x03;
    b[0x0E] = 0x0E;
    CHECK(tpb_decode(b, out, sizeof out, &len) == TPB_OK);
    CHECK(same(out, "{\"error\":{\"field\":\"kind\",\"offset\":14}}"));

    /* 0xBE is CoreV3+: not emitted under v2 (SPEC §5.1, D-22). */
    memset(b, 0, 64);
    b[0x00] = 0xBE;
    b[0x01] = 0x10;
    CHECK(tpb_decode(b, out, sizeof out, &len) == TPB_OK);
    CHECK(same(out, "{\"error\":{\"field\":\"opcode\",\"offset\":0}}"));
    /* 0x85 decodes through its validator (SPEC §5.1): field = predicate. */
    valid_header(b);
    b[0x3F] = 1;
    CHECK(tpb_decode(b, out, sizeof out, &len) == TPB_OK);
    CHECK(same(out, "{\"error\":{\"field\":\"custom_op_header_reserved_zero\",\"offset\":63}}"));
}

static void test_encode(void) {
    uint8_t want[64];
    uint8_t out[64];
    const char *refused = "unset";
    char req[1024];
    const char *bad;

    tensor_completion(want);
    snprintf(req, sizeof req, "{\"opcode\":\"0xDE\",%s}", TENSOR_COMPLETION_FIELDS);
    memset(out, 0xAA, 64);
    CHECK(tpb_encode(req, strlen(req), out, &refused) == TPB_OK);
    CHECK(refused == NULL && memcmp(out, want, 64) == 0);

    /* debug_cmd and debug_hint may be left out (SPEC §5.2). */
    bad = "{\"opcode\":\"0xDE\",\"fields\":{\"wait_mode\":5,\"wait_idx\":7,\"update_mode\":19,"
          "\"update_idx\":7,\"semaphore_value\":1,\"handle\":305419896,\"ap_byte\":42}}";
    memset(out, 0xAA, 64);
    CHECK(tpb_encode(bad, strlen(bad), out, &refused) == TPB_OK);
    CHECK(refused == NULL && memcmp(out, want, 64) == 0);

    /* wait_mode 0x08 is no WAIT_MODE member (SPEC §6.5): refused, named. */
    bad = "{\"opcode\":\"0xDE\",\"fields\":{\"wait_mode\":8,\"wait_idx\":0,\"update_mode\":0,"
          "\"update_idx\":0,\"semaphore_value\":0,\"handle\":0,\"ap_byte\":0}}";
    CHECK(tpb_encode(bad, strlen(bad), out, &refused) == TPB_OK);
    CHECK(same(refused, "wait_mode"));

    /* An opcode v2's compiler does not emit is refused first (SPEC §5.2). */
    bad = "{\"opcode\":\"0xBE\",\"fields\":{}}";
    CHECK(tpb_encode(bad, strlen(bad), out, &refused) == TPB_OK);
    CHECK(same(refused, "opcode"));

    /* Malformed requests are errors, not refusals. */
    bad = "{\"opcode\":\"0xDE\"";
    CHECK(tpb_encode(bad, strlen(bad), out, &refused) == TPB_ERROR);
    bad = "{\"opcode\":\"0xDE\",\"fields\":{},\"index\":0}";
    CHECK(tpb_encode(bad, strlen(bad), out, &refused) == TPB_ERROR);
    bad = "{\"opcode\":\"DE\",\"fields\":{}}";
    CHECK(tpb_encode(bad, strlen(bad), out, &refused) == TPB_ERROR);
    bad = "{\"opcode\":\"0xDE\",\"opcode\":\"0xDE\",\"fields\":{}}";
    CHECK(tpb_encode(bad, strlen(bad), out, &refused) == TPB_ERROR);
    /* Only request_len bytes are read: the same text cut short is malformed. */
    CHECK(tpb_encode(req, strlen(req) - 1, out, &refused) == TPB_ERROR);
}

/* tpb_lut on one table: the wire value, or -1 and the refusal in *why. */
static long lut(const char *table, uint32_t input, const char **why) {
    uint32_t wire = 0xFFFFFFFFu;
    *why = "unset";
    if (tpb_lut(table, input, &wire, why) != TPB_OK) {
        *why = "status";
        return -2;
    }
    return *why == NULL ? (long)wire : -1;
}

/* tpb_lut_batch answers each input as tpb_lut does (SPEC §6). */
static void test_lut_batch(void) {
    static const char *const tables[] = {"collective_kind", "alu_op", "cce_op", "dge",
                                         "dtype",           "dtype_v4", "wait_mode",
                                         "update_mode"};
    uint32_t inputs[40], wires[40];
    const char *refused[40];
    size_t t, i;
    for (i = 0; i < 40; i++) inputs[i] = (uint32_t)i;
    for (t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        CHECK(tpb_lut_batch(tables[t], inputs, 40, wires, refused) == TPB_OK);
        for (i = 0; i < 40; i++) {
            const char *why;
            long one = lut(tables[t], inputs[i], &why);
            CHECK(refused[i] == NULL ? one == (long)wires[i] : one == -1 && same(why, refused[i]));
        }
    }
    CHECK(tpb_lut_batch("fp8", inputs, 40, wires, refused) == TPB_UNSUPPORTED);
    CHECK(tpb_lut_batch("alu_op", NULL, 1, wires, refused) == TPB_ERROR);
    CHECK(tpb_lut_batch("alu_op", inputs, 0, wires, refused) == TPB_OK);
}

static void test_luts(void) {
    const char *why;
    uint32_t wire;
    static const long update_wire[6] = {0x11, 0x15, 0x17, 0x13, 0x14, 0x19};
    uint32_t i;
    /* SPEC §6.1 */
    CHECK(lut("collective_kind", 2, &why) == 0x01);
    CHECK(lut("collective_kind", 6, &why) == 0x09); /* AllToAllV, out of sequence */
    CHECK(lut("collective_kind", 10, &why) == 0x08);
    CHECK(lut("collective_kind", 0, &why) == -1 && same(why, "not_encodable"));
    CHECK(lut("collective_kind", 11, &why) == -1 && same(why, "out_of_range"));
    /* SPEC §6.2 */
    CHECK(lut("alu_op", 19, &why) == 0x18);
    CHECK(lut("alu_op", 29, &why) == 0x19);
    CHECK(lut("alu_op", 24, &why) == -1 && same(why, "no_wire_byte"));
    CHECK(lut("alu_op", 30, &why) == -1 && same(why, "out_of_range"));
    CHECK(lut("cce_op", 4, &why) == 0x04);
    CHECK(lut("cce_op", 0, &why) == 0x00);
    CHECK(lut("cce_op", 5, &why) == -1 && same(why, "not_shipped"));
    CHECK(lut("cce_op", 25, &why) == -1 && same(why, "no_wire_byte"));
    /* SPEC §6.3 */
    CHECK(lut("dge", 0, &why) == 1);
    CHECK(lut("dge", 4, &why) == 2);
    CHECK(lut("dge", 5, &why) == -1 && same(why, "not_dge_op"));
    /* SPEC §6.4 */
    CHECK(lut("dtype", 2, &why) == 0x05);
    CHECK(lut("dtype_v4", 2, &why) == 0x10);
    CHECK(lut("dtype", 19, &why) == 0x0C);
    CHECK(lut("dtype_v4", 20, &why) == -1 && same(why, "out_of_range"));
    /* SPEC §6.5 */
    CHECK(lut("wait_mode", 0, &why) == 0x07);
    CHECK(lut("wait_mode", 2, &why) == 0x85);
    CHECK(lut("wait_mode", 3, &why) == -1 && same(why, "out_of_range"));
    for (i = 0; i < 6; i++) {
        CHECK(lut("update_mode", i, &why) == update_wire[i]);
    }
    CHECK(lut("update_mode", 6, &why) == -1 && same(why, "out_of_range"));
    /* A table SPEC §6 does not have. */
    CHECK(tpb_lut("fp8", 0, &wire, &why) == TPB_UNSUPPORTED);
    test_lut_batch();
}

static void stream_check(const uint8_t *bytes, size_t len, const char *error, size_t index,
                         int line) {
    const char *got = "unset";
    size_t at = 12345;
    int rc = tpb_validate_stream(bytes, len, &got, &at);
    checks++;
    if (rc != TPB_OK || !same(got, error) || (error != NULL && at != index)) {
        failures++;
        fprintf(stderr, "reference_test.c:%d: stream: rc %d, %s at %zu; expected %s at %zu\n",
                line, rc, got ? got : "valid", at, error ? error : "valid", index);
    }
}

static void test_stream(void) {
    uint8_t s[4 * 64];
    /* SPEC §5.3. A group: header (num_arguments 1, num_payloads 3), output, 1 arg. */
    valid_header(s);
    valid_payload(s + 64);
    valid_payload(s + 128);
    valid_payload(s + 192);
    stream_check(s, 0, NULL, 0, __LINE__);
    stream_check(s, 3 * 64, NULL, 0, __LINE__);
    /* Length first: 65 bytes is trailing_bytes, reported with the length. */
    stream_check(s, 65, "trailing_bytes", 65, __LINE__);
    /* The group closes at its num_arguments + 1 payloads: a fourth is stray. */
    stream_check(s, 4 * 64, "stray_payload", 3, __LINE__);
    /* Ends before its payloads arrived: short_group at the header. */
    stream_check(s, 2 * 64, "short_group", 0, __LINE__);
    /* A lone payload. */
    stream_check(s + 64, 64, "stray_payload", 0, __LINE__);
    /* num_payloads != num_arguments + 2. */
    s[0x0C] = 4;
    stream_check(s, 3 * 64, "payload_count_mismatch", 0, __LINE__);
    s[0x0C] = 3;
    /* A header that fails its validator. */
    s[0x3F] = 1;
    stream_check(s, 3 * 64, "invalid_record", 0, __LINE__);
    s[0x3F] = 0;
}

static void test_lower(void) {
    char out[4096];
    size_t len = 0;
    const char *ir;
    const char *want;
    /* SPEC §5.4: a Transfer Send is one 0xCB (tensor_id at 0x10, tensor_base
     * at 0x30, num_elements_per_partition at 0x38, u64 LE; sync band zero)
     * and one attribute (kind 2, direction, peer); the module JSON lists
     * generation, instructions{records, side}, the three side-tables. */
    ir = "{\"generation\":\"v2\",\"instructions\":[{\"op\":\"send\",\"tensor_id\":4096,"
         "\"tensor_base\":0,\"num_elements_per_partition\":64,\"peer\":1}]}";
    want = "{\"generation\":\"v2\",\"instructions\":[{\"records\":[\"cb10000000000000"
           "0000000000000000"
           "0010000000000000000000000000000000000000000000000000000000000000"
           "0000000000000000"
           "4000000000000000\"],\"side\":[{\"table\":\"attributes\",\"id\":0}]}],"
           "\"replica_groups\":[],\"source_target_pairs\":[],"
           "\"attributes\":[{\"id\":0,\"kind\":2,\"direction\":\"send\",\"peer\":1}]}";
    CHECK(tpb_lower(ir, strlen(ir), out, sizeof out, &len) == TPB_OK);
    CHECK(len == strlen(want) && memcmp(out, want, len) == 0);
    if (len != strlen(want) || memcmp(out, want, len) != 0) {
        fprintf(stderr, "lower: %.*s\nwanted: %s\n", (int)len, out, want);
    }
    CHECK(tpb_lower(ir, strlen(ir), out, 8, &len) == TPB_BUFFER_TOO_SMALL && len == strlen(want));

    /* AllReduce accepts add only (DL-4): bypass is op_not_accepted. */
    ir = "{\"generation\":\"v2\",\"instructions\":[{\"op\":\"collective\",\"kind\":\"AllReduce\","
         "\"cce_op\":\"bypass\",\"dtype\":\"bfloat16\",\"src\":\""
         "000000000000000000000000000000000000000000000000"
         "000000000000000000000000000000000000000000000000\",\"replica_groups\":[[0,1]]}]}";
    CHECK(tpb_lower(ir, strlen(ir), out, sizeof out, &len) == TPB_OK);
    CHECK(same(out, "{\"error\":\"op_not_accepted\",\"instruction\":0}"));

    /* Not tpbconform lower input, or another generation than init's: errors. */
    ir = "{\"generation\":\"v3\",\"instructions\":[]}";
    CHECK(tpb_lower(ir, strlen(ir), out, sizeof out, &len) == TPB_ERROR);
    ir = "{\"generation\":\"v2\",\"instructions\":[{\"op\":\"fly\"}]}";
    CHECK(tpb_lower(ir, strlen(ir), out, sizeof out, &len) == TPB_ERROR);
    ir = "[]";
    CHECK(tpb_lower(ir, strlen(ir), out, sizeof out, &len) == TPB_ERROR);
}

/* Every pointer parameter, NULL: TPB_ERROR, never a crash. */
static void test_null_pointers(void) {
    uint8_t b[64];
    uint16_t v[1];
    char out[64];
    size_t len;
    const char *s;
    uint32_t w;
    valid_header(b);
    CHECK(tpb_validate_header(NULL, &s) == TPB_ERROR);
    CHECK(tpb_validate_header(b, NULL) == TPB_ERROR);
    CHECK(tpb_validate_payload(NULL, &s) == TPB_ERROR);
    CHECK(tpb_validate_payload(b, NULL) == TPB_ERROR);
    CHECK(tpb_validate_header_batch(NULL, 1, v) == TPB_ERROR);
    CHECK(tpb_validate_header_batch(b, 1, NULL) == TPB_ERROR);
    CHECK(tpb_validate_payload_batch(NULL, 1, v) == TPB_ERROR);
    CHECK(tpb_validate_payload_batch(b, 1, NULL) == TPB_ERROR);
    CHECK(tpb_decode(NULL, out, sizeof out, &len) == TPB_ERROR);
    CHECK(tpb_decode(b, NULL, sizeof out, &len) == TPB_ERROR);
    CHECK(tpb_decode(b, out, sizeof out, NULL) == TPB_ERROR);
    CHECK(tpb_encode(NULL, 2, b, &s) == TPB_ERROR);
    CHECK(tpb_encode("{}", 2, NULL, &s) == TPB_ERROR);
    CHECK(tpb_encode("{}", 2, b, NULL) == TPB_ERROR);
    CHECK(tpb_lut(NULL, 0, &w, &s) == TPB_ERROR);
    CHECK(tpb_lut("alu_op", 0, NULL, &s) == TPB_ERROR);
    CHECK(tpb_lut("alu_op", 0, &w, NULL) == TPB_ERROR);
    CHECK(tpb_validate_stream(NULL, 0, &s, &len) == TPB_ERROR);
    CHECK(tpb_validate_stream(b, 64, NULL, &len) == TPB_ERROR);
    CHECK(tpb_validate_stream(b, 64, &s, NULL) == TPB_ERROR);
    CHECK(tpb_lower(NULL, 2, out, sizeof out, &len) == TPB_ERROR);
    CHECK(tpb_lower("{}", 2, NULL, sizeof out, &len) == TPB_ERROR);
    CHECK(tpb_lower("{}", 2, out, sizeof out, NULL) == TPB_ERROR);
    /* A length no object can have is refused before anything is read. */
    CHECK(tpb_validate_stream(b, (size_t)-1, &s, &len) == TPB_ERROR);
    CHECK(tpb_encode("{}", (size_t)-1, b, &s) == TPB_ERROR);
    CHECK(tpb_lower("{}", (size_t)-1, out, sizeof out, &len) == TPB_ERROR);
    CHECK(tpb_validate_header_batch(b, (size_t)-1 / 64 + 1, v) == TPB_ERROR);
}

int main(void) {
    test_identity();
    test_init();
    test_validators();
    test_decode();
    test_encode();
    test_luts();
    test_stream();
    test_lower();
    test_null_pointers();
    if (failures != 0) {
        fprintf(stderr, "reference_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("reference_test: %d checks passed\n", checks);
    return 0;
}
