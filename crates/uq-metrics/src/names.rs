//! Enums named in configs and on the command line: `ALL`, `NAMES`, `name`, `Display` and
//! `FromStr` from one list of variants and names.

/// `named!(Type, UnknownVariant, [Variant => "name", ...])`: the name table of a fieldless enum
/// whose variants are listed in declaration order; an unknown name is
/// `MetricsError::UnknownVariant(name)`.
macro_rules! named {
    ($ty:ident, $unknown:ident, [$($variant:ident => $name:literal),+ $(,)?]) => {
        impl $ty {
            /// Every variant, in declaration order.
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            /// The names `FromStr` accepts, in the order of `ALL`.
            pub const NAMES: [&'static str; [$($name),+].len()] = [$($name),+];

            /// The name `FromStr` accepts for this variant.
            pub fn name(self) -> &'static str {
                Self::NAMES[self as usize]
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::error::MetricsError;

            fn from_str(s: &str) -> $crate::error::Result<Self> {
                Self::NAMES
                    .iter()
                    .position(|&name| name == s)
                    .map(|i| Self::ALL[i])
                    .ok_or_else(|| $crate::error::MetricsError::$unknown(s.to_string()))
            }
        }
    };
}

pub(crate) use named;
