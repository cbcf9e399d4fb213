#![no_main]
// Property, custom mutator and crossover: see fuzz/README.md. Logic lives in tpb_gate::fuzz_entry.
libfuzzer_sys::fuzz_target!(|data: &[u8]| tpb_gate::fuzz_entry::run("structured_diff", data));
libfuzzer_sys::fuzz_mutator!(|data: &mut [u8], size: usize, max: usize, seed: u32| { tpb_gate::fuzz_entry::mutate_structured(data, size, max, seed, libfuzzer_sys::fuzzer_mutate) });
libfuzzer_sys::fuzz_crossover!(|a: &[u8], b: &[u8], out: &mut [u8], seed: u32| { tpb_gate::fuzz_entry::crossover_structured(a, b, out, seed) });
