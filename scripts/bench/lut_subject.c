/* lut_subject.c: the bench's C library subject (scripts/subject_bench.sh):
 * the example validators of examples/subjects/custom_op.c (v2) plus the
 * SPEC §6 lookup tables the protocol sends (collective_kind, alu_op, dge,
 * dtype, dtype_v4, wait_mode), written from SPEC.md §6.1-§6.5. */
#define tpb_subject_capabilities example_capabilities
#include "../../examples/subjects/custom_op.c"
#undef tpb_subject_capabilities

EXPORT uint32_t tpb_subject_capabilities(void) { return example_capabilities() | TPB_CAP_LUT; }

/* SPEC §6.1: kinds 2..10; 0 and 1 are not encodable. */
static const uint8_t KIND[] = {0, 0, 0x01, 0x02, 0x03, 0x04, 0x09, 0x05, 0x06, 0x07, 0x08};
/* SPEC §6.2: ordinal → wire, 0xFF = no_wire_byte (24, 25). */
static const uint8_t ALU[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
                              0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x18,
                              0x13, 0x14, 0x16, 0x15, 0xFF, 0xFF, 0x1A, 0x1B, 0x1D, 0x19};
/* SPEC §6.4: pre-v4 and v4 columns. */
static const uint8_t DTYPE[] = {0x03, 0x02, 0x05, 0x0D, 0x0E, 0x0E, 0x03, 0x0F, 0x0E, 0x0F,
                                0x05, 0x04, 0x06, 0x07, 0x09, 0x08, 0x0A, 0x0B, 0x01, 0x0C};
/* SPEC §6.5: BIR wait mode 0..2. */
static const uint8_t WAIT[] = {0x07, 0x05, 0x85};

EXPORT tpb_status tpb_lut(const char *table, uint32_t in, uint32_t *wire, const char **refused) {
    *refused = NULL;
    if (strcmp(table, "collective_kind") == 0) {
        if (in > 10) *refused = "out_of_range";
        else if (in < 2) *refused = "not_encodable";
        else *wire = KIND[in];
    } else if (strcmp(table, "alu_op") == 0) {
        if (in > 29) *refused = "out_of_range";
        else if (ALU[in] == 0xFF) *refused = "no_wire_byte";
        else *wire = ALU[in];
    } else if (strcmp(table, "dge") == 0) {
        if (in == 0) *wire = 1;
        else if (in == 4) *wire = 2;
        else *refused = "not_dge_op";
    } else if (strcmp(table, "dtype") == 0 || strcmp(table, "dtype_v4") == 0) {
        if (in > 19) *refused = "out_of_range";
        else *wire = (in == 2 && table[5] == '_') ? 0x10 : DTYPE[in];
    } else if (strcmp(table, "wait_mode") == 0) {
        if (in > 2) *refused = "out_of_range";
        else *wire = WAIT[in];
    } else {
        return TPB_UNSUPPORTED;
    }
    return TPB_OK;
}
