//! [`Client`]: the client of an external subject for one generation, over
//! a `cmd:` subject's lines or a `lib:` subject's worker; both keep one [`Kept`].

use super::process::{ProcessSubject, Reply};
use super::protocol::{wrong_kind, Answer, Request};
use super::shm_client::ShmChannel;
use super::supervisor::Kept;
use super::verdict::foreign;
use crate::subjects::{Fault, LutResult, Reply as Typed, Verdict};

pub enum Client {
    Lines(ProcessSubject),
    Shm(ShmChannel),
}

impl std::ops::Deref for Client {
    type Target = Kept;

    fn deref(&self) -> &Kept {
        match self {
            Client::Lines(c) => c,
            Client::Shm(c) => c,
        }
    }
}

impl Client {
    pub fn call(&mut self, r: &Request) -> Reply {
        self.call_batch(std::slice::from_ref(r)).remove(0)
    }

    /// One reply per request, in order; `tick` as answers arrive.
    pub fn call_batch_with(&mut self, reqs: &[Request], tick: &dyn Fn()) -> Vec<Reply> {
        match self {
            Client::Lines(c) => c.call_batch(reqs, tick),
            Client::Shm(c) => c.call_batch(reqs, tick),
        }
    }

    pub fn call_batch(&mut self, reqs: &[Request]) -> Vec<Reply> {
        self.call_batch_with(reqs, &|| {})
    }

    pub fn shm(&mut self) -> Option<&mut ShmChannel> {
        match self {
            Client::Shm(c) => Some(c),
            Client::Lines(_) => None,
        }
    }
}

/// A client reply that is no answer, as the judge's fault.
pub fn fault(r: Reply) -> Fault {
    match r {
        Err(f) => f,
        Ok(Answer::Unsupported) => Fault::Unsupported,
        Ok(a) => wrong_kind(&a),
    }
}

pub fn verdict_reply(r: Reply) -> Typed<Verdict> {
    match r {
        Ok(Answer::Verdict(p)) => Ok(p.map(|s| crate::subjects::Predicate::from_name(&s))),
        other => Err(fault(other)),
    }
}

/// `r`, or `None` if never sent (the judge counts that case as not run).
pub fn sent(r: Reply) -> Option<Reply> {
    (!matches!(r, Err(Fault::NotSent(_)))).then_some(r)
}

pub fn lut_reply(r: Reply) -> Typed<LutResult> {
    match r {
        Ok(Answer::Wire(w)) => u8::try_from(w)
            .map(Ok)
            .map_err(|_| Fault::Protocol(format!("wire value {w} is not a byte"))),
        Ok(Answer::Refused(why)) => Ok(Err(foreign(&why))),
        other => Err(fault(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::{lut_reply, Answer};
    use crate::subjects::Fault;

    #[test]
    fn a_lines_lut_answer_is_a_byte_or_a_protocol_fault() {
        assert!(matches!(lut_reply(Ok(Answer::Wire(0xAB))), Ok(Ok(0xAB))));
        let Err(Fault::Protocol(why)) = lut_reply(Ok(Answer::Wire(256))) else {
            panic!("wire 256 is not a byte, so a protocol fault");
        };
        assert_eq!(why, "wire value 256 is not a byte");
    }
}
