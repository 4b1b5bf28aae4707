//! `uqformer plan --device`'s table: each job's and each method's evaluation's FLOPs, peak
//! memory and time, then the totals.

use std::fmt::Write;

use experiment::estimate::{Cost, Estimate};

/// FLOPs with an SI prefix: `35.1 GFLOP`.
fn flops(f: f64) -> String {
    let units = ["", "k", "M", "G", "T", "P", "E", "Z"];
    let mut i = 0;
    let mut v = f;
    while v >= 1000.0 && i + 1 < units.len() {
        v /= 1000.0;
        i += 1;
    }
    format!("{v:.1} {}FLOP", units[i])
}

/// Bytes in GB (10⁹, as datasheets count), `!` when over the device's memory.
fn memory(cost: &Cost) -> String {
    let flag = if cost.over_memory { " !" } else { "" };
    format!("{:.2} GB{flag}", cost.memory_bytes as f64 / 1e9)
}

/// Seconds as s, min, h or days.
fn time(s: f64) -> String {
    match s {
        s if s < 60.0 => format!("{s:.1} s"),
        s if s < 3600.0 => format!("{:.1} min", s / 60.0),
        s if s < 86400.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86400.0),
    }
}

/// One row: a name, what it is, then the cost's columns.
fn row(out: &mut String, name: &str, what: &str, cost: &Cost) {
    let (f, m, t) = (flops(cost.flops), memory(cost), time(cost.seconds));
    let _ = writeln!(out, "{name:<22} {what:<48} {f:>13} {m:>11} {t:>10}");
}

/// The estimate as a text table.
pub fn table(e: &Estimate) -> String {
    let d = e.device;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Estimated on {} ({}), {} at {:.1} TFLOPS peak x {:.2} assumed utilisation, {:.0} GB: \
         analytic counts, not measurements (docs/running.md).",
        d.name,
        d.about,
        e.precision.name(),
        d.peak(e.precision) / 1e12,
        d.utilisation,
        d.memory_gb
    );
    let _ = writeln!(
        out,
        "Base model: {:.1} M parameters, {} a sample; {} training samples a seed; a training \
         step counts 3 forwards.\n",
        e.params as f64 / 1e6,
        flops(e.flops_per_sample as f64),
        e.train_samples
    );
    let _ = writeln!(
        out,
        "{:<22} {:<48} {:>13} {:>11} {:>10}",
        "job", "what", "FLOPs", "memory", "time"
    );
    for job in &e.jobs {
        row(&mut out, &job.job.id, &job.job.what, &job.cost);
    }
    for eval in &e.evaluation {
        let what = format!("{} samples a seed, {} seed(s)", eval.samples, eval.seeds);
        row(
            &mut out,
            &format!("eval/{}", eval.method),
            &what,
            &eval.cost,
        );
    }
    let _ = writeln!(
        out,
        "{:<22} {:<48} {:>13} {:>11} {:>10}",
        "total",
        "",
        flops(e.total_flops),
        "",
        time(e.total_seconds)
    );
    let over = (e.jobs.iter().map(|j| &j.cost))
        .chain(e.evaluation.iter().map(|v| &v.cost))
        .any(|c| c.over_memory);
    if over {
        let _ = writeln!(
            out,
            "! over the device's {:.0} GB: a smaller batch (or several devices) is needed",
            d.memory_gb
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{flops, time};

    #[test]
    fn units_scale() {
        assert_eq!(flops(35.1e9), "35.1 GFLOP");
        assert_eq!(flops(999.0), "999.0 FLOP");
        assert_eq!(time(90.0), "1.5 min");
        assert_eq!(time(3.0 * 86400.0), "3.0 days");
    }
}
