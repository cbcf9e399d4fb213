/*
 * tpb_subject.h: the C ABI of a tpb-conform subject, version 2 (a library
 * built to version 1 keeps loading).
 *
 * A subject is somebody's implementation of (part of) SPEC.md: a validator,
 * a decoder, an encoder, lookup tables, the custom-op stream rules, the
 * collective lowering. Build it as a shared library that exports the
 * functions below and point the gate at it:
 *
 *     tpbconform subject-check lib:./libmysubject.so
 *     tpbconform gate --subject lib:./libmysubject.so
 *
 * The harness never calls the library inside its own process: it runs one
 * worker process per generation (and gate thread) that loads the library
 * and shares a memory region with the gate; every operation goes through
 * it in chunks of thousands of cases per hand-off (docs/subject-protocol.md
 * "Shared-memory worker"). A crash or hang inside the library kills only
 * that worker; the gate records the exact input as a finding (class crash
 * or timeout) and starts a fresh worker.
 *
 * The operations are exactly those of tpb-subject/1; the protocol document
 * defines their meaning, this header only how they cross the C boundary.
 * Each operation is a capability of its own (one TPB_CAP_* bit), and so is
 * each LUT table (one TPB_LUT_* bit): the gate asks the library only about
 * what it declares, and reports every other target as "not supported by
 * <name>" (never a pass, never a divergence). A declared operation that
 * answers TPB_UNSUPPORTED is a finding.
 *
 * Threading: the worker calls the library from one thread only, never
 * concurrently. Nothing needs to be reentrant.
 *
 * Strings: every `const char *` the library returns must be NUL-terminated
 * UTF-8 and stay valid until the library is unloaded (string literals are
 * the intended use). Every buffer the harness passes is owned by the harness
 * and valid only for the duration of the call.
 *
 * Required symbols: tpb_subject_abi_version, tpb_subject_name,
 * tpb_subject_capabilities, tpb_subject_init. The operation symbols are
 * looked up only when their capability bit is set, and a set bit whose
 * symbol is missing is an error at load time (the subject does not start).
 */
#ifndef TPB_SUBJECT_H
#define TPB_SUBJECT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes. tpb_subject_abi_version() returns
 * 1 (the per-call entry points only) or 2 (this header; a library built
 * with it returns TPB_SUBJECT_ABI_VERSION); the harness refuses any other
 * value. The stream, lowering and
 * per-table symbols below are looked up when their capability bit is set
 * (tpb_subject_lut_tables when present), whatever the version; the batch
 * validators and tpb_lut_batch only in a library that returns 2. */
#define TPB_SUBJECT_ABI_VERSION 2u

/* Return codes of every operation. */
typedef enum tpb_status {
    /* The operation ran and its out-parameters hold the answer (which may
     * itself be a rejection: a failed predicate, a decode error, a refusal). */
    TPB_OK = 0,
    /* The subject does not implement this operation (or this LUT table).
     * For an operation or table it did not declare the harness never asks;
     * for one it declared, this answer is a finding (class Unsupported). */
    TPB_UNSUPPORTED = 1,
    /* An output buffer was too small; *len holds the size needed (in bytes,
     * without a terminating NUL). The harness retries once with a larger
     * buffer. */
    TPB_BUFFER_TOO_SMALL = 2,
    /* The subject could not handle the request (a bug in the subject or a
     * malformed request): reported as a protocol finding with the input. */
    TPB_ERROR = 3
} tpb_status;

/* Capability bits returned by tpb_subject_capabilities(); one per operation
 * of tpb-subject/1 (the `ops` list of the hello answer), each declared on
 * its own: a library may set TPB_CAP_VALIDATE_HEADER without
 * TPB_CAP_VALIDATE_PAYLOAD. */
#define TPB_CAP_VALIDATE_HEADER  (1u << 0) /* tpb_validate_header  */
#define TPB_CAP_VALIDATE_PAYLOAD (1u << 1) /* tpb_validate_payload */
#define TPB_CAP_DECODE           (1u << 2) /* tpb_decode           */
#define TPB_CAP_ENCODE           (1u << 3) /* tpb_encode           */
#define TPB_CAP_LUT              (1u << 4) /* tpb_lut              */

/* ---- ABI version 2 (tpb-subject/2) --------------------------------------
 * Everything in this block is new in version 2 and OPTIONAL for a library:
 * a version-1 library keeps loading unchanged. A version-2 library returns
 * 2 from tpb_subject_abi_version().
 */

/* Capability bits of the stream and lowering operations (SPEC §5.3, §5.4):
 * the gate's custom_op_group target asks tpb_validate_stream, its
 * collective_lowering target tpb_lower. */
#define TPB_CAP_VALIDATE_STREAM  (1u << 5) /* tpb_validate_stream  */
#define TPB_CAP_LOWER            (1u << 6) /* tpb_lower            */

/* LUT tables, one bit each (SPEC §6; the `tables` of the hello answer), one
 * gate target each (collective_lut, alu_lut, cce_lut, dge_lut, dtype_lut,
 * dtype_v4_lut, wait_mode_lut, update_mode_lut). A library that sets
 * TPB_CAP_LUT and exports tpb_subject_lut_tables() declares exactly the
 * tables whose bits it returns; the others are reported as "not supported
 * by <name>". Without that symbol, TPB_CAP_LUT declares every table. */
#define TPB_LUT_COLLECTIVE_KIND  (1u << 0)
#define TPB_LUT_ALU_OP           (1u << 1)
#define TPB_LUT_CCE_OP           (1u << 2)
#define TPB_LUT_DGE              (1u << 3)
#define TPB_LUT_DTYPE            (1u << 4)
#define TPB_LUT_DTYPE_V4         (1u << 5)
#define TPB_LUT_WAIT_MODE        (1u << 6)
#define TPB_LUT_UPDATE_MODE      (1u << 7)

/* BEGIN GENERATED verdict ids: SPEC §3 / §4 predicate chain, do not edit.
 * Source: the SPEC.md §3 / §4 tables (harness/subjects/src/external/verdict.rs);
 * regenerate: TPB_BLESS=1 cargo test -p tpbconform --test verdict_ids */
/* One id per validator answer: TPB_VERDICT_VALID, or the first failing
 * predicate. The batch validators write one of these per bundle. */
typedef enum tpb_verdict {
    TPB_VERDICT_VALID = 0,
    TPB_PRED_VALID_OPCODE = 1,                       /* SPEC §3 #1 / §4 #1 */
    TPB_PRED_INST_WORD_LEN = 2,                      /* SPEC §3 #2 / §4 #2 */
    TPB_PRED_HAS_VALID_NEURON_EVENTS = 3,            /* SPEC §3 #3 / §4 #3 */
    TPB_PRED_IS_CUSTOM_OP_HEADER_OPCODE = 4,         /* SPEC §3 #4 */
    TPB_PRED_CUSTOM_OP_HEADER_RESERVED_ZERO = 5,     /* SPEC §3 #5 */
    TPB_PRED_CUSTOM_OP_HEADER_SCRATCH_SPACE_VAL = 6, /* SPEC §3 #6 */
    TPB_PRED_IS_CUSTOM_OP_PAYLOAD_OPCODE = 7,        /* SPEC §4 #4 */
    TPB_PRED_CUSTOM_OP_PAYLOAD_RESERVED_ZERO = 8     /* SPEC §4 #5 */
} tpb_verdict;
/* END GENERATED verdict ids */

/* ---- Required ---------------------------------------------------------- */

/* Must return TPB_SUBJECT_ABI_VERSION. */
uint32_t tpb_subject_abi_version(void);

/* A short human-readable name, e.g. "acme-firmware-validator 2.3". It is
 * the `name` of the hello answer and appears in every report line. */
const char *tpb_subject_name(void);

/* A bitwise OR of TPB_CAP_* bits. Bits not defined above must be zero. */
uint32_t tpb_subject_capabilities(void);

/* Called once, before any operation, with the hardware generation this
 * worker serves: "v2", "v3", "v4" or "v5" (FACTS §1; the `arch` of the
 * hello request). Returns TPB_OK, or TPB_UNSUPPORTED if the subject does not
 * implement that generation (the gate then reports every target of that
 * generation as not supported). */
tpb_status tpb_subject_init(const char *arch);

/* ---- Validators (SPEC §3, §4) ----------------------------------------- */

/* Runs the CUSTOM_OP header (0x85) validator on any 64 bytes. On TPB_OK,
 * *failed is NULL when the bundle is valid, or the SPEC §3 name of the
 * first failing predicate (e.g. "custom_op_header_reserved_zero"). A name
 * that is not core's answer is a divergence. */
tpb_status tpb_validate_header(const uint8_t bundle[64], const char **failed);

/* Same for the CUSTOM_OP payload (0x86) validator, SPEC §4 names. */
tpb_status tpb_validate_payload(const uint8_t bundle[64], const char **failed);

/* ---- Decoder / encoder (SPEC §5): fields cross as JSON text ------------- */

/* Decodes any 64 bytes. On TPB_OK, out[0 .. *len) holds ONE JSON object,
 * without a trailing newline, that is the protocol's decode answer minus
 * its "id":
 *     {"opcode":"0xD9","fields":{...}}        fields exactly as
 *                                             `tpbconform decode` prints them
 *     {"error":{"field":"kind","offset":14}}  SPEC §5.1 first failure
 * `cap` is the capacity of `out` in bytes (the harness passes 4096). If the
 * text does not fit, return TPB_BUFFER_TOO_SMALL with *len = needed size. */
tpb_status tpb_decode(const uint8_t bundle[64], char *out, size_t cap, size_t *len);

/* Encodes one bundle. `request` (not NUL-terminated, `request_len` bytes)
 * is the JSON object {"opcode":"0xD9","fields":{...}}. On TPB_OK either
 * *refused is NULL and out[0..64) holds the bundle, or *refused names why
 * the encoder refused (the SPEC §5.2 field it rejects). */
tpb_status tpb_encode(const char *request, size_t request_len, uint8_t out[64],
                      const char **refused);

/* ---- Lookup tables (SPEC §6) -------------------------------------------- */

/* Maps `input` through table `table`, one of "collective_kind", "alu_op",
 * "cce_op", "dge", "dtype", "dtype_v4", "wait_mode", "update_mode" (SPEC
 * §6.1-§6.5); the harness passes only the tables the library declared. On
 * TPB_OK either *refused is NULL and *wire holds the wire value, or
 * *refused holds the SPEC §6 error class (e.g. "out_of_range"). */
tpb_status tpb_lut(const char *table, uint32_t input, uint32_t *wire, const char **refused);

/* ---- Version 2: batch validators (optional) ------------------------------
 * `bundles` holds n bundles of 64 bytes back to back; write one tpb_verdict
 * per bundle into verdicts[0..n) (an entry left unwritten is a finding on
 * that bundle: the harness fills the buffer with 0xFFFF first, never an
 * id). The worker uses these when they are
 * exported (and falls back to tpb_validate_header / _payload otherwise);
 * when a batch call crashes or hangs, it re-runs that chunk one bundle at a
 * time to name the exact input. */
tpb_status tpb_validate_header_batch(const uint8_t *bundles, size_t n, uint16_t *verdicts);
tpb_status tpb_validate_payload_batch(const uint8_t *bundles, size_t n, uint16_t *verdicts);

/* ---- Version 2: batch LUT (optional) -------------------------------------
 * tpb_lut on n ordinals of one table at once (the table name is resolved
 * once per batch, not once per input): for each i, either refused[i] = NULL
 * and wires[i] = the wire value, or refused[i] = the SPEC §6 error class,
 * exactly as tpb_lut answers inputs[i]. An entry left unwritten is a finding
 * on that input. The worker uses it when exported with TPB_CAP_LUT (and
 * tpb_lut otherwise); when a batch call crashes or hangs, it re-runs that
 * chunk one input at a time through this function to name the exact input.
 * TPB_UNSUPPORTED or TPB_ERROR answers every input of the batch. */
tpb_status tpb_lut_batch(const char *table, const uint32_t *inputs, size_t n, uint32_t *wires,
                         const char **refused);

/* ---- Version 2: per-table LUT declaration (optional) --------------------- */

/* A bitwise OR of TPB_LUT_* bits: the tables tpb_lut implements. */
uint32_t tpb_subject_lut_tables(void);

/* ---- Version 2: stream and lowering operations (SPEC §5.3, §5.4) ---------- */

/* Parses `len` bytes (a bundle stream, SPEC §5.3) as `tpbconform`'s
 * custom-op stream parser does (0xD9 / 0xDA are plain bundles here). On
 * TPB_OK *error is NULL when the stream is valid, or names the first SPEC
 * §5.3 stream error ("trailing_bytes", "invalid_record",
 * "payload_count_mismatch", "stray_payload", "short_group"), and *index is
 * the bundle index it is reported at (the header's for "short_group"; for
 * "trailing_bytes", the stream length in bytes). Compared with core: the
 * error name and index, or valid. */
tpb_status tpb_validate_stream(const uint8_t *bytes, size_t len, const char **error,
                               size_t *index);

/* Lowers one module (SPEC §5.4). `ir` (not NUL-terminated, `ir_len` bytes)
 * is the JSON input of `tpbconform lower` (its "generation" is the one
 * tpb_subject_init was given; a dtype may be a name or an ordinal). On
 * TPB_OK out[0 .. *len) holds ONE JSON object: exactly what `tpbconform
 * lower --format json` prints for it, or
 * {"error":"<class>","instruction":<i>} naming the first rejected
 * instruction (its index in "instructions") and its SPEC §5.4 error class.
 * Buffer rules as tpb_decode, with a first capacity of 65536 bytes
 * (TPB_BUFFER_TOO_SMALL with *len = needed size, at most 1 MiB). */
tpb_status tpb_lower(const char *ir, size_t ir_len, char *out, size_t cap, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* TPB_SUBJECT_H */
