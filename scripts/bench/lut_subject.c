/* lut_subject.c: the bench's C library subject (scripts/subject_bench.sh):
 * the example validators of examples/subjects/custom_op.c (v2) plus the
 * SPEC §6 lookup tables the protocol sends (collective_kind, alu_op, cce_op,
 * dge, dtype, dtype_v4, wait_mode, update_mode), written from SPEC.md
 * §6.1-§6.5. */
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
/* SPEC §6.5: BIR wait mode 0..2, BIR update mode 0..5. */
static const uint8_t WAIT[] = {0x07, 0x05, 0x85};
static const uint8_t UPDATE[] = {0x11, 0x15, 0x17, 0x13, 0x14, 0x19};

/* One table's answer to `in` (refused or *wire), SPEC §6.1-§6.5. */
typedef void (*lut_fn)(uint32_t in, uint32_t *wire, const char **refused);

static void kind(uint32_t in, uint32_t *wire, const char **refused) {
    if (in > 10) *refused = "out_of_range";
    else if (in < 2) *refused = "not_encodable";
    else *wire = KIND[in];
}
static void alu(uint32_t in, uint32_t *wire, const char **refused) {
    if (in > 29) *refused = "out_of_range";
    else if (ALU[in] == 0xFF) *refused = "no_wire_byte";
    else *wire = ALU[in];
}
/* SPEC §6.2 CCE subset: the alu_op errors first, then not_shipped. */
static void cce(uint32_t in, uint32_t *wire, const char **refused) {
    if (in > 29) *refused = "out_of_range";
    else if (ALU[in] == 0xFF) *refused = "no_wire_byte";
    else if (in != 0 && in != 4) *refused = "not_shipped";
    else *wire = ALU[in];
}
static void dge(uint32_t in, uint32_t *wire, const char **refused) {
    if (in == 0) *wire = 1;
    else if (in == 4) *wire = 2;
    else *refused = "not_dge_op";
}
static void dtype(uint32_t in, uint32_t *wire, const char **refused) {
    if (in > 19) *refused = "out_of_range";
    else *wire = DTYPE[in];
}
static void dtype_v4(uint32_t in, uint32_t *wire, const char **refused) {
    if (in > 19) *refused = "out_of_range";
    else *wire = in == 2 ? 0x10 : DTYPE[in];
}
static void wait_mode(uint32_t in, uint32_t *wire, const char **refused) {
    if (in > 2) *refused = "out_of_range";
    else *wire = WAIT[in];
}
static void update_mode(uint32_t in, uint32_t *wire, const char **refused) {
    if (in > 5) *refused = "out_of_range";
    else *wire = UPDATE[in];
}

static lut_fn table_fn(const char *table) {
    static const struct { const char *name; lut_fn f; } TABLES[] = {
        {"collective_kind", kind}, {"alu_op", alu},     {"cce_op", cce},
        {"dge", dge},              {"dtype", dtype},    {"dtype_v4", dtype_v4},
        {"wait_mode", wait_mode},  {"update_mode", update_mode},
    };
    for (size_t i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++)
        if (strcmp(table, TABLES[i].name) == 0) return TABLES[i].f;
    return NULL;
}

EXPORT tpb_status tpb_lut(const char *table, uint32_t in, uint32_t *wire, const char **refused) {
    lut_fn f = table_fn(table);
    if (!f) return TPB_UNSUPPORTED;
    *refused = NULL;
    f(in, wire, refused);
    return TPB_OK;
}

/* ABI version 2: the table is looked up once per batch. */
EXPORT tpb_status tpb_lut_batch(const char *table, const uint32_t *inputs, size_t n,
                                uint32_t *wires, const char **refused) {
    lut_fn f = table_fn(table);
    if (!f) return TPB_UNSUPPORTED;
    for (size_t i = 0; i < n; i++) {
        refused[i] = NULL;
        f(inputs[i], &wires[i], &refused[i]);
    }
    return TPB_OK;
}
