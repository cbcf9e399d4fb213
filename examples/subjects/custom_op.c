/*
 * custom_op.c: an example tpb-conform subject in C. It implements the two
 * CUSTOM_OP validators of SPEC.md and the custom-op stream rules
 * (tpb_validate_stream, SPEC §5.3) for the v2 (Sunda) generation and exports
 * the C ABI of include/tpb_subject.h, version 2: the per-bundle validators
 * and the batch validators (one tpb_verdict id per bundle). -DTPB_ABI_V1
 * builds the version-1 form (no batch entry points), which still loads.
 *
 * Build and check (from the repository root):
 *     cc -shared -fPIC -O2 -Iinclude -o libcustom_op.so examples/subjects/custom_op.c
 *     tpbconform subject-check lib:./libcustom_op.so
 *     tpbconform gate --subject lib:./libcustom_op.so
 *
 * Written from SPEC.md §3/§4 and seed 000 (§is_valid_custom_op_header,
 * §is_valid_custom_op_payload), with the events rule of FACTS §2 and the v2
 * opcode roster of FACTS §1; it shares no code with tpb-core.
 *
 * -DTPB_PLANTED_BUG builds a copy with one planted bug (the payload
 * reserved-zero check forgets byte 0x0E); the harness tests use it to show
 * the gate catches it and names custom_op_payload_reserved_zero.
 * -DTPB_PLANTED_STREAM_BUG plants a stream-rule mistake instead: a header's
 * num_payloads is compared with num_arguments + 1 (SPEC §5.3 says + 2).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tpb_subject.h"

#if defined(_WIN32)
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

#ifndef TPB_PLANTED_BUG
#define PAYLOAD_RESERVED_LAST 0x0E /* SPEC §4 #5: bytes 0x0C..0x0E must be zero */
#else
#define PAYLOAD_RESERVED_LAST 0x0D /* planted bug: byte 0x0E is not checked */
#endif

/* FACTS §1: the opcodes of the v2 NEURON_ISA_TPB_OPCODE enum (144 values),
 * as inclusive ranges. 0xFF (INVALID) is not among them. */
static const uint8_t V2_OPCODES[][2] = {
    {0x01, 0x05}, {0x21, 0x24}, {0x30, 0x30}, {0x41, 0x4F}, {0x51, 0x54}, {0x58, 0x58},
    {0x5E, 0x74}, {0x76, 0x7F}, {0x82, 0x88}, {0x8A, 0x8F}, {0x92, 0x96}, {0x98, 0xAB},
    {0xB0, 0xB3}, {0xB5, 0xB5}, {0xB8, 0xB8}, {0xBB, 0xBB}, {0xC1, 0xD6}, {0xD8, 0xDF},
    {0xE5, 0xE8}, {0xEA, 0xEA}, {0xF0, 0xF0},
};

/* FACTS §2: NEURON_ISA_TPB_WAIT_MODE and _UPDATE_MODE members (INVALID 0xFF
 * excluded). */
static const uint8_t WAIT_MODES[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                     0x0E, 0x0F, 0x81, 0x82, 0x83, 0x84, 0x85};
static const uint8_t UPDATE_MODES[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x09,
                                       0x11, 0x12, 0x13, 0x14, 0x15, 0x17, 0x19, 0x99};

static int in_list(const uint8_t *list, size_t n, uint8_t v) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == v) return 1;
    return 0;
}

static int valid_opcode(uint8_t op) {
    for (size_t i = 0; i < sizeof V2_OPCODES / sizeof V2_OPCODES[0]; i++)
        if (op >= V2_OPCODES[i][0] && op <= V2_OPCODES[i][1]) return 1;
    return 0;
}

static int any_nonzero(const uint8_t *b, size_t from, size_t to /* inclusive */) {
    for (size_t i = from; i <= to; i++)
        if (b[i]) return 1;
    return 0;
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The SPEC §3/§4 name of each tpb_verdict id (NULL: valid). */
static const char *const PREDICATE_NAMES[] = {
    [TPB_VERDICT_VALID] = NULL,
    [TPB_PRED_VALID_OPCODE] = "valid_opcode",
    [TPB_PRED_INST_WORD_LEN] = "inst_word_len",
    [TPB_PRED_HAS_VALID_NEURON_EVENTS] = "has_valid_neuron_events",
    [TPB_PRED_IS_CUSTOM_OP_HEADER_OPCODE] = "is_custom_op_header_opcode",
    [TPB_PRED_CUSTOM_OP_HEADER_RESERVED_ZERO] = "custom_op_header_reserved_zero",
    [TPB_PRED_CUSTOM_OP_HEADER_SCRATCH_SPACE_VAL] = "custom_op_header_scratch_space_val",
    [TPB_PRED_IS_CUSTOM_OP_PAYLOAD_OPCODE] = "is_custom_op_payload_opcode",
    [TPB_PRED_CUSTOM_OP_PAYLOAD_RESERVED_ZERO] = "custom_op_payload_reserved_zero",
};

/* SPEC §3/§4 #1..#3, shared by both validators (seed 000 Algorithm (1), (2)), then #4: byte 0
 * is `opcode` (else `not_opcode`). */
static tpb_verdict front_end(const uint8_t *b, uint8_t opcode, tpb_verdict not_opcode) {
    if (!valid_opcode(b[0])) return TPB_PRED_VALID_OPCODE;
    if (b[1] != 0x10) return TPB_PRED_INST_WORD_LEN;
    if (!in_list(WAIT_MODES, sizeof WAIT_MODES, b[4]) ||
        !in_list(UPDATE_MODES, sizeof UPDATE_MODES, b[6]))
        return TPB_PRED_HAS_VALID_NEURON_EVENTS;
    if (b[0] != opcode) return not_opcode;
    return TPB_VERDICT_VALID;
}

/* SPEC §3: the CUSTOM_OP header validator (0x85). */
static tpb_verdict header(const uint8_t *b) {
    tpb_verdict f = front_end(b, 0x85, TPB_PRED_IS_CUSTOM_OP_HEADER_OPCODE);
    if (f != TPB_VERDICT_VALID) return f;
    /* #5: [0x11..0x13], [0x1D..0x1F], [0x20..0x3F] are reserved zero. */
    if (any_nonzero(b, 0x11, 0x13) || any_nonzero(b, 0x1D, 0x1F) || any_nonzero(b, 0x20, 0x3F))
        return TPB_PRED_CUSTOM_OP_HEADER_RESERVED_ZERO;
    /* #6: the scratch triple is all-zero or all-nonzero; "non-empty" counts
     * byte 0x10, bytes 0x14..0x17 and bytes 0x18..0x1C. */
    int non_empty = b[0x10] || any_nonzero(b, 0x14, 0x17) || any_nonzero(b, 0x18, 0x1C);
    if (non_empty && (b[0x10] == 0 || le32(b + 0x18) == 0 || b[0x1C] == 0))
        return TPB_PRED_CUSTOM_OP_HEADER_SCRATCH_SPACE_VAL;
    return TPB_VERDICT_VALID;
}

/* SPEC §4: the CUSTOM_OP payload validator (0x86). */
static tpb_verdict payload(const uint8_t *b) {
    tpb_verdict f = front_end(b, 0x86, TPB_PRED_IS_CUSTOM_OP_PAYLOAD_OPCODE);
    if (f != TPB_VERDICT_VALID) return f;
    /* #5: bytes 0x0C..0x0E zero; byte 0x0F (arg_type, FACTS §8) is not checked. */
    if (any_nonzero(b, 0x0C, PAYLOAD_RESERVED_LAST)) return TPB_PRED_CUSTOM_OP_PAYLOAD_RESERVED_ZERO;
    return TPB_VERDICT_VALID;
}

#ifndef TPB_ABI_V1
EXPORT uint32_t tpb_subject_abi_version(void) { return TPB_SUBJECT_ABI_VERSION; }
#else
EXPORT uint32_t tpb_subject_abi_version(void) { return 1; }
#endif

EXPORT const char *tpb_subject_name(void) {
#ifndef TPB_PLANTED_BUG
    return "example-c-custom-op 1.0";
#else
    return "example-c-custom-op 1.0 (planted bug)";
#endif
}

EXPORT uint32_t tpb_subject_capabilities(void) {
    return TPB_CAP_VALIDATE_HEADER | TPB_CAP_VALIDATE_PAYLOAD | TPB_CAP_VALIDATE_STREAM;
}

EXPORT tpb_status tpb_subject_init(const char *arch) {
    /* Only the v2 roster is built in. */
    return strcmp(arch, "v2") == 0 ? TPB_OK : TPB_UNSUPPORTED;
}

EXPORT tpb_status tpb_validate_header(const uint8_t bundle[64], const char **failed) {
    *failed = PREDICATE_NAMES[header(bundle)];
    return TPB_OK;
}

EXPORT tpb_status tpb_validate_payload(const uint8_t bundle[64], const char **failed) {
    *failed = PREDICATE_NAMES[payload(bundle)];
    return TPB_OK;
}

#ifndef TPB_PLANTED_STREAM_BUG
#define PAYLOADS_BESIDES_ARGS 2 /* SPEC §5.3: num_payloads = num_arguments + 2 */
#else
#define PAYLOADS_BESIDES_ARGS 1 /* planted bug */
#endif

/* SPEC §5.3: the first custom-op stream error. Checked at each bundle, in
 * this order (D-15): a bundle that is not a 0x86 first closes an open group
 * (short_group, at the header's index); then invalid_record (a 0x85 / 0x86
 * failing its validator); then for a header payload_count_mismatch
 * (num_payloads, u16 LE at 0x0C, must be num_arguments at 0x0F + 2); for a
 * 0x86, stray_payload when no group is open. A group closes once it has
 * num_arguments + 1 payloads. */
EXPORT tpb_status tpb_validate_stream(const uint8_t *bytes, size_t len, const char **error,
                                      size_t *index) {
    int open = 0;
    size_t opened = 0, expected = 0, found = 0;
    *error = NULL;
    *index = 0;
    if (len % 64 != 0) {
        *error = "trailing_bytes"; /* reported with the length */
        *index = len;
        return TPB_OK;
    }
    for (size_t i = 0; i < len / 64; i++) {
        const uint8_t *b = bytes + 64 * i;
        if (b[0] != 0x86 && open) {
            *error = "short_group";
            *index = opened;
            return TPB_OK;
        }
        if ((b[0] == 0x85 && header(b) != TPB_VERDICT_VALID) ||
            (b[0] == 0x86 && payload(b) != TPB_VERDICT_VALID)) {
            *error = "invalid_record";
            *index = i;
            return TPB_OK;
        }
        if (b[0] == 0x86) {
            if (!open) {
                *error = "stray_payload";
                *index = i;
                return TPB_OK;
            }
            if (++found == expected) open = 0;
        } else if (b[0] == 0x85) {
            unsigned num_payloads = (unsigned)b[0x0C] | (unsigned)b[0x0D] << 8;
            unsigned num_arguments = b[0x0F];
            if (num_payloads != num_arguments + PAYLOADS_BESIDES_ARGS) {
                *error = "payload_count_mismatch";
                *index = i;
                return TPB_OK;
            }
            open = 1;
            opened = i;
            expected = (size_t)num_arguments + 1;
            found = 0;
        }
    }
    if (open) {
        *error = "short_group";
        *index = opened;
    }
    return TPB_OK;
}
#ifndef TPB_ABI_V1
/* Version 2: the batch validators, n bundles back to back. */
EXPORT tpb_status tpb_validate_header_batch(const uint8_t *bundles, size_t n, uint16_t *verdicts) {
    for (size_t i = 0; i < n; i++) verdicts[i] = (uint16_t)header(bundles + 64 * i);
    return TPB_OK;
}

EXPORT tpb_status tpb_validate_payload_batch(const uint8_t *bundles, size_t n, uint16_t *verdicts) {
    for (size_t i = 0; i < n; i++) verdicts[i] = (uint16_t)payload(bundles + 64 * i);
    return TPB_OK;
}
#endif
