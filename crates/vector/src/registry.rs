//! The one table behind each list of formats ([`crate::input::InputFormat`],
//! [`crate::output::OutputFormat`]): a format is a row of its `registry!` call (variant, name,
//! file extensions, help), and the enum, its list, its names, `FromStr` and (feature `clap`) clap's
//! `ValueEnum` all come from that row, so no list can miss a format.

/// Declares a format enum from its table: `Variant = "name", ["ext", …], "help";` per row.
macro_rules! registry {
    (
        $(#[$meta:meta])*
        pub enum $enum:ident, error $error:ident ($what:literal) {
            $($variant:ident = $name:literal, [$($ext:literal),*], $help:literal;)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum $enum {
            $(#[doc = $help] $variant,)+
        }

        impl $enum {
            /// Every format, in the order of the table.
            pub const ALL: &'static [$enum] = &[$($enum::$variant),+];

            /// The formats' names, in the order of the table.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The format's name.
            pub fn name(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)+
                }
            }

            /// The file extensions (lower case, without the dot) that imply the format.
            pub fn extensions(self) -> &'static [&'static str] {
                match self {
                    $($enum::$variant => &[$($ext),*],)+
                }
            }

            /// One line saying what the format is.
            pub fn help(self) -> &'static str {
                match self {
                    $($enum::$variant => $help,)+
                }
            }

            /// The format a file name's extension implies (case-insensitive), if any.
            pub fn from_extension(path: &std::path::Path) -> Option<$enum> {
                let extension = path.extension()?.to_str()?.to_ascii_lowercase();
                $enum::ALL
                    .iter()
                    .copied()
                    .find(|format| format.extensions().contains(&extension.as_str()))
            }
        }

        #[doc = concat!("A name that is none of [`", stringify!($enum), "::NAMES`].")]
        #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
        #[error("unknown {} '{name}' (supported: {})", $what, $enum::NAMES.join(", "))]
        #[non_exhaustive]
        pub struct $error {
            /// The name as given.
            pub name: String,
        }

        impl std::str::FromStr for $enum {
            type Err = $error;

            /// Parses a format name (case-insensitive).
            fn from_str(name: &str) -> Result<Self, Self::Err> {
                $enum::ALL
                    .iter()
                    .copied()
                    .find(|format| format.name().eq_ignore_ascii_case(name))
                    .ok_or_else(|| $error {
                        name: name.to_owned(),
                    })
            }
        }

        #[cfg(feature = "clap")]
        impl clap::ValueEnum for $enum {
            fn value_variants<'a>() -> &'a [Self] {
                $enum::ALL
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(self.name()).help(self.help()))
            }
        }
    };
}

pub(crate) use registry;
