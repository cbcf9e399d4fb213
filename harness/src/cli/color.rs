//! `--color auto|always|never` and the `NO_COLOR` convention
//! (<https://no-color.org>): `auto` colours only a terminal and only when
//! `NO_COLOR` is unset or empty; an explicit `always` / `never` wins over it.

use std::ffi::OsStr;

/// When to colour the output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset or empty.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    pub fn enabled(self, is_terminal: bool, no_color: Option<&OsStr>) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => is_terminal && no_color.is_none_or(OsStr::is_empty),
        }
    }

    pub fn for_stdout(self) -> bool {
        use std::io::IsTerminal;
        self.enabled(
            std::io::stdout().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::ColorChoice::*;
    use std::ffi::OsStr;

    #[test]
    fn auto_follows_the_terminal_and_no_color_explicit_choices_win() {
        let set = Some(OsStr::new("1"));
        let empty = Some(OsStr::new(""));
        assert!(Auto.enabled(true, None));
        assert!(Auto.enabled(true, empty), "an empty NO_COLOR is unset");
        assert!(!Auto.enabled(true, set));
        assert!(!Auto.enabled(false, None));
        assert!(Always.enabled(false, set));
        assert!(!Never.enabled(true, None));
    }
}
