//! One shape for every set of things the project knows by name: method kinds, head-importance
//! strategies, pretrained backbones, presets, data sets, OOD scores, detectors, backends.
//!
//! A [`Registry`] is a static list of [`Entry`]s, each a name (what experiment files and the
//! command line say), a one-line description (`about`, for `uqformer list` and error messages)
//! and its item: a constructor or parser for an open set, the value itself for a closed enum.
//! Looking a name up gives the entry or an [`Unknown`] error that lists the valid names.
//!
//! ```
//! use registry::{Entry, Registry};
//!
//! #[derive(Debug, Clone, Copy, PartialEq)]
//! enum Pool { Mean, Cls }
//!
//! const POOLS: Registry<Pool> = Registry::new("pooling", &[
//!     Entry { name: "mean", about: "the tokens' mean", item: Pool::Mean },
//!     Entry { name: "cls", about: "the first token", item: Pool::Cls },
//! ]);
//! const ALL: [Pool; 2] = POOLS.values();
//!
//! assert_eq!(POOLS.get("cls").unwrap().item, Pool::Cls);
//! assert_eq!(POOLS.entry_of(Pool::Mean).name, "mean");
//! assert_eq!(ALL, [Pool::Mean, Pool::Cls]);
//! assert_eq!(
//!     POOLS.get("max").unwrap_err().to_string(),
//!     "unknown pooling `max`: expected one of mean, cls"
//! );
//! ```

use std::mem::discriminant;

/// A thing known by name.
#[derive(Debug)]
pub struct Entry<T: 'static> {
    /// Its name in experiment files and on the command line.
    pub name: &'static str,
    /// What it is, in one line.
    pub about: &'static str,
    /// What the name stands for: a constructor, a parser or a value.
    pub item: T,
}

/// Every entry of one set, in the order listings show them.
#[derive(Debug)]
pub struct Registry<T: 'static> {
    what: &'static str,
    entries: &'static [Entry<T>],
}

impl<T> Registry<T> {
    /// `what` names the set in errors ("method kind", "data set").
    pub const fn new(what: &'static str, entries: &'static [Entry<T>]) -> Self {
        Self { what, entries }
    }

    /// What the set is called in errors.
    pub const fn what(&self) -> &'static str {
        self.what
    }

    /// Every entry, in order.
    pub const fn entries(&self) -> &'static [Entry<T>] {
        self.entries
    }

    /// The entry called `name`.
    pub fn get(&self, name: &str) -> Result<&'static Entry<T>, Unknown> {
        (self.entries.iter().find(|e| e.name == name)).ok_or_else(|| self.unknown(name))
    }

    /// The error for `name`, which this set does not hold as given (for names with parts that
    /// a caller parses itself).
    pub fn unknown(&self, name: &str) -> Unknown {
        Unknown {
            what: self.what,
            name: name.to_string(),
            valid: self.names(),
        }
    }

    /// Every name, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.name).collect()
    }

    /// Every name, in order, joined for a message.
    pub fn listed(&self) -> String {
        self.names().join(", ")
    }
}

impl<T: Copy> Registry<T> {
    /// Every value of a closed set, in order (for a type's `ALL`); `N` must be the entry count.
    pub const fn values<const N: usize>(&self) -> [T; N] {
        assert!(self.entries.len() == N, "N is not the registry's length");
        let mut out = [self.entries[0].item; N];
        let mut i = 1;
        while i < N {
            out[i] = self.entries[i].item;
            i += 1;
        }
        out
    }

    /// The entry of `value`'s variant (a variant with fields is found by the variant alone: its
    /// entry holds the default fields).
    ///
    /// # Panics
    /// If the variant has no entry: a closed set lists every variant, which its tests check.
    pub fn entry_of(&self, value: T) -> &'static Entry<T> {
        (self.entries.iter())
            .find(|e| discriminant(&e.item) == discriminant(&value))
            .unwrap_or_else(|| panic!("a {} without an entry", self.what))
    }
}

/// A name that is not in its registry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{name}`: expected one of {}", valid.join(", "))]
pub struct Unknown {
    /// The set looked in.
    pub what: &'static str,
    /// The name given.
    pub name: String,
    /// The names the set has.
    pub valid: Vec<&'static str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Shape {
        Dot,
        Line(u8),
    }

    const SHAPES: Registry<Shape> = Registry::new(
        "shape",
        &[
            Entry {
                name: "dot",
                about: "a point",
                item: Shape::Dot,
            },
            Entry {
                name: "line",
                about: "a segment",
                item: Shape::Line(1),
            },
        ],
    );

    #[test]
    fn a_variant_with_fields_is_found_by_its_variant() {
        assert_eq!(SHAPES.entry_of(Shape::Line(7)).name, "line");
        assert_eq!(SHAPES.entry_of(Shape::Dot).about, "a point");
    }

    #[test]
    fn an_unknown_name_lists_the_valid_ones() {
        let err = SHAPES.get("circle").unwrap_err();
        assert_eq!(err.valid, ["dot", "line"]);
        assert_eq!(err.name, "circle");
        assert_eq!(SHAPES.listed(), "dot, line");
    }

    #[test]
    fn values_follow_the_entries() {
        const ALL: [Shape; 2] = SHAPES.values();
        assert_eq!(ALL, [Shape::Dot, Shape::Line(1)]);
    }
}
