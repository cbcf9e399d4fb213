#![no_main]
// Property: see fuzz/README.md. Logic lives in tpb_harness::fuzz_entry (Entry: path picked at compile time).
use tpb_harness::fuzz_entry::Entry;
const ENTRY: Entry = Entry::of("engine_sync");
libfuzzer_sys::fuzz_target!(|data: &[u8]| ENTRY.run(data));
