//! Tests of the `collective_lowering` kind: planted slips of a lowering,
//! each caught by the comparison.

use super::*;
use crate::generators::SplitMix64;
use crate::kinds::test_subjects::Silent;

/// Core, with the last byte of each instruction's first record flipped.
struct Flipped(Box<dyn Reference>);

crate::kinds::test_subjects::stand_in_subject! { Flipped, "flipped";
    fn lower_module(&self, insns: &[IrInstruction]) -> Reply<ModuleAnswer> {
        crate::subjects::module_answer(self, insns)
    }
}

impl Reference for Flipped {
    fn lower(&self, insns: &[IrInstruction]) -> Reply<LoweredModule> {
        let mut m = self.0.lower(insns)?;
        for l in m.instrs.iter_mut().flatten() {
            if let Some(r) = l.records.first_mut() {
                r[63] ^= 1;
            }
        }
        Ok(m)
    }
}

#[test]
fn lowering_goes_through_the_subject_interface() {
    let arch = Generation::default();
    let (core, oracle) = (registry::core_for(arch), registry::oracle_for(arch));
    let case = (0..200u64)
        .map(|s| lowering_module::build_case(&SplitMix64(s).bytes(256), Some(arch)))
        .find(|c| {
            compare_case_on(&*core, &*oracle, c)
                .is_ok_and(|o| o.verdicts.iter().any(|v| v.starts_with("ok:")))
        })
        .expect("a case that lowers");
    let d = compare_case_on(&Flipped(registry::core_for(arch)), &*oracle, &case)
        .expect_err("a changed record diverges");
    assert_eq!(d.filed.class, Class::DifferentOutput, "{d:?}");
    assert!(d.filed.text.contains("records: flipped"), "{d:?}");
    assert_eq!(d.filed.key, "DifferentOutput:[#] records");
    let d = compare_case_on(&Silent, &*oracle, &case).expect_err("no answer diverges");
    assert_eq!(d.filed.class, Class::Unsupported, "{d:?}");
    assert_eq!(d.filed.key, "Unsupported:lower");
}

/// What [`Slipped`] gets wrong.
#[derive(Clone, Copy, Debug)]
enum Slip {
    /// `check_lowered` says the records do not give the fields back.
    Recovery,
    /// `check_lowered` is not answered.
    NoRecovery,
    /// `parse_bundle_stream` loses the last item.
    Spans,
    /// `lower` answers another record the second time it is asked.
    Again,
}

/// Core, with one slip in the operations the properties ask.
struct Slipped(Box<dyn Reference>, Slip, std::cell::Cell<u32>);

crate::kinds::test_subjects::stand_in_subject! { Slipped, "slipped";
    fn decode(
        &self,
        b: &[u8; 64],
    ) -> Reply<Result<crate::subjects::Decoded, crate::subjects::DecodeFail>> {
        self.0.decode(b)
    }
    fn lower_module(&self, insns: &[IrInstruction]) -> Reply<ModuleAnswer> {
        crate::subjects::module_answer(self, insns)
    }
}

impl Reference for Slipped {
    fn lower(&self, insns: &[IrInstruction]) -> Reply<LoweredModule> {
        let mut m = self.0.lower(insns)?;
        self.2.set(self.2.get() + 1);
        if matches!(self.1, Slip::Again) && self.2.get() == 2 {
            if let Some(r) = m
                .instrs
                .iter_mut()
                .flatten()
                .find_map(|l| l.records.first_mut())
            {
                r[63] ^= 1;
            }
        }
        Ok(m)
    }
    fn check_lowered(
        &self,
        insn: &IrInstruction,
        records: &[[u8; 64]],
    ) -> Reply<Result<(), String>> {
        match self.1 {
            Slip::Recovery => Ok(Err("planted".into())),
            Slip::NoRecovery => Err(Fault::Unsupported),
            _ => self.0.check_lowered(insn, records),
        }
    }
    fn parse_bundle_stream(&self, bytes: &[u8]) -> Reply<crate::subjects::BundleStreamResult> {
        let mut r = self.0.parse_bundle_stream(bytes)?;
        if let (Slip::Spans, Ok(spans)) = (self.1, &mut r) {
            spans.pop();
        }
        Ok(r)
    }
}

/// Each property is asked through a `Subject` operation: a slip in the
/// operation's answer is a divergence naming it, keyed by what failed.
#[test]
fn the_properties_are_asked_through_the_subject_interface() {
    let arch = Generation::V3;
    let (core, oracle) = (registry::core_for(arch), registry::oracle_for(arch));
    let case = (0..400u64)
        .map(|s| lowering_module::build_case(&SplitMix64(s).bytes(256), Some(arch)))
        .find(|c| {
            compare_case_on(&*core, &*oracle, c)
                .is_ok_and(|o| o.verdicts.iter().any(|v| v.starts_with("ok:")))
        })
        .expect("a case that lowers");
    for (slip, class, what, key) in [
        (
            Slip::Recovery,
            Class::DifferentOutput,
            "decode: planted",
            "Property:[#] decode",
        ),
        (
            Slip::NoRecovery,
            Class::Unsupported,
            "check_lowered: slipped unsupported",
            "Unsupported:[#] decode",
        ),
        (
            Slip::Spans,
            Class::DifferentOutput,
            "stream items: slipped",
            "Property:stream items",
        ),
        (
            Slip::Again,
            Class::DifferentOutput,
            "twice differs",
            "Property:lowering the same case twice differs",
        ),
    ] {
        let left = Slipped(registry::core_for(arch), slip, Default::default());
        let d = compare_case_on(&left, &*oracle, &case).expect_err("a slip diverges");
        assert_eq!(d.filed.class, class, "{slip:?}: {d:?}");
        assert!(d.filed.text.contains(what), "{slip:?}: {d:?}");
        assert_eq!(d.filed.key, key, "{slip:?}: {d:?}");
    }
}
