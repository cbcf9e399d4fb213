//! External subjects: somebody else's implementation, driven over the
//! process protocol `tpb-subject/1` (docs/subject-protocol.md).
//!
//! - `cmd:COMMAND` runs `sh -c COMMAND` and speaks the protocol with it;
//! - `lib:PATH` loads a shared library with the C ABI of
//!   `include/tpb_subject.h` in a worker process (`tpbconform subject-worker
//!   lib:PATH`, [`worker`]) that speaks the same protocol, so one client
//!   ([`process::ProcessSubject`]) drives both and a crash or hang in the
//!   library never reaches the gate.
//!
//! Modules: [`protocol`] (lines ⇄ typed requests and answers), [`process`]
//! (the pipelined client with timeouts and restarts), [`ffi`] (the only
//! `unsafe` in the harness: calls into the library), [`worker`] (the
//! library's protocol server).

pub mod ffi;
pub mod process;
pub mod protocol;
pub mod worker;

pub use process::{Fault, FaultClass, Launch, ProcessSubject, Reply, StartError};
pub use protocol::{Answer, Hello, LutTable, Op, Request};

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The hidden subcommand the `lib:` worker runs as.
pub const WORKER_SUBCOMMAND: &str = "subject-worker";

/// An external subject spec: `lib:PATH` or `cmd:COMMAND`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ExternalSpec {
    /// A shared library with the C ABI.
    Lib(String),
    /// A shell command speaking the protocol.
    Cmd(String),
}

/// A spec that is neither `lib:PATH` nor `cmd:COMMAND`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadSpec(pub String);

impl fmt::Display for BadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad subject `{}`: expected lib:PATH (a shared library with the C ABI of \
             include/tpb_subject.h) or cmd:COMMAND (a process speaking tpb-subject/1)",
            self.0
        )
    }
}

impl std::error::Error for BadSpec {}

impl FromStr for ExternalSpec {
    type Err = BadSpec;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadSpec(s.to_string());
        if let Some(p) = s.strip_prefix("lib:") {
            if p.is_empty() {
                return Err(bad());
            }
            return Ok(ExternalSpec::Lib(p.to_string()));
        }
        if let Some(c) = s.strip_prefix("cmd:") {
            if c.trim().is_empty() {
                return Err(bad());
            }
            return Ok(ExternalSpec::Cmd(c.to_string()));
        }
        Err(bad())
    }
}

impl fmt::Display for ExternalSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExternalSpec::Lib(p) => write!(f, "lib:{p}"),
            ExternalSpec::Cmd(c) => write!(f, "cmd:{c}"),
        }
    }
}

impl ExternalSpec {
    /// How to start it; `worker_exe` is the `tpbconform` binary (for `lib:`).
    pub fn launch(&self, worker_exe: &Path) -> Launch {
        match self {
            ExternalSpec::Cmd(c) => Launch::shell(c),
            ExternalSpec::Lib(p) => Launch {
                program: worker_exe.as_os_str().to_owned(),
                args: vec![
                    WORKER_SUBCOMMAND.into(),
                    format!("lib:{}", dlopen_path(p)).into(),
                ],
            },
        }
    }

    /// Starts it for generation `arch` (see [`ProcessSubject::start`]).
    pub fn start(
        &self,
        worker_exe: &Path,
        arch: &str,
        timeout: std::time::Duration,
    ) -> Result<ProcessSubject, StartError> {
        ProcessSubject::start(self.launch(worker_exe), arch, timeout)
    }
}

/// A path `dlopen` takes as a file, never as a name to search for: one
/// without a `/` gets `./` in front.
fn dlopen_path(p: &str) -> String {
    if p.contains('/') {
        p.to_string()
    } else {
        format!("./{p}")
    }
}

/// The spec as one shell word, for the replay commands a report prints.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-_./:=,+@%".contains(&c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!("lib:x.so".parse(), Ok(ExternalSpec::Lib("x.so".into())));
        assert_eq!(
            "cmd:python3 a.py".parse(),
            Ok(ExternalSpec::Cmd("python3 a.py".into()))
        );
        for bad in ["lib:", "cmd: ", "core2", "x.so", ""] {
            assert!(bad.parse::<ExternalSpec>().is_err(), "{bad}");
        }
        let l = ExternalSpec::Lib("x.so".into()).launch(Path::new("/bin/t"));
        assert_eq!(l.args, vec!["subject-worker", "lib:./x.so"]);
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("lib:./a.so"), "lib:./a.so");
        assert_eq!(shell_quote("cmd:python3 x.py"), "'cmd:python3 x.py'");
        assert_eq!(shell_quote("a'b"), r"'a'\''b'");
    }
}
