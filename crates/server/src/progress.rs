//! A progress bar on stderr for long phases (`quiver import`, `quiver bench`): redrawn in place at most five
//! times a second on a terminal; elsewhere (CI logs) one line per tenth of the work.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    label: String,
    unit: &'static str,
    total: u64,
    done: u64,
    started: Instant,
    drawn: Instant,
    tty: bool,
    last_tenth: u64,
    quiet: bool,
}

impl Progress {
    /// A bar for `total` units of work (0 when unknown); `quiet` draws nothing.
    pub fn new(label: impl Into<String>, unit: &'static str, total: u64, quiet: bool) -> Progress {
        let now = Instant::now();
        Progress {
            label: label.into(),
            unit,
            total,
            done: 0,
            started: now,
            drawn: now - Duration::from_secs(1),
            tty: std::io::stderr().is_terminal(),
            last_tenth: 0,
            quiet,
        }
    }

    pub fn set(&mut self, done: u64) {
        self.done = done;
        if self.quiet {
            return;
        }
        if self.tty {
            if self.drawn.elapsed() >= Duration::from_millis(200) {
                self.draw(false);
            }
        } else if let Some(tenth) = done.saturating_mul(10).checked_div(self.total) {
            if tenth > self.last_tenth {
                self.last_tenth = tenth;
                self.draw(false);
            }
        }
    }

    pub fn add(&mut self, n: u64) {
        self.set(self.done + n);
    }

    /// Draws the final state and ends the line.
    pub fn finish(mut self) {
        // Off a terminal the last tenth already printed the final state.
        if !self.quiet && (self.tty || self.total == 0 || self.last_tenth < 10) {
            self.draw(true);
        }
    }

    fn draw(&mut self, last: bool) {
        self.drawn = Instant::now();
        let secs = self.started.elapsed().as_secs_f64().max(1e-9);
        let rate = self.done as f64 / secs;
        const WIDTH: usize = 30;
        let bar = if self.total > 0 {
            let filled = ((self.done.min(self.total) as f64 / self.total as f64) * WIDTH as f64) as usize;
            format!(
                "[{}{}] {:>3}% ",
                "=".repeat(filled),
                " ".repeat(WIDTH - filled),
                self.done.min(self.total) * 100 / self.total
            )
        } else {
            String::new()
        };
        let line = format!(
            "{:<28} {bar}{} {} {:.1}s ({}/s)",
            self.label,
            human(self.done as f64),
            self.unit,
            secs,
            human(rate)
        );
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{line}");
            if last {
                let _ = writeln!(err);
            }
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }
}

/// 1234567 -> "1.23M", 500000 -> "500k".
pub fn human(n: f64) -> String {
    let trim = |s: String| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    match n {
        n if n >= 1e9 => trim(format!("{:.2}", n / 1e9)) + "G",
        n if n >= 1e6 => trim(format!("{:.2}", n / 1e6)) + "M",
        n if n >= 1e4 => trim(format!("{:.1}", n / 1e3)) + "k",
        n => format!("{n:.0}"),
    }
}
