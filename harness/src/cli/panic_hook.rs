//! Panic hooks of the CLI. Whatever hook a subcommand installs, a panic of
//! `print!`/`println!` on a stdout its reader closed (`| head -1`) is not an
//! internal error: the process exits [`super::EXIT_BROKEN_PIPE`] (141)
//! quietly, the same as a [`super::CliError::BrokenPipe`] (docs/guarantees.md X4).

use super::{EXIT_BAD_INPUT, EXIT_BROKEN_PIPE};
use std::panic::PanicHookInfo;

/// Exits 141 on the panic std raises when printing to a closed stdout (`failed printing to
/// stdout: Broken pipe (os error 32)`).
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

/// Panics are caught and reported by the caller (subjects, corpus inputs):
/// print nothing, except that a closed stdout exits 141.
pub fn install_quiet() {
    std::panic::set_hook(Box::new(exit_if_closed_stdout));
}

/// A panic is an internal error: print it (no backtrace), run `cleanup`,
/// kill every subject process still running, exit 2; a closed stdout exits
/// 141 quietly (subjects killed too).
pub fn install_loud(cleanup: fn()) {
    std::panic::set_hook(Box::new(move |info| {
        exit_if_closed_stdout(info);
        eprintln!("tpbconform: internal error: {info}");
        cleanup();
        crate::external::reaper::kill_all();
        std::process::exit(i32::from(EXIT_BAD_INPUT));
    }));
}
