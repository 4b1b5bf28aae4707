//! The store stage: a run directory
//! `results/<experiment>/<run-id>/{config.toml, summary.json, report.md, ...}`, every file written
//! atomically, with `results/<experiment>/latest` (a symlink) and `results/<experiment>/LATEST`
//! (a text file) naming the newest run. The report comes rendered: the store writes, it does not
//! compute.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use data::{atomic_write, with_path};

use crate::summary::Summary;

/// Writes a new run directory under `results_root/<experiment>/` holding `config.toml` (the
/// resolved config text), `summary.json`, `report.md` (the rendered `report`) and the methods'
/// extra `files` (tables, scores; plain file names), each written atomically, then points
/// `latest` and `LATEST` at it. The run id is the UTC time `YYYYMMDD-HHMMSS`, suffixed `-2`, `-3`,
/// ... when a run with that id exists. Returns the run directory.
pub fn write_run(
    results_root: &Path,
    config_toml: &str,
    summary: &Summary,
    report: &str,
    files: &[(String, Vec<u8>)],
) -> io::Result<PathBuf> {
    let folder = &summary.experiment;
    write_run_at(
        results_root,
        folder,
        config_toml,
        summary,
        report,
        files,
        unix_now()?,
    )
}

/// The folder of joined reports under a results root: they are titled by the experiments they
/// join but kept apart from those experiments' runs (and their `latest`).
pub const JOINED: &str = "compare";

/// [`write_run`] for a joined report ([`crate::join_runs`]): under `results_root/compare/`.
pub fn write_joined(
    results_root: &Path,
    config_toml: &str,
    summary: &Summary,
    report: &str,
    files: &[(String, Vec<u8>)],
) -> io::Result<PathBuf> {
    write_run_at(
        results_root,
        JOINED,
        config_toml,
        summary,
        report,
        files,
        unix_now()?,
    )
}

fn unix_now() -> io::Result<u64> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| io::Error::other(ClockBefore1970(e)))?;
    Ok(now.as_secs())
}

/// The clock's error, kept as the source of the I/O error that stops the write.
#[derive(Debug, thiserror::Error)]
#[error("system clock is before 1970")]
struct ClockBefore1970(#[source] std::time::SystemTimeError);

fn write_run_at(
    results_root: &Path,
    folder: &str,
    config_toml: &str,
    summary: &Summary,
    report: &str,
    files: &[(String, Vec<u8>)],
    unix_secs: u64,
) -> io::Result<PathBuf> {
    let exp_dir = results_root.join(plain_dir_name(folder)?);
    for (name, _) in files {
        plain_dir_name(name)?;
    }
    // Serialise before creating anything, so a failure leaves no empty run directory behind.
    let mut json = serde_json::to_vec_pretty(summary).map_err(io::Error::other)?;
    json.push(b'\n');

    fs::create_dir_all(&exp_dir).map_err(|e| with_path(&exp_dir, e))?;
    let (run_id, run_dir) = claim_run_dir(&exp_dir, &timestamp(unix_secs))?;
    atomic_write(&run_dir.join("config.toml"), config_toml.as_bytes())?;
    atomic_write(&run_dir.join("summary.json"), &json)?;
    atomic_write(&run_dir.join("report.md"), report.as_bytes())?;
    for (name, bytes) in files {
        atomic_write(&run_dir.join(name), bytes)?;
    }
    point_latest(&exp_dir, &run_id)?;
    Ok(run_dir)
}

/// The experiment name (and each extra file's name) becomes one path component: reject anything
/// that would escape it.
fn plain_dir_name(name: &str) -> io::Result<&str> {
    let bad = name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']);
    if bad {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{name:?} (experiment or result file name): expected a plain name (non-empty, no path separators, not `.` or `..`)"
            ),
        ));
    }
    Ok(name)
}

/// Creates the first free `<base>`, `<base>-2`, ... directory; `create_dir` fails on an existing
/// one, so two runs started in the same second never share a directory.
fn claim_run_dir(exp_dir: &Path, base: &str) -> io::Result<(String, PathBuf)> {
    for n in 1..=u32::MAX {
        let id = if n == 1 {
            base.to_string()
        } else {
            format!("{base}-{n}")
        };
        let dir = exp_dir.join(&id);
        match fs::create_dir(&dir) {
            Ok(()) => return Ok((id, dir)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(with_path(&dir, e)),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{}: every run id {base}-N is taken", exp_dir.display()),
    ))
}

/// `LATEST` holds the run id (no newline); `latest` is replaced by renaming a fresh symlink over
/// it, so readers never see it missing.
fn point_latest(exp_dir: &Path, run_id: &str) -> io::Result<()> {
    atomic_write(&exp_dir.join("LATEST"), run_id.as_bytes())?;
    #[cfg(unix)]
    {
        let tmp = exp_dir.join(format!("latest.tmp.{}", std::process::id()));
        match fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(with_path(&tmp, e)),
            _ => {}
        }
        std::os::unix::fs::symlink(run_id, &tmp).map_err(|e| with_path(&tmp, e))?;
        let latest = exp_dir.join("latest");
        if let Err(e) = fs::rename(&tmp, &latest) {
            let _ = fs::remove_file(&tmp);
            return Err(with_path(&latest, e));
        }
    }
    Ok(())
}

/// UTC `YYYYMMDD-HHMMSS` of a Unix time (as run ids are named).
pub fn timestamp(unix_secs: u64) -> String {
    let (days, secs) = (unix_secs / 86_400, unix_secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01, computed in 400-year eras (146 097
/// days each) with years starting in March, so the leap day is the era-year's last day.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153; // month index from March
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = era * 400 + yoe + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_match_gnu_date() {
        // Reference strings from `date -u -d @SECS +%Y%m%d-%H%M%S`.
        let cases = [
            (0, "19700101-000000"),
            (951_782_400, "20000229-000000"),
            (951_868_799, "20000229-235959"),
            (1_234_567_890, "20090213-233130"),
            (1_709_210_096, "20240229-123456"),
            (4_102_444_800, "21000101-000000"),
        ];
        for (secs, want) in cases {
            assert_eq!(timestamp(secs), want, "secs = {secs}");
        }
    }

    /// A summary of no methods.
    fn empty(experiment: &str) -> Summary {
        Summary {
            experiment: experiment.into(),
            seeds: vec![],
            methods: vec![],
            comparisons: vec![],
            retained: vec![],
            claims: vec![],
            ood_scores: vec![],
            provenance: None,
            baseline: None,
            reference: None,
        }
    }

    #[test]
    fn same_second_runs_get_numbered_suffixes() {
        let root =
            std::env::temp_dir().join(format!("uqformer-results-unit-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let summary = empty("exp");
        let ids: Vec<String> = (0..3)
            .map(|_| {
                let dir = write_run_at(&root, "exp", "", &summary, "", &[], 0).expect("write");
                dir.file_name()
                    .expect("run dir name")
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(
            ids,
            ["19700101-000000", "19700101-000000-2", "19700101-000000-3"]
        );
        assert_eq!(
            fs::read_to_string(root.join("exp/LATEST")).expect("LATEST"),
            "19700101-000000-3"
        );
        fs::remove_dir_all(&root).expect("cleanup");
    }

    /// A joined report is titled by its experiments but written under `compare/`, so it never
    /// becomes one of their runs nor moves their `latest`.
    #[test]
    fn joined_reports_go_under_compare() {
        let root =
            std::env::temp_dir().join(format!("uqformer-results-joined-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let summary = empty("study");
        let dir = write_joined(&root, "", &summary, "", &[]).expect("write");
        assert_eq!(dir.parent(), Some(root.join(JOINED).as_path()));
        assert!(!root.join("study").exists());
        fs::remove_dir_all(&root).expect("cleanup");
    }

    #[test]
    fn experiment_name_must_be_one_path_component() {
        let root = std::env::temp_dir();
        for name in ["", ".", "..", "a/b", "..\\x"] {
            let summary = empty(name);
            let err = write_run_at(&root, name, "", &summary, "", &[], 0)
                .expect_err("should be rejected");
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
            assert!(err.to_string().contains("plain name"), "{err}");
        }
    }
}
