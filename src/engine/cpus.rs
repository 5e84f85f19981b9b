//! Which CPUs a run may use: `--pin 0-3,6` as taskset and the kernel's
//! cpulist format write it, checked against this machine's CPUs. Pinning a
//! thread is the native engine's business (`native::pin`).

/// A parsed, validated CPU list, in the order given (duplicates removed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(Vec<usize>);

impl CpuList {
    /// Parse `0-3,6` and check every CPU exists on this machine (`online` CPUs:
    /// ids 0..online).
    pub fn parse(text: &str, online: usize) -> Result<CpuList, String> {
        let mut cpus = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (parse_cpu(a)?, parse_cpu(b)?),
                None => {
                    let c = parse_cpu(part)?;
                    (c, c)
                }
            };
            if lo > hi {
                return Err(format!("--pin: range '{part}' runs backwards"));
            }
            for c in lo..=hi {
                if c >= online {
                    return Err(format!(
                        "--pin: CPU {c} does not exist (allowed: 0-{})",
                        online - 1
                    ));
                }
                if !cpus.contains(&c) {
                    cpus.push(c);
                }
            }
        }
        Ok(CpuList(cpus))
    }

    /// The CPUs this process may run on, as the kernel gave them
    /// (sched_getaffinity): valid already, nothing to check.
    pub fn allowed(cpus: &[usize]) -> CpuList {
        CpuList(cpus.to_vec())
    }

    /// The CPUs, in the order given.
    pub fn cpus(&self) -> &[usize] {
        &self.0
    }

    /// The CPU for the `i`-th worker thread: round robin over the list.
    pub fn cpu_for(&self, i: usize) -> usize {
        self.0[i % self.0.len()]
    }
}

fn parse_cpu(s: &str) -> Result<usize, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("--pin: '{s}' is not a CPU number (format: 0-3,6)"))
}

/// CPUs this process may run on.
pub fn online_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_and_singles_in_order() {
        let l = CpuList::parse("2-3,0,3", 4).unwrap();
        assert_eq!(l, CpuList(vec![2, 3, 0]));
        assert_eq!((l.cpu_for(0), l.cpu_for(3)), (2, 2));
    }

    #[test]
    fn rejects_missing_cpus_and_garbage() {
        assert!(
            CpuList::parse("0-4", 4)
                .unwrap_err()
                .contains("CPU 4 does not exist (allowed: 0-3)")
        );
        assert!(CpuList::parse("x", 4).is_err());
        assert!(CpuList::parse("3-1", 4).is_err());
        assert!(CpuList::parse("", 4).is_err());
    }
}
