//! Kind `custom_op` (targets `custom_op_group`, `custom_op_stream`): a bundle stream (a
//! `StreamProgram` row's built by [`crate::judge::stream_from_input`], a `StreamRaw` row's the
//! raw bytes) through the SPEC §5.3 custom-op stream parser: core and the oracle on the whole
//! parse, a subject under test on its `validate_stream` answer.

use super::kind::{CaseBuf, Draw, Form, TargetKind};
use crate::generation::Generation;
use crate::generators::gate_inputs;
use crate::judge::nway::{Built, CaseInputs, Judge};
use crate::judge::pair::{self, ReferencePair};
use crate::judge::{stream_from_input, Outcome};
use crate::reach::Reach;
use crate::subjects::hex;
use crate::targets::{Check, Target};
use std::borrow::Cow;

pub struct CustomOpKind;

impl TargetKind for CustomOpKind {
    fn generate(&self, t: Target, d: Draw<'_>, buf: &mut CaseBuf) -> Form {
        if t.check() == Check::StreamProgram {
            gate_inputs::stream_program(d.r, d.kind, &mut buf.bytes);
        } else {
            gate_inputs::banded_bytes(d.r, d.kind, &mut buf.bytes);
        }
        Form::Bytes
    }

    fn case_bundles(&self, t: Target, input: &[u8]) -> Vec<[u8; 64]> {
        super::kind::whole_bundles(&stream_of(t, input))
    }

    fn case_reading(&self, t: Target, input: &[u8]) -> Option<String> {
        if t.check() != Check::StreamProgram {
            return None;
        }
        let stream = stream_from_input(input);
        let mut s = format!(
            "the stream it builds ({} bundles, SPEC §5.3), as sent:\n",
            stream.len() / 64
        );
        for (i, b) in stream.chunks(64).enumerate() {
            s.push_str(&format!("#{i:<3} {}\n", crate::subjects::hex(b)));
        }
        Some(s)
    }

    fn compare(&self, e: &Judge, t: Target, input: &[u8]) -> Outcome {
        // The stream the subjects were asked ahead, else built here.
        let staged = match e.built() {
            Some(Built::Stream(s)) => Some(s),
            _ => None,
        };
        let built;
        let s: &[u8] = match &staged {
            Some(s) => s,
            None => {
                built = stream_of(t, input);
                &built
            }
        };
        // The tests (debug builds) check it is this input's stream.
        #[cfg(debug_assertions)]
        if staged.is_some() {
            assert_eq!(
                s,
                &*stream_of(t, input),
                "the staged stream of a {} case",
                t.name()
            );
        }
        let case = || match t.check() {
            Check::StreamProgram => format!("stream ({} bytes): {}", s.len(), hex(s)),
            _ => String::new(),
        };
        let reference = |p: &ReferencePair<'_>| pair::stream(p, s);
        e.each_with(t, input, &case, reference, &|p| pair::stream_verdict(p, s))
    }

    fn case_inputs(
        &self,
        t: Target,
        _arch: Generation,
        inputs: &mut dyn Iterator<Item = &[u8]>,
    ) -> Option<CaseInputs> {
        Some(CaseInputs::Streams(
            inputs
                // Kept until the batch is judged at its own size: the room
                // `stream_from_input` reserves is given back in place.
                .map(|i| {
                    let mut s = stream_of(t, i).into_owned();
                    s.shrink_to_fit();
                    std::sync::Arc::new(s)
                })
                .collect(),
        ))
    }

    fn declare_reach(&self, t: Target, reach: &mut Reach) {
        if t.check() == Check::StreamProgram {
            reach.declare(&crate::reach::STREAM);
        }
    }

    fn record_reach(&self, t: Target, reach: &mut Reach, input: &[u8]) -> bool {
        if t.check() != Check::StreamProgram {
            return false;
        }
        reach.stream_program(input);
        true
    }
}

fn stream_of(t: Target, input: &[u8]) -> Cow<'_, [u8]> {
    if t.check() == Check::StreamProgram {
        Cow::Owned(stream_from_input(input))
    } else {
        Cow::Borrowed(input)
    }
}
