//! Target names on the command line (`gate --targets`, `replay --target`):
//! parsed against the target registry ([`crate::targets::TARGETS`]), whose
//! names clap also lists in `--help` (`[possible values: ...]`), so the help
//! never drifts from the registry.

use crate::targets::{parse_gate_target, Target};
use clap::builder::{PossibleValue, TypedValueParser};
use std::ffi::OsStr;

/// A clap value parser for a target name.
#[derive(Clone, Copy, Debug)]
pub struct TargetArg {
    /// Only targets the gate generates cases for.
    gate_only: bool,
}

impl TargetArg {
    /// Any registry target (`replay --target`).
    pub const fn any() -> TargetArg {
        TargetArg { gate_only: false }
    }

    /// A gate target (`gate --targets`).
    pub const fn gate() -> TargetArg {
        TargetArg { gate_only: true }
    }

    /// The names this parser accepts, in registry order.
    pub fn names(self) -> Vec<&'static str> {
        let ts: Vec<Target> = if self.gate_only {
            Target::gate_targets()
        } else {
            Target::all().collect()
        };
        ts.into_iter().map(Target::name).collect()
    }
}

impl TypedValueParser for TargetArg {
    type Value = Target;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Target, clap::Error> {
        let s = value.to_string_lossy();
        let parsed = if self.gate_only {
            parse_gate_target(&s)
        } else {
            s.parse::<Target>()
        };
        parsed.map_err(|e| {
            let flag = arg.map_or_else(|| "TARGET".to_string(), ToString::to_string);
            clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!("invalid value '{s}' for '{flag}': {e}\n"),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.names().into_iter().map(PossibleValue::new)))
    }
}
