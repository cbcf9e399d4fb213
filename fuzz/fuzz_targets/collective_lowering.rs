#![no_main]
// Property: see fuzz/README.md. Logic lives in tpb_harness::fuzz_entry.
libfuzzer_sys::fuzz_target!(|data: &[u8]| tpb_harness::fuzz_entry::run("collective_lowering", data));
