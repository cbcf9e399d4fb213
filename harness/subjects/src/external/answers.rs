//! Client replies (tpb-subject/1 lines, shared-memory answers) as the
//! judge's typed values: a reply that is no answer as a [`Fault`], a LUT
//! answer as a [`LutResult`], a verdict as a [`Verdict`].

use super::names::foreign;
use super::process::{Fault as ClientFault, FaultClass, Reply as ClientReply};
use super::protocol::Answer;
use super::shm_client::ShmAnswer;
use crate::subjects::{Fault, LutResult, Reply, Verdict};

/// A client reply that is no answer, as the judge's fault.
pub fn fault(r: ClientReply) -> Fault {
    match r {
        Err(f) => match f.class {
            FaultClass::Crash | FaultClass::NotSent => Fault::Crash(f.detail),
            FaultClass::Timeout => Fault::Timeout(f.detail),
            FaultClass::Protocol => Fault::Protocol(f.detail),
            FaultClass::Harness => Fault::Harness(f.detail),
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

#[cold]
#[inline(never)]
fn shm_fault(f: ClientFault) -> Fault {
    fault(Err(f))
}

/// A shared-memory verdict, typed (`None`: never sent).
#[inline]
pub fn shm_verdict(a: ShmAnswer) -> Option<Reply<Verdict>> {
    Some(match a {
        ShmAnswer::Fault(f) if f.class == FaultClass::NotSent => return None,
        ShmAnswer::Verdict(v) => Ok(v),
        ShmAnswer::Unsupported => Err(Fault::Unsupported),
        ShmAnswer::Fault(f) => Err(shm_fault(f)),
        other => Err(Fault::Harness(format!(
            "answer of the wrong kind: {other:?}"
        ))),
    })
}

/// A shared-memory LUT answer, typed (an entry never sent is a crash fault,
/// as on the lines transport).
#[inline]
pub fn shm_lut(a: ShmAnswer) -> Reply<LutResult> {
    match a {
        ShmAnswer::Wire(w) => u8::try_from(w)
            .map(Ok)
            .map_err(|_| Fault::Protocol(format!("wire value {w} is not a byte"))),
        ShmAnswer::Refused(n) => Ok(Err(n)),
        ShmAnswer::Unsupported => Err(Fault::Unsupported),
        ShmAnswer::Fault(f) if f.class == FaultClass::NotSent => Err(Fault::Crash(f.detail)),
        ShmAnswer::Fault(f) => Err(shm_fault(f)),
        ShmAnswer::Verdict(_) | ShmAnswer::Record(_) => {
            Err(Fault::Harness("answer of the wrong kind".into()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external::names::foreign;

    #[test]
    fn batch_refusal_names_stay_per_entry() {
        let text = |r: Reply<LutResult>| match r {
            Ok(Ok(w)) => format!("wire {w}"),
            Ok(Err(n)) => format!("refused {}", n.as_str()),
            Err(f) => format!("fault {f:?}"),
        };
        let got: Vec<String> = [
            ShmAnswer::Refused(foreign("out_of_range")),
            ShmAnswer::Refused(foreign("not_dge_op")),
            ShmAnswer::Wire(5),
            ShmAnswer::Refused(foreign("out_of_range")),
            ShmAnswer::Wire(300),
        ]
        .into_iter()
        .map(|a| text(shm_lut(a)))
        .collect();
        assert_eq!(
            got[..4],
            [
                "refused out_of_range",
                "refused not_dge_op",
                "wire 5",
                "refused out_of_range"
            ]
        );
        assert!(got[4].starts_with("fault Protocol"), "{}", got[4]);
    }
}
