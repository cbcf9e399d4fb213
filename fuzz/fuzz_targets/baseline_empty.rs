#![no_main]
// Speed baseline only (not a property): the cheapest possible target, so other targets' exec/s can
// be reported as a same-run ratio against it (`scripts/fuzz_speed.sh`). Never fuzzed by nightly.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    std::hint::black_box(data);
});
