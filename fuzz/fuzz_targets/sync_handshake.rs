#![no_main]
// Property: the alloc_semaphores model and the engine simulator agree (SPEC §8).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(d) = tpb_harness::sync_diff::sync_handshake_case(data) {
        panic!("[sync_handshake] {d}");
    }
});
