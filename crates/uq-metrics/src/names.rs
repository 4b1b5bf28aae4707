//! The table a closed set of values is known by: one row per variant with its name and a line on
//! what it is, from which the value's name, its description, parsing by name and the list of
//! names in error messages are all read.

use std::mem::discriminant;

/// One row per variant, in declaration order: `(value, name, description)`. A variant with
/// parameters is found by its variant alone; its row holds the default parameters.
pub(crate) struct Names<T: 'static, const N: usize>(pub [(T, &'static str, &'static str); N]);

impl<T: Copy, const N: usize> Names<T, N> {
    /// Every value, in the table's order (for a type's `ALL`).
    pub const fn values(&self) -> [T; N] {
        let mut out = [self.0[0].0; N];
        let mut i = 1;
        while i < N {
            out[i] = self.0[i].0;
            i += 1;
        }
        out
    }

    /// The name of `value`'s variant.
    pub fn name(&self, value: T) -> &'static str {
        self.row(value).1
    }

    /// What `value`'s variant is, in a line.
    pub fn describe(&self, value: T) -> &'static str {
        self.row(value).2
    }

    /// Every name, in order, joined for an error message.
    pub fn listed(&self) -> String {
        self.0.map(|(_, name, _)| name).join(", ")
    }

    /// The value named `name`, or `unknown` of it.
    pub fn parse<E>(&self, name: &str, unknown: impl FnOnce(String) -> E) -> Result<T, E> {
        (self.0.iter().find(|row| row.1 == name))
            .map(|row| row.0)
            .ok_or_else(|| unknown(name.to_string()))
    }

    fn row(&self, value: T) -> &(T, &'static str, &'static str) {
        (self.0.iter())
            .find(|row| discriminant(&row.0) == discriminant(&value))
            .unwrap_or_else(|| unreachable!("every variant has a row"))
    }
}
