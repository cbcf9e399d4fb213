//! [`Arch`]: the hardware generation a run targets (`v2` … `v5`).
//!
//! This is the wire generation a subject serves (the `arch` of the
//! `tpb-subject/1` hello), not the compiler's IR `Arch` enum (that is
//! [`crate::subjects::ir_arch`]).

use std::fmt;
use std::str::FromStr;

/// A hardware generation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    /// v2 (the default).
    #[default]
    V2,
    /// v3.
    V3,
    /// v4.
    V4,
    /// v5.
    V5,
}

impl Arch {
    /// Every generation, oldest first.
    pub const ALL: [Arch; 4] = [Arch::V2, Arch::V3, Arch::V4, Arch::V5];

    /// Stable name (`v2` … `v5`).
    pub fn name(self) -> &'static str {
        match self {
            Arch::V2 => "v2",
            Arch::V3 => "v3",
            Arch::V4 => "v4",
            Arch::V5 => "v5",
        }
    }
}

impl Arch {
    /// Core's spelling of this generation.
    pub fn generation(self) -> tpb_core::Generation {
        use tpb_core::Generation as G;
        match self {
            Arch::V2 => G::V2,
            Arch::V3 => G::V3,
            Arch::V4 => G::V4,
            Arch::V5 => G::V5,
        }
    }

    /// The `Arch` of core's generation `g`.
    pub fn of(g: tpb_core::Generation) -> Arch {
        use tpb_core::Generation as G;
        match g {
            G::V2 => Arch::V2,
            G::V3 => Arch::V3,
            G::V4 => Arch::V4,
            G::V5 => Arch::V5,
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A string that is not `v2` … `v5`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownArch(pub String);

impl fmt::Display for UnknownArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown arch `{}` (expected one of: v2, v3, v4, v5)",
            self.0
        )
    }
}

impl std::error::Error for UnknownArch {}

impl FromStr for Arch {
    type Err = UnknownArch;
    fn from_str(s: &str) -> Result<Arch, UnknownArch> {
        Arch::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| UnknownArch(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_display_round_trip() {
        for a in Arch::ALL {
            assert_eq!(a.to_string().parse::<Arch>(), Ok(a));
        }
        assert_eq!(Arch::default(), Arch::V2);
        assert!("v1".parse::<Arch>().is_err());
        assert!("V2".parse::<Arch>().is_err());
    }
}
