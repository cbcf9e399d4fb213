//! Byte offsets, widths and masks of the 64-byte bundle, as data.
//!
//! Every constant cites the seed row that pins it. Multi-byte fields are
//! little-endian (S003 §3.1).

// ---------------------------------------------------------------------------
// The shared skeleton (SPEC §1)
// ---------------------------------------------------------------------------

/// Bundle length in bytes. S003 "std::array<unsigned char, 64>".
pub const BUNDLE_LEN: usize = 64;
/// Opcode byte. S003 "shared skeleton"; S000 §Layout.
pub const OFF_OPCODE: usize = 0x00;
/// Header tag / `inst_word_len`. S003 "shared skeleton"; S000 Algorithm (1).
pub const OFF_INST_WORD_LEN: usize = 0x01;
/// The value of `inst_word_len` (16 dwords). S000 Algorithm (1) `cmpb 0x10`.
pub const INST_WORD_LEN: u8 = 0x10;
/// `debug_cmd` u8. F§2 [H] `NEURON_ISA_TPB_HEADER`; S003 "+0x02..+0x03 reserved = 0x0000"
/// (what the encoder writes).
pub const OFF_DEBUG_CMD: usize = 0x02;
/// `debug_hint` u8. F§2 [H].
pub const OFF_DEBUG_HINT: usize = 0x03;
/// `wait_mode`. S000 §Layout NOTE (`movzbl 0x74(%rsp)`); F§2 [H].
pub const OFF_WAIT_MODE: usize = 0x04;
/// `wait_idx` u8. F§2 [H].
pub const OFF_WAIT_IDX: usize = 0x05;
/// `update_mode`. S000 §Layout NOTE (`movzbl 0x76(%rsp)`); F§2 [H].
pub const OFF_UPDATE_MODE: usize = 0x06;
/// `update_idx` u8. F§2 [H].
pub const OFF_UPDATE_IDX: usize = 0x07;
/// `semaphore_value` u32 LE: wait threshold and update immediate. F§2 [H].
pub const OFF_SEMAPHORE_VALUE: usize = 0x08;
/// First opcode-specific byte. S003 §11.
pub const OFF_BODY: usize = 0x0C;

// ---------------------------------------------------------------------------
// CUSTOM_OP header 0x85 (SPEC §3) — S000 §is_valid_custom_op_header
// ---------------------------------------------------------------------------

/// CustomOpHeader opcode. S000 (3) `cmp bl,0x85`.
pub const OPCODE_CUSTOM_OP_HEADER: u8 = 0x85;
/// CustomOpPayload opcode. S000 payload (3) `v10 == -122`.
pub const OPCODE_CUSTOM_OP_PAYLOAD: u8 = 0x86;
/// `num_payloads` u16. S003 §10 NOTE `lea rdi,[r13+0Ch]`.
pub const OFF_NUM_PAYLOADS: usize = 0x0C;
/// `function_id` u8. S000 §C3, §R1.
pub const OFF_FUNCTION_ID: usize = 0x0E;
/// `num_arguments` u8. S003 §10 `lea rdi,[r13+0Fh]`.
pub const OFF_NUM_ARGUMENTS: usize = 0x0F;
/// `has_scratch_space` u8 (scratch triple part 1). S000 (5); names F§8 [H].
pub const OFF_HAS_SCRATCH_SPACE: usize = 0x10;
/// `scratch_space_addr` u32, counted only in the non-empty test. S000 (5); D-4; F§8.
pub const OFF_SCRATCH_SPACE_ADDR: usize = 0x14;
/// `scratch_space_size` u32 (triple part 2). S000 (5); F§8.
pub const OFF_SCRATCH_SPACE_SIZE: usize = 0x18;
/// `scratch_space_num_partitions` u8 (triple part 3). S000 (5); F§8.
pub const OFF_SCRATCH_SPACE_NUM_PARTITIONS: usize = 0x1C;
/// Reserved-zero mask over dword[0x10] | dword[0x1C]. S000 (4) `and edx,0xffffff00`.
pub const HDR_RESERVED_DWORD_MASK: u32 = 0xFFFF_FF00;
/// Start of the 32-byte reserved tail. S000 (4) qword-OR on [0x20..0x3F].
pub const HDR_RESERVED_TAIL: usize = 0x20;
/// Non-empty scratch mask on qword[0x10]. S000 (5).
pub const HDR_SCRATCH_Q10_MASK: u64 = 0xFFFF_FFFF_0000_00FF;
/// Non-empty scratch mask on qword[0x18]. S000 (5).
pub const HDR_SCRATCH_Q18_MASK: u64 = 0x00FF_FFFF_FFFF;

// ---------------------------------------------------------------------------
// CUSTOM_OP payload 0x86 (SPEC §4) — S000 §is_valid_custom_op_payload
// ---------------------------------------------------------------------------

/// Reserved-zero mask on dword[0x0C]: bytes 0x0C..=0x0E. S000 (4), AC03-C2.
pub const PAYLOAD_RESERVED_DWORD_MASK: u32 = 0x00FF_FFFF;
/// `arg_type` u8 (the seed's "payload-present marker"). S000 AC03-C2; name F§8 [H].
pub const OFF_ARG_TYPE: usize = 0x0F;
/// `arg_type` TENSOR: what the group encoder writes. S000 §C3 `[0x0F]=1`; F§8.
pub const ARG_TYPE_TENSOR: u8 = 0x01;
/// `arg_type` ARRAY_OF_TENSOR. F§8 [H].
pub const ARG_TYPE_ARRAY_OF_TENSOR: u8 = 0x02;
/// ADDR4 access pattern, 48 bytes. S000 §C3; D-5.
pub const OFF_PAYLOAD_AP: usize = 0x10;

/// Width of an ADDR4/ADDR8 access pattern (0x10..0x3F). D-5.
pub const AP48_LEN: usize = 48;
/// Width of a TENSOR3D access pattern. D-5.
pub const AP16_LEN: usize = 16;
/// Width of a TENSOR4D access pattern. D-5.
pub const AP32_LEN: usize = 32;
