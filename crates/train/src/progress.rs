//! A progress line on stderr: epoch, bar, loss, accuracy, throughput and ETA.
//!
//! On a terminal the line is redrawn in place; otherwise (logs, CI) one line per epoch is printed.
//! A worker process shares the terminal with the main one: after [`epoch_lines`] it prints one
//! line per epoch, prefixed, and never redraws.

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::time::Instant;

/// The prefix of a process that prints epoch lines only (set once, by a worker).
static LINES_PREFIX: OnceLock<String> = OnceLock::new();

/// From now on, this process's progress is one line per epoch, each starting with `prefix`.
pub fn epoch_lines(prefix: &str) {
    let _ = LINES_PREFIX.set(prefix.to_string());
}

/// Running statistics of one epoch and the line that shows them.
pub struct Progress {
    label: String,
    epochs: usize,
    steps_per_epoch: usize,
    tty: bool,
    quiet: bool,
    started: Instant,
    steps_done: usize,
    steps_total: usize,
    epoch: usize,
    epoch_started: Instant,
    step_in_epoch: usize,
    loss_sum: f64,
    correct: usize,
    seen: usize,
}

impl Progress {
    /// `steps_done` counts steps already trained (when resuming), so the ETA stays honest.
    pub fn new(
        label: &str,
        epochs: usize,
        steps_per_epoch: usize,
        steps_done: usize,
        quiet: bool,
    ) -> Self {
        let now = Instant::now();
        Self {
            label: label.to_string(),
            epochs,
            steps_per_epoch,
            tty: std::io::stderr().is_terminal() && LINES_PREFIX.get().is_none(),
            quiet,
            started: now,
            steps_done: 0,
            steps_total: (epochs * steps_per_epoch).saturating_sub(steps_done),
            epoch: 0,
            epoch_started: now,
            step_in_epoch: 0,
            loss_sum: 0.0,
            correct: 0,
            seen: 0,
        }
    }

    pub fn start_epoch(&mut self, epoch: usize) {
        self.epoch = epoch;
        self.epoch_started = Instant::now();
        (self.loss_sum, self.correct, self.seen) = (0.0, 0, 0);
    }

    /// Records one step: its mean loss, the correct predictions and the batch size.
    pub fn step(&mut self, step_in_epoch: usize, loss: f64, correct: usize, batch: usize) {
        self.steps_done += 1;
        self.loss_sum += loss * batch as f64;
        self.correct += correct;
        self.seen += batch;
        self.step_in_epoch = step_in_epoch;
    }

    /// Redraws the line on a terminal, up to the last recorded step.
    pub fn show(&self) {
        if self.tty && !self.quiet {
            eprint!("\r{}", self.line(self.step_in_epoch + 1));
            let _ = std::io::stderr().flush();
        }
    }

    /// Mean loss and accuracy of the epoch so far.
    pub fn epoch_stats(&self) -> (f64, f64) {
        let n = self.seen.max(1) as f64;
        (self.loss_sum / n, self.correct as f64 / n)
    }

    /// Ends a line drawn in place mid-epoch, so that what is printed next starts on its own.
    pub fn break_line(&self) {
        if self.tty && !self.quiet && self.seen > 0 {
            eprintln!();
        }
    }

    pub fn end_epoch(&mut self) {
        if self.quiet {
            return;
        }
        let line = self.line(self.steps_per_epoch);
        match (self.tty, LINES_PREFIX.get()) {
            (true, _) => eprintln!("\r{line}"),
            (false, Some(prefix)) => eprintln!("{prefix}{line}"),
            (false, None) => eprintln!("{line}"),
        }
    }

    fn line(&self, step: usize) -> String {
        let width = 20;
        let filled = (step * width / self.steps_per_epoch.max(1)).min(width);
        let (loss, acc) = self.epoch_stats();
        let rate = self.seen as f64 / self.epoch_started.elapsed().as_secs_f64().max(1e-9);
        let per_step = self.started.elapsed().as_secs_f64() / self.steps_done.max(1) as f64;
        let eta = per_step * self.steps_total.saturating_sub(self.steps_done) as f64;
        format!(
            "{} epoch {}/{} [{}{}] loss {loss:.4} acc {:.2}% {rate:.0} img/s ETA {}",
            self.label,
            self.epoch + 1,
            self.epochs,
            "#".repeat(filled),
            ".".repeat(width - filled),
            100.0 * acc,
            clock(eta),
        )
    }
}

/// Seconds as `m:ss` (or `h:mm:ss`).
fn clock(seconds: f64) -> String {
    let s = seconds.round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_weighted_epoch_means() {
        let mut p = Progress::new("t", 2, 2, 0, true);
        p.start_epoch(0);
        p.step(0, 1.0, 3, 4);
        p.step(1, 0.5, 2, 2);
        let (loss, acc) = p.epoch_stats();
        assert!((loss - 2.5 / 3.0).abs() < 1e-12 && (acc - 5.0 / 6.0).abs() < 1e-12);
        assert!(p.line(2).contains("epoch 1/2 [####################]"));
    }

    #[test]
    fn clock_formats() {
        assert_eq!(clock(61.4), "1:01");
        assert_eq!(clock(3725.0), "1:02:05");
    }
}
