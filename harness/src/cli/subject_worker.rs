//! `tpbconform subject-worker --shm REGION --arch vN lib:PATH` (hidden):
//! the worker process of a `lib:` subject ([`crate::external::shm_worker`]).
//! Exit 0 when stdin ends, 2 when the region or the library does not load.

use super::{CliResult, EXIT_BAD_INPUT, EXIT_OK};
use crate::subjects::SubjectSpec;

/// The batch worker when `shm` names a region.
pub fn run(spec: &str, shm: Option<&std::path::Path>, arch: Option<&str>) -> CliResult {
    let path = match spec.parse::<SubjectSpec>() {
        Ok(SubjectSpec::Lib(p)) => p,
        _ => {
            eprintln!("tpbconform subject-worker: expected lib:PATH, got `{spec}`");
            return Ok(EXIT_BAD_INPUT);
        }
    };
    let served = match (shm, arch) {
        (Some(region), Some(arch)) => crate::external::shm_worker::serve(&path, region, arch),
        _ => Err("expected --shm REGION --arch vN (the gate starts this worker)".into()),
    };
    match served {
        Ok(()) => Ok(EXIT_OK),
        Err(e) => {
            eprintln!("tpbconform subject-worker: {e}");
            Ok(EXIT_BAD_INPUT)
        }
    }
}
