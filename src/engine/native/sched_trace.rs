//! `run --sched-trace` on real threads: the kernel's own sched tracepoints,
//! recorded for the run in a tracefs instance of its own, so the native
//! side of a crosscheck row can be read switch by switch beside the
//! simulator's trace of the same run.
//!
//! - An instance (`instances/rmap-storm-PID`), not the global buffer: it has
//!   its own buffer, clock and events, leaves whatever else traces on this
//!   machine alone, and goes with the run (rmdir, also on an error).
//! - `sched_switch`, `sched_waking` and `sched_wakeup`. A wake-up's latency
//!   is measured from sched_waking, which the waker's try_to_wake_up emits:
//!   a wakee bound for an idle CPU is queued on that CPU's wake list and its
//!   sched_wakeup fires there, from the IPI, once the CPU is awake. On the
//!   2-vCPU VM of the README's tables (synchro, rwsem-xadd, 2 CPUs, seed 2)
//!   such a wake-up took 28 us from sched_waking to the wakee's
//!   sched_switch (the median) and 8 us from sched_wakeup.
//! - trace_clock `mono`: the same clock as `--lock-trace`'s stamps, so the
//!   two files merge by time.
//! - Only the CPUs the run is pinned to (tracing_cpumask), all of them
//!   otherwise; everything that ran there is kept (a kworker that took a
//!   CPU from a worker is part of the story).
//! - options/overwrite off: a full buffer drops the newest events rather than
//!   the run's start, and the file says how many were dropped.
//!
//! Tracing is on from just before the world is built to just after the run
//! ends; building the world runs on one thread and switches little.

use crate::fileio::{commit_temp, temp_path};
use crate::{Error, Result};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where tracefs is mounted, newest convention first.
const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
/// The events recorded, as tracefs names them under `events/`.
const EVENTS: [&str; 3] = [
    "sched/sched_switch",
    "sched/sched_waking",
    "sched/sched_wakeup",
];
/// Buffer per traced CPU for each second of the run's longest possible
/// length (twice its duration, the watchdog's). The yield storm of the
/// README's synchro row at 2 CPUs with the mutex makes some 640k events a
/// CPU-second; a sched_switch record takes 68 bytes of the ring buffer
/// (per_cpu/cpuN/stats of a 300 ms run of that row: 1,442,688 bytes for
/// 21,216 entries), so 48 MiB holds a second of it. Measured: a 1 s run of
/// that row, 1.44 M events in 96 MiB a CPU, none dropped.
const BUFFER_KIB_PER_CPU_SECOND: u64 = 48 * 1024;
/// Never less than this per CPU.
const MIN_BUFFER_KIB: u64 = 4 * 1024;

/// A tracefs instance recording this run; removed on drop.
pub struct Capture {
    dir: PathBuf,
    /// The pinned CPUs, or None for all of them.
    cpus: Option<Vec<usize>>,
    /// CPUs the kernel may ever bring up.
    possible: usize,
    buffer_kib: u64,
}

impl Capture {
    /// Make and arm the instance for a run of `duration` on `cpus` (all
    /// CPUs when None). Bad input for the run when this machine cannot
    /// trace: no tracefs, or no right to make an instance.
    pub fn start(cpus: Option<&[usize]>, duration: Duration) -> Result<Capture> {
        // The mount point is visible to anyone; what is under it only to root.
        let root = TRACEFS
            .iter()
            .map(Path::new)
            .find(|p| p.is_dir())
            .unwrap_or(Path::new(TRACEFS[0]));
        let dir = root
            .join("instances")
            .join(format!("rmap-storm-{}", std::process::id()));
        fs::create_dir(&dir).map_err(|e| {
            Error::usage(format!(
                "--sched-trace: cannot make the tracefs instance {} ({e}): natively it \
                 needs root and tracefs mounted (mount -t tracefs nodev {}), or use \
                 --engine sim",
                dir.display(),
                TRACEFS[0]
            ))
        })?;
        let possible = possible_cpus();
        let capture = Capture {
            dir,
            cpus: cpus.map(<[usize]>::to_vec),
            possible,
            buffer_kib: buffer_kib(duration, possible, mem_available_kib()),
        };
        capture.arm()?;
        Ok(capture)
    }

    fn arm(&self) -> Result<()> {
        self.set("buffer_size_kb", &self.buffer_kib.to_string())?;
        self.set("options/overwrite", "0")?;
        self.set("trace_clock", "mono")?;
        if let Some(cpus) = &self.cpus {
            self.set("tracing_cpumask", &cpumask(cpus))?;
        }
        for event in EVENTS {
            self.set(&format!("events/{event}/enable"), "1")?;
        }
        self.set("tracing_on", "1")
    }

    fn set(&self, file: &str, value: &str) -> Result<()> {
        let path = self.dir.join(file);
        fs::write(&path, value).map_err(|e| {
            Error::failed(format!(
                "--sched-trace: writing {value} to {}: {e}",
                path.display()
            ))
        })
    }

    /// Stop recording and write the trace to `out` (whole or not at all),
    /// `about` first. Returns the events dropped because the buffer was full.
    pub fn finish(self, out: &Path, about: &str) -> Result<u64> {
        self.set("tracing_on", "0")?;
        let dropped = self.dropped();
        let temp = temp_path(out);
        let written = fs::File::create(&temp).and_then(|file| {
            let mut file = io::BufWriter::new(file);
            writeln!(file, "# {about}")?;
            writeln!(
                file,
                "# the kernel's {} in a tracefs instance of this run ({} KiB a CPU); \
                 times in CLOCK_MONOTONIC seconds (trace_clock mono); events dropped for \
                 want of buffer: {dropped}",
                EVENTS.map(|e| e.trim_start_matches("sched/")).join(", "),
                self.buffer_kib
            )?;
            io::copy(&mut fs::File::open(self.dir.join("trace"))?, &mut file)?;
            file.into_inner().map_err(|e| e.into_error())?.sync_all()
        });
        if let Err(e) = written {
            let _ = fs::remove_file(&temp);
            return Err(Error::failed(format!("writing {}: {e}", out.display())));
        }
        commit_temp(out)?;
        Ok(dropped)
    }

    /// The traced CPUs' `dropped events` counts (per_cpu/cpuN/stats).
    fn dropped(&self) -> u64 {
        let cpus = self
            .cpus
            .clone()
            .unwrap_or_else(|| (0..self.possible).collect());
        // A CPU that was never online has no stats file: nothing dropped.
        cpus.iter()
            .filter_map(|cpu| {
                fs::read_to_string(self.dir.join(format!("per_cpu/cpu{cpu}/stats"))).ok()
            })
            .map(|text| stat(&text, "dropped events").unwrap_or(0))
            .sum()
    }
}

impl Drop for Capture {
    /// Tracing off and the instance gone, also when the run failed.
    fn drop(&mut self) {
        let _ = fs::write(self.dir.join("tracing_on"), "0");
        let _ = fs::remove_dir(&self.dir);
    }
}

/// tracing_cpumask's format: hex, in comma-separated groups of 32 CPUs,
/// the highest group first (the kernel's bitmap_print_to_pagebuf).
pub fn cpumask(cpus: &[usize]) -> String {
    let groups = cpus.iter().max().map_or(1, |&m| m / 32 + 1);
    let mut words = vec![0u32; groups];
    for &c in cpus {
        words[c / 32] |= 1 << (c % 32);
    }
    let mut text: Vec<String> = words.iter().rev().map(|w| format!("{w:08x}")).collect();
    text[0] = format!("{:x}", words[groups - 1]);
    text.join(",")
}

/// One `name: value` line of a per-CPU stats file.
pub fn stat(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
}

/// KiB per CPU: enough for twice `duration` of a yield storm, at least
/// [`MIN_BUFFER_KIB`], and the instance's buffers (one per possible CPU) at
/// most a quarter of the memory available.
pub fn buffer_kib(duration: Duration, possible: usize, available_kib: u64) -> u64 {
    let want = (2.0 * duration.as_secs_f64() * BUFFER_KIB_PER_CPU_SECOND as f64) as u64;
    let cap = available_kib / 4 / possible.max(1) as u64;
    want.min(cap).max(MIN_BUFFER_KIB)
}

/// CPUs the kernel may ever bring up (a tracefs instance has a buffer for
/// each): /sys/devices/system/cpu/possible, `0-N`.
fn possible_cpus() -> usize {
    fs::read_to_string("/sys/devices/system/cpu/possible")
        .ok()
        .and_then(|t| t.trim().rsplit(['-', ',']).next()?.parse::<usize>().ok())
        .map_or_else(crate::engine::cpus::online_cpus, |last| last + 1)
}

/// /proc/meminfo's MemAvailable, in KiB (0 if unreadable: the minimum
/// buffer then).
fn mem_available_kib() -> u64 {
    fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpumask_is_hex_in_groups_of_32_highest_first() {
        assert_eq!(cpumask(&[0, 1]), "3");
        assert_eq!(cpumask(&[4]), "10");
        assert_eq!(cpumask(&[0, 33]), "2,00000001");
        assert_eq!(cpumask(&[64]), "1,00000000,00000000");
    }

    #[test]
    fn stats_lines_are_read_by_name() {
        let text = "entries: 12\noverrun: 0\ndropped events: 7\nread events: 3\n";
        assert_eq!(stat(text, "dropped events"), Some(7));
        assert_eq!(stat(text, "overrun"), Some(0));
        assert_eq!(stat(text, "missing"), None);
    }

    #[test]
    fn the_buffer_grows_with_the_run_within_a_quarter_of_free_memory() {
        let gib = 1024 * 1024;
        let two_s = Duration::from_secs(2);
        assert_eq!(
            buffer_kib(two_s, 2, 24 * gib),
            4 * BUFFER_KIB_PER_CPU_SECOND
        );
        assert_eq!(buffer_kib(two_s, 64, gib), gib / 4 / 64);
        assert_eq!(buffer_kib(Duration::ZERO, 2, 24 * gib), MIN_BUFFER_KIB);
        assert_eq!(buffer_kib(two_s, 2, 0), MIN_BUFFER_KIB);
    }
}
