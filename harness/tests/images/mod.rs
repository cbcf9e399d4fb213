//! Hand-written valid images shared by the differential and blame tests.

/// A valid image of each of the eleven opcodes, written from SPEC §5.2 (cce_op
/// 0x04, dtype 0x0A, kind 0x01, cross-core enable 1, payload arg_type 1), with a
/// nonzero free byte where the layout has one, plus a full-scratch header.
pub fn valid_images() -> Vec<[u8; 64]> {
    let mut v = Vec::new();
    for op in [
        0x85u8, 0x86, 0xD9, 0xDA, 0xCB, 0xBF, 0xBE, 0xD8, 0xDC, 0xDB, 0xDE,
    ] {
        let mut b = [0u8; 64];
        b[0] = op;
        b[1] = if op == 0xDA { 0 } else { 0x10 };
        match op {
            0x86 => b[0x0F] = 1,
            0xD9 | 0xDA => b[0x0C..0x0F].copy_from_slice(&[0x04, 0x0A, 0x01]),
            0xBF => b[0x0C..0x0E].copy_from_slice(&[0x01, 0x02]),
            0xBE => b[0x0C] = 0x0A,
            _ => {}
        }
        if op == 0xBF {
            b[0x20] = 1;
        }
        v.push(b);
    }
    let mut h = v[0];
    h[0x10] = 0x11;
    h[0x18] = 0x22;
    h[0x1C] = 0x33;
    v.push(h);
    v
}
