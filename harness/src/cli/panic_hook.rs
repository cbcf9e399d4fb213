//! Panic hooks of the CLI. Under each, `println!` on a closed stdout exits 141 quietly
//! (docs/guarantees.md X4).

use super::{EXIT_BAD_INPUT, EXIT_BROKEN_PIPE};
use std::panic::PanicHookInfo;

/// Exits 141 on std's `failed printing to stdout: Broken pipe` panic.
fn exit_if_closed_stdout(info: &PanicHookInfo<'_>) {
    let msg = info
        .payload()
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| info.payload().downcast_ref::<&str>().copied())
        .unwrap_or("");
    if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
        crate::external::reaper::kill_all();
        std::process::exit(i32::from(EXIT_BROKEN_PIPE));
    }
}

/// Panics are caught and reported by the caller: print nothing.
pub fn install_quiet() {
    std::panic::set_hook(Box::new(exit_if_closed_stdout));
}

/// A panic is an internal error: print it (no backtrace), run `cleanup`, kill every subject
/// process, exit 2.
pub fn install_loud(cleanup: fn()) {
    std::panic::set_hook(Box::new(move |info| {
        exit_if_closed_stdout(info);
        eprintln!("tpbconform: internal error: {info}");
        cleanup();
        crate::external::reaper::kill_all();
        std::process::exit(i32::from(EXIT_BAD_INPUT));
    }));
}
