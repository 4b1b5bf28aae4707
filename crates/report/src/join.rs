//! Runs made at different times, joined into one report (`uqformer compare`): their method
//! entries side by side, the paired comparisons recomputed, the figures redrawn from each run's
//! `summary.json` and `curves.json`. Runs join only when their data are the same (`[data]`
//! alike but for the evaluation batch): otherwise their numbers are not comparable.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::compare::compare;
use crate::curves::{CURVES_FILE, RunCurves};
use crate::error::{ReportError, Result};
use crate::render::{Rendered, render};
use crate::stored::StoredConfig;
use crate::summary::Summary;

/// The report, figures and page of one run directory, drawn again from its `summary.json` and
/// `curves.json` (after the figures' code changed, say).
pub fn redraw(dir: &Path) -> Result<Rendered> {
    let run = Run::read(dir)?;
    render(&run.summary, &run.curves, &run.score())
}

/// `[data]` fields that may differ between joined runs (they change no number but latency).
const MAY_DIFFER: [&str; 1] = ["eval_batch_size"];

/// One run directory as read back.
struct Run {
    dir: PathBuf,
    id: String,
    config: StoredConfig,
    summary: Summary,
    curves: RunCurves,
}

impl Run {
    fn read(dir: &Path) -> Result<Self> {
        let path = dir.join("summary.json");
        let text = std::fs::read_to_string(&path).map_err(|source| ReportError::NotARun {
            path: path.clone(),
            source,
        })?;
        let config = StoredConfig::read(&dir.join("config.toml"))?;
        let summary: Summary = serde_json::from_str(&text)
            .map_err(|e| ReportError::parse(&path, "a run summary", e))?;
        let canonical = dir.canonicalize().ok();
        let name = canonical.as_deref().unwrap_or(dir).file_name();
        let id = name.map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into());
        Ok(Self {
            dir: dir.to_path_buf(),
            id,
            config,
            summary,
            curves: RunCurves::read(dir)?,
        })
    }

    /// The reference the run chose: the one its summary records, else (runs older than that
    /// field) its config's.
    fn reference(&self) -> &str {
        (self.summary.reference.as_deref()).unwrap_or(&self.config.eval.reference)
    }

    /// The headline OOD score: the summary's first, else the config's; runs older than both
    /// fields scored with MSP.
    fn score(&self) -> String {
        (self.summary.ood_scores.first().cloned())
            .or_else(|| self.config.ood_score())
            .unwrap_or_else(|| uq_metrics::Score::Msp.name().into())
    }
}

/// Runs joined: the summary and curves of all of them, and how to read the result.
pub struct Joined {
    pub summary: Summary,
    pub curves: RunCurves,
    /// The first run's OOD score (every run has the same).
    pub score: String,
    /// A Markdown section naming the runs and what was renamed.
    pub preface: String,
    /// How the runs' provenance differs (code, backend, CPU, SIMD, threads), one line per run
    /// that differs from the first: their numbers may differ for that alone.
    pub warnings: Vec<String>,
}

/// Joins the run directories `dirs` (two or more), in order. A run of the same experiment as
/// every earlier one on other seeds (a study run in parts) continues their methods: its entries
/// join theirs under the same names, and the comparisons pair all the seeds. Otherwise a method
/// name found in an earlier run gets `@<run-id>` in a later one. Refuses runs whose data differ, naming the
/// field and both values.
pub fn join_runs(dirs: &[PathBuf], reference: Option<&str>) -> Result<Joined> {
    if dirs.len() < 2 {
        return Err(ReportError::Invalid(
            "compare: give two or more run directories".into(),
        ));
    }
    let runs = dirs
        .iter()
        .map(|d| Run::read(d))
        .collect::<Result<Vec<_>>>()?;
    let first = &runs[0];
    for run in &runs[1..] {
        check_same_data(first, run)?;
    }
    let mut summary = Summary {
        experiment: title(&runs),
        seeds: Vec::new(),
        methods: Vec::new(),
        comparisons: Vec::new(),
        retained: Vec::new(),
        claims: Vec::new(),
        ood_scores: first.summary.ood_scores.clone(),
        provenance: None,
        // The first run's choices, as for the data and the margins.
        baseline: first.summary.baseline.clone(),
        reference: None,
    };
    let mut curves = RunCurves::default();
    let mut preface = String::from(
        "## Runs compared\n\n| Run | Experiment | Seeds | Methods | Curves |\n|---|---|---|---|---|\n",
    );
    let mut renamed = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for (i, run) in runs.iter().enumerate() {
        // A part of the first run's experiment on other seeds continues its methods.
        let part = continues_on_other_seeds(&runs[..i], run);
        // A method seen before is renamed with its variants: `single@<id>`, `single@<id>+ts`.
        let rename = |method: &str| match seen.contains(method) && !part {
            true => format!("{method}@{}", run.id),
            false => method.to_string(),
        };
        let names_now = take_entries(run, &rename, &mut summary, &mut curves);
        for (old, new) in names_now.iter().filter(|(old, new)| old != new) {
            renamed.push(format!("`{old}` of run {} is `{new}`", run.id));
        }
        preface.push_str(&run_row(run));
        seen.extend(run.summary.methods.iter().map(|m| m.name.clone()));
        for s in &run.summary.seeds {
            if !summary.seeds.contains(s) {
                summary.seeds.push(*s);
            }
        }
    }
    preface.push('\n');
    if !renamed.is_empty() {
        let _ = writeln!(preface, "Renamed: {}.\n", renamed.join("; "));
    }
    preface.push_str(&batch_note(&runs));
    let warnings = provenance_warnings(&runs);
    if !warnings.is_empty() {
        let _ = writeln!(
            preface,
            "Provenance differs (results can move with the code, the kernels' SIMD width and the \
             threads): {}.\n",
            warnings.join("; ")
        );
    }
    let reference = reference.unwrap_or(first.reference());
    summary.comparisons = compare(&summary.methods, reference, &first.config.eval.margins);
    summary.reference = Some(reference.to_string());
    // The first run's declared claims, over every joined seed.
    crate::conclude(&mut summary, &first.config.claims);
    Ok(Joined {
        summary,
        curves,
        score: first.score(),
        preface,
        warnings,
    })
}

/// The experiments joined, each named once: the joined report's title.
fn title(runs: &[Run]) -> String {
    let mut seen = BTreeSet::new();
    let names = runs.iter().map(|r| r.summary.experiment.as_str());
    let first_times: Vec<&str> = names.filter(|n| seen.insert(*n)).collect();
    first_times.join(" + ")
}

/// For each run after the first whose provenance differs from the first's (or that records
/// none where the first does), a line saying how.
fn provenance_warnings(runs: &[Run]) -> Vec<String> {
    let first = &runs[0];
    (runs[1..].iter())
        .filter_map(|run| {
            let differences = match (&first.summary.provenance, &run.summary.provenance) {
                (Some(a), Some(b)) => a.differences(b),
                (None, None) => Vec::new(),
                (a, _) => vec![format!(
                    "only run {} records its provenance",
                    if a.is_some() { &first.id } else { &run.id }
                )],
            };
            (!differences.is_empty()).then(|| {
                format!(
                    "run {} against run {}: {}",
                    first.id,
                    run.id,
                    differences.join(", ")
                )
            })
        })
        .collect()
}

/// Moves `run`'s entries and curves into the join under their new names (`rename` of each
/// method); returns each entry's old name with its new one.
fn take_entries(
    run: &Run,
    rename: &dyn Fn(&str) -> String,
    summary: &mut Summary,
    curves: &mut RunCurves,
) -> BTreeMap<String, String> {
    let mut names_now = BTreeMap::new();
    for m in &run.summary.methods {
        let (mut m, old) = (m.clone(), m.name.clone());
        m.name_for(&rename(&m.method));
        names_now.insert(old, m.name.clone());
        summary.methods.push(m);
    }
    for c in &run.curves.methods {
        let mut c = c.clone();
        c.name = names_now.get(&c.name).cloned().unwrap_or(c.name);
        curves.methods.push(c);
    }
    for s in &run.curves.sweeps {
        let mut s = s.clone();
        s.method = rename(&s.method);
        curves.sweeps.push(s);
    }
    for p in &run.curves.predictors {
        let mut p = p.clone();
        p.method = rename(&p.method);
        curves.predictors.push(p);
    }
    // A training two runs share (the same cached base model) is shown once.
    for log in &run.curves.training {
        if !curves.training.iter().any(|l| l.label == log.label) {
            curves.training.push(log.clone());
        }
    }
    names_now
}

/// The run's row of the "Runs compared" table.
fn run_row(run: &Run) -> String {
    let names: BTreeSet<&str> = run
        .summary
        .methods
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    let seeds: Vec<String> = run.summary.seeds.iter().map(u64::to_string).collect();
    let curves = match run.dir.join(CURVES_FILE).is_file() {
        true => "yes",
        false => "none (run predates curves.json)",
    };
    format!(
        "| `{}` | {} | {} | {} | {curves} |\n",
        run.dir.display(),
        run.summary.experiment,
        seeds.join(", "),
        names.len(),
    )
}

/// A warning when the runs timed latency at different evaluation batches, else nothing.
fn batch_note(runs: &[Run]) -> String {
    let batches: BTreeSet<i64> = (runs.iter())
        .filter_map(|r| r.config.eval_batch_size())
        .collect();
    if batches.len() < 2 {
        return String::new();
    }
    let batches: Vec<String> = batches.iter().map(i64::to_string).collect();
    format!(
        "The runs timed latency at different evaluation batches ({}): latency columns are not \
         comparable across runs.\n\n",
        batches.join(", ")
    )
}

impl Joined {
    /// The joined report: the preface, then the tables and figures of a run.
    pub fn render(&self) -> Result<Rendered> {
        crate::render::render_with(&self.summary, &self.curves, &self.score, &self.preface)
    }
}

/// Whether `run` is the experiment of every run in `earlier` on seeds none of them has: the
/// same resolved `config.toml` but for `[experiment] seeds` (and [`MAY_DIFFER`]), so its
/// methods are the same methods and their entries join them rather than sit beside them.
fn continues_on_other_seeds(earlier: &[Run], run: &Run) -> bool {
    let Some(first) = earlier.first() else {
        return false;
    };
    let recipe = |r: &Run| {
        let mut table = r.config.table.clone();
        if let Some(toml::Value::Table(t)) = table.get_mut("experiment") {
            t.remove("seeds");
        }
        if let Some(toml::Value::Table(t)) = table.get_mut("data") {
            t.retain(|k, _| !MAY_DIFFER.contains(&k));
        }
        table
    };
    let mine = recipe(run);
    for other in earlier {
        let shared = (run.summary.seeds.iter()).any(|s| other.summary.seeds.contains(s));
        if shared || recipe(other) != mine {
            return false;
        }
    }
    recipe(first) == mine
}

/// The `[data]` sections of two runs, field by field (but for [`MAY_DIFFER`]).
fn check_same_data(a: &Run, b: &Run) -> Result<()> {
    let (ta, tb) = (&a.config.data, &b.config.data);
    let keys: BTreeSet<&String> = ta.keys().chain(tb.keys()).collect();
    for key in keys
        .into_iter()
        .filter(|k| !MAY_DIFFER.contains(&k.as_str()))
    {
        let (va, vb) = (ta.get(key), tb.get(key));
        if va != vb {
            let show =
                |v: Option<&toml::Value>| v.map_or("(not set)".to_string(), toml::Value::to_string);
            return Err(ReportError::Invalid(format!(
                "compare: the runs use different data, so their numbers are not comparable: \
                 [data] {key} is {} in {} but {} in {}",
                show(va),
                a.dir.display(),
                show(vb),
                b.dir.display()
            )));
        }
    }
    Ok(())
}
