//! How a table cell shows a statistic over seeds.

use super::groups::Stat;

/// What a cell shows when its value is missing.
pub(super) const NA: &str = "n/a";

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Unit {
    /// A fraction shown as a percentage, 2 decimals.
    Percent,
    /// 4 decimals.
    Plain,
    /// A count with an SI suffix (k, M, G, T).
    Count,
    /// Bytes shown in MiB, 2 decimals.
    Mib,
    /// Seconds, 1 decimal.
    Seconds,
    /// A ratio, 2 decimals and `×`.
    Times,
}

impl Unit {
    pub(super) fn show(self, x: f64) -> String {
        match self {
            Unit::Percent => format!("{:.2}", 100.0 * x),
            Unit::Plain => format!("{x:.4}"),
            Unit::Mib => format!("{:.2}", x / (1u64 << 20) as f64),
            Unit::Seconds => format!("{x:.1}"),
            Unit::Times => format!("{x:.2}×"),
            Unit::Count => {
                let scaled = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
                    .into_iter()
                    .find(|(s, _)| x.abs() >= *s);
                match scaled {
                    Some((s, suffix)) => format!("{:.2}{suffix}", x / s),
                    None => format!("{x:.0}"),
                }
            }
        }
    }
}

pub(super) fn cell(stat: Option<Stat>, unit: Unit) -> String {
    match stat {
        None => NA.to_string(),
        // Counts (params, FLOPs) do not depend on the seed; "± 0" would only add noise.
        Some(Stat {
            mean,
            std: Some(sd),
        }) if !(unit == Unit::Count && sd == 0.0) => {
            format!("{} ± {}", unit.show(mean), unit.show(sd))
        }
        Some(Stat { mean, .. }) => unit.show(mean),
    }
}

pub(super) fn mean_cell(stat: Option<Stat>, unit: Unit) -> String {
    stat.map_or(NA.to_string(), |s| unit.show(s.mean))
}
