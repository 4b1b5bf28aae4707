//! Shards of a list of jobs, for array tasks on a cluster (`--shard K/N`, `--shard auto`): which
//! shard this task is, and which of the jobs it takes. The jobs are costs alone here; the
//! experiment deals each stage of its plan on its own.

use std::str::FromStr;

use crate::error::{Result, RuntimeError};

/// Shard `index` of `count` (0-based), as `--shard K/N` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl FromStr for Shard {
    type Err = RuntimeError;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            RuntimeError::invalid(format!(
                "--shard {s}: expected K/N with 0 <= K < N (e.g. 0/4), or `auto`"
            ))
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        match index < count {
            true => Ok(Self { index, count }),
            false => Err(bad()),
        }
    }
}

impl Shard {
    /// The shard of this array task, from the environment (`var` reads a variable): Slurm's
    /// `SLURM_ARRAY_TASK_ID` with `SLURM_ARRAY_TASK_COUNT` (or `SLURM_ARRAY_TASK_MIN` and
    /// `_MAX`), or Kubernetes' `JOB_COMPLETION_INDEX` with `UQFORMER_SHARDS` (the Job's
    /// `completions`, which Kubernetes does not pass on: the Job sets it).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let number = |name: &str| -> Result<Option<usize>> {
            match var(name) {
                None => Ok(None),
                Some(v) => (v.trim().parse().map(Some)).map_err(|_| {
                    RuntimeError::invalid(format!(
                        "--shard auto: {name}={v:?} is not a whole number"
                    ))
                }),
            }
        };
        let found = match number("SLURM_ARRAY_TASK_ID")? {
            Some(id) => match (
                number("SLURM_ARRAY_TASK_MIN")?,
                number("SLURM_ARRAY_TASK_MAX")?,
                number("SLURM_ARRAY_TASK_COUNT")?,
            ) {
                (Some(min), Some(max), _) if min <= id && id <= max => {
                    Some((id - min, max - min + 1))
                }
                (None, None, Some(count)) => Some((id, count)),
                _ => None,
            },
            None => match number("JOB_COMPLETION_INDEX")? {
                Some(index) => number("UQFORMER_SHARDS")?.map(|count| (index, count)),
                None => None,
            },
        };
        match found {
            Some((index, count)) if index < count => Ok(Self { index, count }),
            _ => Err(RuntimeError::invalid(
                "--shard auto: no array task found in the environment; expected Slurm's \
                 SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX (or \
                 SLURM_ARRAY_TASK_COUNT), or Kubernetes' JOB_COMPLETION_INDEX with \
                 UQFORMER_SHARDS (the Job's completions)",
            )),
        }
    }
}

/// The indices of `costs` that `shard` takes, in order: the jobs by cost, the dearest first,
/// each to the shard with the least cost so far (ties: the lower shard, the earlier job), so the
/// shards' totals differ by at most one job's cost and every machine deals alike.
pub fn deal(costs: &[f64], shard: Shard) -> Vec<usize> {
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    let mut load = vec![0.0f64; shard.count];
    let mut mine = Vec::new();
    for i in order {
        let least = (0..shard.count)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .unwrap_or(0);
        load[least] += costs[i];
        if least == shard.index {
            mine.push(i);
        }
    }
    mine.sort_unstable();
    mine
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_from_k_of_n_and_refuse_the_rest() {
        assert_eq!(
            "1/4".parse::<Shard>().unwrap(),
            Shard { index: 1, count: 4 }
        );
        for bad in ["4/4", "1", "a/2", "1/0", "-1/2"] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("K/N"), "{e}");
        }
    }

    #[test]
    fn array_tasks_are_read_as_slurm_and_kubernetes_set_them() {
        let env = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = (vars.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Shard::from_env(move |name| {
                (vars.iter())
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            })
        };
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ]);
        assert_eq!(slurm.unwrap(), Shard { index: 2, count: 3 });
        // `--array=1-4`: Slurm numbers from 1 and sets MIN and MAX (and COUNT).
        let from_one = env(&[
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(from_one.unwrap(), Shard { index: 0, count: 4 });
        let k8s = env(&[("JOB_COMPLETION_INDEX", "0"), ("UQFORMER_SHARDS", "2")]);
        assert_eq!(k8s.unwrap(), Shard { index: 0, count: 2 });
        for vars in [
            &[][..],
            &[("JOB_COMPLETION_INDEX", "0")][..],
            &[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ][..],
        ] {
            let e = env(vars).unwrap_err().to_string();
            assert!(
                e.contains("SLURM_ARRAY_TASK_ID") && e.contains("JOB_COMPLETION_INDEX"),
                "{e}"
            );
        }
        let e = env(&[("SLURM_ARRAY_TASK_ID", "x")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("SLURM_ARRAY_TASK_ID=\"x\""), "{e}");
    }

    #[test]
    fn dealt_shares_cover_every_job_once_within_one_job_of_each_other() {
        let costs = [4.0, 3.0, 3.0, 3.0, 3.0, 3.0];
        for count in 1..=4 {
            let shares: Vec<Vec<usize>> = (0..count)
                .map(|index| deal(&costs, Shard { index, count }))
                .collect();
            let mut all: Vec<usize> = shares.iter().flatten().copied().collect();
            all.sort_unstable();
            assert_eq!(all, (0..costs.len()).collect::<Vec<_>>(), "{count} shards");
            let loads: Vec<f64> = (shares.iter())
                .map(|s| s.iter().map(|&i| costs[i]).sum())
                .collect();
            let spread = loads.iter().cloned().fold(f64::MIN, f64::max)
                - loads.iter().cloned().fold(f64::MAX, f64::min);
            assert!(spread <= 4.0, "{count} shards: {loads:?}");
        }
        // Two shards: 4 + 3 + 3 (jobs 0, 3, 5) against 3 + 3 + 3 (jobs 1, 2, 4).
        assert_eq!(deal(&costs, Shard { index: 0, count: 2 }), [0, 3, 5]);
        assert_eq!(deal(&costs, Shard { index: 1, count: 2 }), [1, 2, 4]);
    }
}
