//! tpb-neff: a streaming reader of NEFF files, the container neuronx-cc writes (FACTS §10,
//! SPEC §12): the 1024-byte header, the payload verified against its hash (pkg_version 1
//! SHA-256, 2 MD5), gzip or plain tar detected by content, tar members read one after the
//! other with hostile names and types refused, and each subgraph's engine instruction
//! streams found from its `def.json`. Memory is bounded whatever the file's size; nothing is
//! ever written. This crate knows nothing of the ISA: it hands streams' bytes to a
//! [`scan::StreamSink`].

pub mod build;
pub mod error;
pub mod header;
pub mod layout;
pub mod payload;
pub mod scan;
pub mod tar;

pub use error::NeffError;
pub use header::{HashKind, Header, HEADER_SIZE};
pub use layout::{DmaIncrement, Engine, How};
pub use payload::{Compression, Integrity, Limits, Neff};
pub use scan::{
    scan_file, scan_folder, EngineInfo, MemberRow, Opened, ParseJson, Report, Role, StreamRef,
    StreamSink, Subgraph,
};
