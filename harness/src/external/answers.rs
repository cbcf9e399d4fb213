//! Client replies (tpb-subject/1 lines) as the engine's typed values: a
//! reply that is no answer as a [`Fault`], a LUT answer as a
//! [`LutResult`].

use super::names::foreign;
use super::process::{FaultClass, Reply as ClientReply};
use super::protocol::Answer;
use crate::subjects::{Fault, LutResult, Reply};

/// A client reply that is no answer, as the engine's fault.
pub fn fault(r: ClientReply) -> Fault {
    match r {
        Err(f) => match f.class {
            FaultClass::Crash | FaultClass::NotSent => Fault::Crash(f.detail),
            FaultClass::Timeout => Fault::Timeout(f.detail),
            FaultClass::Protocol => Fault::Protocol(f.detail),
        },
        Ok(Answer::Unsupported) => Fault::Unsupported,
        Ok(a) => Fault::Protocol(format!("answer of the wrong kind: {a:?}")),
    }
}

/// A lines answer to a LUT request, typed.
pub fn lut_reply(r: ClientReply) -> Reply<LutResult> {
    match r {
        Ok(Answer::Wire(w)) => u8::try_from(w)
            .map(Ok)
            .map_err(|_| Fault::Protocol(format!("wire value {w} is not a byte"))),
        Ok(Answer::Refused(why)) => Ok(Err(foreign(&why))),
        other => Err(fault(other)),
    }
}
