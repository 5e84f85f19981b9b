//! Analytical oracles for the simulator's integration tests: closed-form or
//! exactly solvable models the simulated locks must land near.
//!
//! Use from a test file with `mod oracle;`. All times are nanoseconds;
//! throughputs are per second.
//!
//! - [`ticket_throughput`]: Boyd-Wickizer, Kaashoek, Morris, Zeldovich, "Non-
//!   scalable locks are dangerous" (Linux Symposium 2012), section 3's Markov
//!   model of a ticket spinlock.
//! - [`RwLoad`]: an FCFS reader/writer queue with Poisson arrivals and
//!   exponential holds, the setting of T. Johnson, "Approximate Analysis of
//!   Reader/Writer Queues" (IEEE TSE 21(3), 1995). The paper's own text was not
//!   reachable (only its abstract), so its approximations are NOT implemented;
//!   what is here are the exact special cases and the exact first-order
//!   (low-load) waits derived below, nothing invented.

// Each test crate that includes this module uses only some of it.
#![allow(dead_code)]

/// The ticket lock's birth-death chain over `k`, the cores holding or waiting
/// for the lock (0..=n), solved exactly.
///
/// Which reading: the paper's Figure 7 says "State i represents i cores
/// holding or waiting for the lock. a_i is the arrival rate of new cores when
/// there are already i cores contending for the lock. s_i is the service rate
/// when i + 1 cores are contending", with `a_k = (n - k) / a` and
/// `s_k = 1 / (s + c k / 2)`. So the chain steps up from `k` at `a_k` and
/// down from `k + 1` at `s_k`: in state `k >= 1` (one holder, `k - 1`
/// waiters) the lock passes on at `1 / (s + c (k - 1) / 2)`. The holder is not
/// counted in `c k / 2`: after a release only the `k - 1` waiters re-read the
/// lock line, the line's home answers them one at a time, and the next
/// ticket's owner is on average half way down that queue. This is also the
/// reading under which one core alone cycles at `1 / (a + s)`.
///
/// The stationary probabilities come from the chain's balance equations
/// `P_k a_k = P_{k+1} s_k` (computed in log space, so `n` in the thousands
/// neither overflows nor underflows), not from a printed closed form.
#[derive(Clone, Debug, PartialEq)]
pub struct TicketChain {
    /// `P_k`, k = 0..=n.
    pub probs: Vec<f64>,
    /// The serial section `s` and line transfer `c`, ns.
    s_ns: f64,
    c_ns: f64,
}

impl TicketChain {
    /// `n` cores, each spending on average `a_ns` outside the lock between a
    /// release and its next request, `s_ns` inside it (the serial section);
    /// `c_ns` is one cache-line transfer. Times are exponential, as the model
    /// assumes.
    pub fn new(n: usize, a_ns: f64, s_ns: f64, c_ns: f64) -> TicketChain {
        assert!(n >= 1, "ticket chain: n = {n}, need at least one core");
        assert!(
            a_ns.is_finite() && a_ns > 0.0 && s_ns.is_finite() && s_ns > 0.0,
            "ticket chain: a = {a_ns}, s = {s_ns} ns; both must be finite and positive"
        );
        assert!(
            c_ns.is_finite() && c_ns >= 0.0,
            "ticket chain: c = {c_ns} ns, must be finite and not negative"
        );
        // ln(P_k / P_0) = sum over j < k of ln(a_j / s_j).
        let mut log_w = Vec::with_capacity(n + 1);
        log_w.push(0.0);
        for k in 0..n {
            let up = ((n - k) as f64 / a_ns).ln();
            let down = -(s_ns + c_ns * k as f64 / 2.0).ln();
            log_w.push(log_w[k] + up - down);
        }
        let max = log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = log_w.iter().map(|l| (l - max).exp()).collect();
        let total: f64 = w.iter().sum();
        TicketChain {
            probs: w.iter().map(|x| x / total).collect(),
            s_ns,
            c_ns,
        }
    }

    /// The rate the lock passes on from state `k >= 1`, per ns.
    fn service_per_ns(&self, k: usize) -> f64 {
        1.0 / (self.s_ns + self.c_ns * (k - 1) as f64 / 2.0)
    }

    /// Acquisitions per second: the sum over k >= 1 of `P_k` times the
    /// service rate out of state k.
    pub fn throughput_per_s(&self) -> f64 {
        let per_ns: f64 = (1..self.probs.len())
            .map(|k| self.probs[k] * self.service_per_ns(k))
            .sum();
        per_ns * 1e9
    }

    /// The mean number of cores holding or waiting (the paper's `w`; its
    /// speedup is `n - w`).
    pub fn mean_contenders(&self) -> f64 {
        self.probs
            .iter()
            .enumerate()
            .map(|(k, p)| k as f64 * p)
            .sum()
    }
}

/// Acquisitions per second of a ticket spinlock under Boyd-Wickizer et al.'s
/// model (see [`TicketChain`] for the reading and the arguments).
pub fn ticket_throughput(n: usize, a_ns: f64, s_ns: f64, c_ns: f64) -> f64 {
    TicketChain::new(n, a_ns, s_ns, c_ns).throughput_per_s()
}

/// An FCFS reader/writer lock queue: readers and writers arrive in Poisson
/// streams and hold the lock for exponential times; readers share, writers
/// exclude; nobody passes anyone queued ahead (the 2007 rw_semaphore,
/// `rwsem-fifo`, has this discipline).
///
/// Exact results only (see the module doc for why): writers alone are an
/// M/M/1 queue, readers alone an M/M/infinity system, and at low load the
/// waits' first-order terms follow from what an arrival finds (the first
/// term of each mean wait's expansion in the arrival rates; the next terms
/// are of relative size the total utilisation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RwLoad {
    /// Mean time between reader arrivals, ns (`f64::INFINITY`: no readers).
    pub reader_gap_ns: f64,
    /// Mean time between writer arrivals, ns (`f64::INFINITY`: no writers).
    pub writer_gap_ns: f64,
    /// Mean read hold, ns.
    pub reader_hold_ns: f64,
    /// Mean write hold, ns.
    pub writer_hold_ns: f64,
}

impl RwLoad {
    fn reader_rate(&self) -> f64 {
        1.0 / self.reader_gap_ns
    }

    fn writer_rate(&self) -> f64 {
        1.0 / self.writer_gap_ns
    }

    /// Writers only (M/M/1): the exact mean wait before a writer gets the
    /// lock, `rho s / (1 - rho)` with `rho = s / gap`; None with readers or
    /// at `rho >= 1` (no steady state).
    pub fn writers_only_wait_ns(&self) -> Option<f64> {
        let rho = self.writer_rate() * self.writer_hold_ns;
        (self.reader_rate() == 0.0 && rho < 1.0).then(|| rho * self.writer_hold_ns / (1.0 - rho))
    }

    /// Readers only (M/M/infinity): the number inside is Poisson with mean
    /// `m = hold / gap`, so the lock is read-held `1 - e^-m` of the time and
    /// holds on average `m / (1 - e^-m)` readers while it is. None with
    /// writers.
    pub fn readers_only_inside_while_held(&self) -> Option<f64> {
        let m = self.reader_rate() * self.reader_hold_ns;
        (self.writer_rate() == 0.0 && m > 0.0).then(|| m / (1.0 - (-m).exp()))
    }

    /// First-order mean waits (reader, writer), ns, as the arrival rates go
    /// to zero. An arrival finds, to first order, at most one holder: a
    /// writer with probability `lw sw`, a reader with probability `lr sr`,
    /// and waits for its remaining hold, which for an exponential hold is the
    /// whole mean (memoryless). A reader waits only for a writer; a writer
    /// waits for either. So reader `lw sw^2`, writer `lr sr^2 + lw sw^2`.
    pub fn low_load_waits_ns(&self) -> (f64, f64) {
        let writer_part = self.writer_rate() * self.writer_hold_ns * self.writer_hold_ns;
        let reader_part = self.reader_rate() * self.reader_hold_ns * self.reader_hold_ns;
        (writer_part, reader_part + writer_part)
    }
}
