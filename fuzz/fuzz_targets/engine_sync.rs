#![no_main]
// Property: see fuzz/README.md. Logic lives in tpb_gate::fuzz_entry (Entry: path picked at compile time).
use tpb_gate::fuzz_entry::Entry;
const ENTRY: Entry = Entry::of("engine_sync");
libfuzzer_sys::fuzz_target!(|data: &[u8]| ENTRY.run(data));
