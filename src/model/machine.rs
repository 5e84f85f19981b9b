//! Machine profiles: what a simulated machine is made of and what each thing
//! it does costs (`models/machines/*.toml`).
//!
//! ```toml
//! name = "..."                 # what machine this stands for
//! [topology]                   # cpu -> core -> die -> socket (see Topology)
//! sockets = 2
//! dies_per_socket = 1
//! cores_per_die = 18
//! threads_per_core = 1
//! [cache]                      # ns: hit_ns atomic_ns smt_ns die_ns socket_ns
//! line_service = "random"      #     remote_ns memory_ns pause_ns; "random" | "nearest"
//! [sched]                      # ns: ctx_switch_ns wakeup_ns wakeup_idle_ns wakeup_ipi_ns resched_ipi_ns
//!                              #     yield_ns park_cold_ns jitter_ns noise_interval_ns noise_ns tick_ns
//!                              #     sched_latency_ns min_granularity_ns wakeup_granularity_ns
//!                              #     base_slice_ns
//! policy = "cfs"               # the fair scheduler: "cfs" | "eevdf"
//! [work]                       # ns per kernel operation the simulator charges
//! ```
//!
//! Every cost is in nanoseconds, finite and not negative (the scheduler's
//! periods must be positive); every topology count is at least 1. A file is
//! read like a model file: unknown keys, missing keys, bad values and bad
//! enum names are one line `FILE: KEY: message (allowed: RANGE)` and a usage
//! error (exit status 2). [`MachineProfile::render`] writes a profile back
//! with a comment per key, for `rmap-storm calibrate`.

use super::world::KeyError;
use super::{key_error, parse, typed};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Largest cost a profile may name: 1000 s, beyond any single operation
/// (the longest here, an RCU grace period, takes milliseconds).
pub const MAX_NS: f64 = 1e12;

/// Upper bounds of the topology counts, far past any shipping machine (the
/// simulator itself stops at 4096 CPUs).
const MAX_SOCKETS: u32 = 64;
const MAX_DIES: u32 = 64;
const MAX_CORES: u32 = 1024;
const MAX_THREADS: u32 = 8;

/// Costs that divide time into periods: zero would make a scheduler tick or
/// a timeslice that never ends (or never starts), or a CPU interrupted
/// without end.
const POSITIVE: &[&str] = &[
    "sched.noise_interval_ns",
    "sched.tick_ns",
    "sched.sched_latency_ns",
    "sched.min_granularity_ns",
    "sched.base_slice_ns",
];

/// A loaded, validated machine profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineProfile {
    /// What machine this stands for (free text).
    pub name: String,
    pub topology: Topology,
    pub cache: CacheCosts,
    pub sched: SchedCosts,
    pub work: WorkCosts,
}

/// How CPUs are numbered: the threads of one core are consecutive, then the
/// cores of one die, the dies of one socket, the sockets.
///
/// CPU `c` runs on core `c / threads_per_core`, die `c / (cores_per_die *
/// threads_per_core)` and socket `c / (dies_per_socket * cores_per_die *
/// threads_per_core)`. CPUs past `sockets * dies * cores * threads` carry on
/// into further sockets of the same shape, so asking a 2-socket profile for
/// more CPUs than it has gives a 3rd, 4th, ... socket rather than an error.
/// (Linux usually numbers SMT siblings `c` and `c + cores`; this numbering
/// is the simulator's own, not the kernel's.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    pub sockets: u32,
    pub dies_per_socket: u32,
    pub cores_per_die: u32,
    /// SMT siblings per core.
    pub threads_per_core: u32,
}

/// How far apart two CPUs are, for the cost of moving a cache line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Distance {
    /// The same CPU: the line is already in its own cache.
    SameCpu,
    /// SMT siblings: they share the core's L1 and L2.
    Smt,
    /// Cores of one die (one CCX or one mesh).
    Die,
    /// Dies of one socket (CCX to CCX, tile to tile).
    Socket,
    /// Different sockets.
    Remote,
}

impl Topology {
    /// CPUs the profile describes (more may be asked for; see the type doc).
    pub fn cpus(&self) -> u64 {
        u64::from(self.sockets)
            * u64::from(self.dies_per_socket)
            * u64::from(self.cores_per_die)
            * u64::from(self.threads_per_core)
    }

    /// How far CPU `a` is from CPU `b`.
    pub fn distance(&self, a: usize, b: usize) -> Distance {
        let per_core = self.threads_per_core as usize;
        let per_die = per_core * self.cores_per_die as usize;
        let per_socket = per_die * self.dies_per_socket as usize;
        if a == b {
            Distance::SameCpu
        } else if a / per_core == b / per_core {
            Distance::Smt
        } else if a / per_die == b / per_die {
            Distance::Die
        } else if a / per_socket == b / per_socket {
            Distance::Socket
        } else {
            Distance::Remote
        }
    }

    /// Every count with its key, in file order.
    fn counts(&self) -> [(&'static str, u32, u32); 4] {
        [
            ("sockets", self.sockets, MAX_SOCKETS),
            ("dies_per_socket", self.dies_per_socket, MAX_DIES),
            ("cores_per_die", self.cores_per_die, MAX_CORES),
            ("threads_per_core", self.threads_per_core, MAX_THREADS),
        ]
    }

    fn validate(&self) -> std::result::Result<(), KeyError> {
        for (key, v, max) in self.counts() {
            if !(1..=max).contains(&v) {
                return Err(KeyError {
                    key: format!("topology.{key}"),
                    message: format!("{v} is out of range"),
                    allowed: format!("1..={max}"),
                });
            }
        }
        Ok(())
    }
}

/// The fair scheduler the machine's kernel runs for SCHED_NORMAL tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedPolicy {
    /// CFS (2.6.23 to 6.5): virtual runtime alone; slices from
    /// `sched_latency_ns` and `min_granularity_ns`, wake-up preemption past
    /// `wakeup_granularity_ns`.
    Cfs,
    /// EEVDF (6.6 on): eligibility by lag and the earliest virtual deadline,
    /// requests of `base_slice_ns`.
    Eevdf,
}

impl SchedPolicy {
    /// The name profile files use.
    pub fn name(self) -> &'static str {
        match self {
            SchedPolicy::Cfs => "cfs",
            SchedPolicy::Eevdf => "eevdf",
        }
    }
}

/// The order in which a cache line serves the CPUs queued for it (the
/// interconnect's choice, not the lock's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineService {
    /// Seeded random order among the waiting requests.
    Random,
    /// The nearest requester first (by [`Distance`]), then by CPU id.
    Nearest,
}

impl LineService {
    /// The name profile files use.
    pub fn name(self) -> &'static str {
        match self {
            LineService::Random => "random",
            LineService::Nearest => "nearest",
        }
    }
}

/// One section of nanosecond costs: the struct, its key list (file order)
/// and the (key, value) pairs validation and rendering walk, from one list of
/// fields. `extra` fields are not costs and are neither checked nor listed.
macro_rules! costs {
    (
        $(#[$meta:meta])*
        $name:ident, $section:literal {
            $($(#[$fmeta:meta])* $field:ident,)*
        }
        $(extra { $($(#[$xmeta:meta])* $xfield:ident: $xty:ty,)* })?
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: f64,)*
            $($($(#[$xmeta])* pub $xfield: $xty,)*)?
        }

        impl $name {
            /// The section's name in a profile file.
            pub const SECTION: &'static str = $section;
            /// Every key of the section, in file order.
            pub const KEYS: &'static [&'static str] =
                &[$(stringify!($field),)* $($(stringify!($xfield),)*)?];

            /// Every cost with its key, in file order.
            pub fn costs(&self) -> Vec<(&'static str, f64)> {
                vec![$((stringify!($field), self.$field),)*]
            }

            /// The cost named `key`, for tools that fill a profile key by key.
            pub fn cost_mut(&mut self, key: &str) -> Option<&mut f64> {
                match key {
                    $(stringify!($field) => Some(&mut self.$field),)*
                    _ => None,
                }
            }
        }
    };
}

costs! {
    /// What touching cache lines costs, by where the line is.
    CacheCosts, "cache" {
        /// A load that hits the CPU's own L1.
        hit_ns,
        /// An uncontended LOCK-prefixed read-modify-write on a line the CPU owns.
        atomic_ns,
        /// Moving a line between SMT siblings.
        smt_ns,
        /// Moving a line between cores of one die (core-to-core latency).
        die_ns,
        /// Moving a line between dies of one socket.
        socket_ns,
        /// Moving a line between sockets.
        remote_ns,
        /// Reading a line no cache holds (DRAM).
        memory_ns,
        /// One PAUSE (cpu_relax()).
        pause_ns,
    }
    extra {
        /// The order a line serves queued requests in.
        line_service: LineService,
    }
}

impl CacheCosts {
    /// What moving a line over `d` costs (a hit when it is already here).
    pub fn transfer_ns(&self, d: Distance) -> f64 {
        match d {
            Distance::SameCpu => self.hit_ns,
            Distance::Smt => self.smt_ns,
            Distance::Die => self.die_ns,
            Distance::Socket => self.socket_ns,
            Distance::Remote => self.remote_ns,
        }
    }
}

costs! {
    /// The scheduler's costs and periods.
    SchedCosts, "sched" {
        /// schedule() plus switch_to between two tasks.
        ctx_switch_ns,
        /// try_to_wake_up of a task onto a busy CPU's run queue.
        wakeup_ns,
        /// Waking a task on an idle CPU until it runs (IPI, idle exit).
        wakeup_idle_ns,
        /// What that wake costs the waker itself: try_to_wake_up and the IPI
        /// it sends (to an idle CPU, or to preempt another CPU's task); under a
        /// hypervisor the IPI exits to the host.
        wakeup_ipi_ns,
        /// A wake-up from another CPU that preempts this CPU's running task:
        /// from the waker's try_to_wake_up until that task is interrupted
        /// (the reschedule IPI and its delivery; under a hypervisor an exit
        /// to the host on both sides). A wake-up that does not preempt needs
        /// no IPI and queues the wakee after `wakeup_ns`.
        resched_ipi_ns,
        /// sched_yield() itself, whether or not it switches: the syscall and
        /// the scheduler's pass (yield_task_fair, pick_next_task). A switch
        /// it makes costs `ctx_switch_ns` on top. User-space spinners yield
        /// on every poll once they have spun long enough, so this is their
        /// poll period then.
        yield_ns,
        /// parking_lot_core's park or unpark by a thread whose first it is
        /// since it was switched in other than back from its own
        /// sched_yield(): the time its code and data, cold then, add between
        /// the call and the lock's validate or filter callback (the bucket
        /// lookup and the queue walk), beyond the line accesses the
        /// simulator charges for the bucket and the queue. After a
        /// sched_yield() ping-pong they are still warm.
        park_cold_ns,
        /// The spread of each switch and wake-up about its mean: the scale of
        /// the exponential tail the simulator draws them with (0: constant).
        jitter_ns,
        /// Mean time between a CPU's interruptions (interrupts, the tick's
        /// own work, a hypervisor taking the CPU): what the kernel's osnoise
        /// tracer counts.
        noise_interval_ns,
        /// Their mean length (0: none; the simulator then draws nothing).
        noise_ns,
        /// One scheduler tick, 1/HZ.
        tick_ns,
        /// CFS sysctl_sched_latency: the period over which runnable tasks each run.
        sched_latency_ns,
        /// CFS sysctl_sched_min_granularity: the shortest slice.
        min_granularity_ns,
        /// CFS sysctl_sched_wakeup_granularity: how far ahead a wakee must be to preempt.
        wakeup_granularity_ns,
        /// EEVDF sysctl_sched_base_slice: the request a task runs before its
        /// virtual deadline.
        base_slice_ns,
    }
    extra {
        /// Which of the two the kernel runs; the other's keys are unused.
        policy: SchedPolicy,
    }
}

costs! {
    /// Kernel work the simulator charges per operation.
    WorkCosts, "work" {
        /// Syscall entry plus exit.
        syscall_ns,
        /// page_referenced, per vma visited: vma_address, page_vma_mapped_walk,
        /// the PTE lock, ptep_clear_flush_young.
        vma_visit_ns,
        /// page_referenced or try_to_unmap, once per walk before its first
        /// vma: the page's anon_vma (folio_lock_anon_vma_read, its lock's
        /// own accesses apart: the line model charges those) and the
        /// interval tree's search.
        walk_ns,
        /// try_to_unmap, per vma: the same walk, the PTE cleared, the mapcount dropped.
        unmap_pte_ns,
        /// A local TLB flush of one page.
        tlb_flush_ns,
        /// Per remote CPU that ran the mm: its flush IPI.
        tlb_ipi_ns,
        /// One anon_vma_chain linked or unlinked (slab and interval tree).
        avc_ns,
        /// One vma copied at fork or freed at exit.
        vma_ns,
        /// One PTE copied at fork or zapped at exit (copy_pte_range,
        /// zap_pte_range), a present one or a swap entry.
        pte_copy_ns,
        /// An anonymous fault, page allocation and 4 KiB clearing included.
        fault_ns,
        /// A fault on a swap entry that hits the swap cache.
        swapin_ns,
        /// A user access to a present page.
        touch_ns,
        /// One RCU grace period (synchronize_rcu), for percpu-rwsem writers.
        rcu_gp_ns,
        /// Isolating or putting back one page on the LRU under lru_lock.
        lru_page_ns,
        /// One read of the clock. The worker loop reads it twice per
        /// operation to time it, on both engines: the simulator charges the
        /// reads as user time (0 for a machine whose tasks are the kernel's).
        clock_ns,
        /// What a busy-wait of a given length (udelay, think time) takes
        /// beyond that length. Natively it spins on the clock and ends at the
        /// first read past its end, after one read to start; the simulator
        /// adds this to every one (0 where a wait stands for exactly that
        /// much work, as in the kernel).
        busy_wait_extra_ns,
    }
}

/// Top-level keys, in file order.
const TOP: &[&str] = &["name", "topology", "cache", "sched", "work"];
const TOPOLOGY_KEYS: &[&str] = &[
    "sockets",
    "dies_per_socket",
    "cores_per_die",
    "threads_per_core",
];

impl MachineProfile {
    /// The profile the simulator uses when none is given: a typical 2-socket
    /// x86 server, every number with its source.
    pub fn default_path() -> PathBuf {
        PathBuf::from("models/machines/default.toml")
    }

    /// Every cost with its dotted key (`cache.die_ns`), in file order.
    pub fn costs(&self) -> Vec<(String, f64)> {
        let sections = [
            (CacheCosts::SECTION, self.cache.costs()),
            (SchedCosts::SECTION, self.sched.costs()),
            (WorkCosts::SECTION, self.work.costs()),
        ];
        sections
            .into_iter()
            .flat_map(|(section, costs)| {
                costs
                    .into_iter()
                    .map(move |(key, v)| (format!("{section}.{key}"), v))
            })
            .collect()
    }

    /// The cost named by a dotted key (`work.vma_visit_ns`).
    pub fn cost_mut(&mut self, key: &str) -> Option<&mut f64> {
        let (section, field) = key.split_once('.')?;
        match section {
            CacheCosts::SECTION => self.cache.cost_mut(field),
            SchedCosts::SECTION => self.sched.cost_mut(field),
            WorkCosts::SECTION => self.work.cost_mut(field),
            _ => None,
        }
    }

    /// Check every value; the first failure.
    fn validate(&self) -> std::result::Result<(), KeyError> {
        if self.name.trim().is_empty() {
            return Err(KeyError {
                key: "name".into(),
                message: "is empty".into(),
                allowed: "a description of the machine".into(),
            });
        }
        self.topology.validate()?;
        for (key, v) in self.costs() {
            check_cost(&key, v)?;
        }
        Ok(())
    }

    /// The profile as TOML text: `header` lines as comments first, then every
    /// key with `note(dotted key)` as its trailing comment (none if empty).
    /// Loading the text gives this profile back exactly.
    pub fn render(&self, header: &str, note: impl Fn(&str) -> String) -> String {
        let mut out = String::new();
        for line in header.lines() {
            let _ = writeln!(out, "# {line}");
        }
        let name = toml::Value::String(self.name.clone());
        line(&mut out, "name", &name.to_string(), &note("name"));
        let _ = writeln!(out, "\n[topology]");
        for (key, v, _) in self.topology.counts() {
            line(
                &mut out,
                key,
                &v.to_string(),
                &note(&format!("topology.{key}")),
            );
        }
        let sections = [
            (CacheCosts::SECTION, self.cache.costs()),
            (SchedCosts::SECTION, self.sched.costs()),
            (WorkCosts::SECTION, self.work.costs()),
        ];
        for (section, costs) in sections {
            let _ = writeln!(out, "\n[{section}]");
            for (key, v) in costs {
                // Debug prints the shortest text that reads back as the same f64.
                line(
                    &mut out,
                    key,
                    &format!("{v:?}"),
                    &note(&format!("{section}.{key}")),
                );
            }
            let extra = match section {
                CacheCosts::SECTION => Some(("line_service", self.cache.line_service.name())),
                SchedCosts::SECTION => Some(("policy", self.sched.policy.name())),
                _ => None,
            };
            if let Some((key, name)) = extra {
                let dotted = format!("{section}.{key}");
                line(&mut out, key, &format!("\"{name}\""), &note(&dotted));
            }
        }
        out
    }
}

fn line(out: &mut String, key: &str, value: &str, note: &str) {
    let _ = if note.is_empty() {
        writeln!(out, "{key} = {value}")
    } else {
        writeln!(out, "{key} = {value}  # {note}")
    };
}

/// What a cost key allows, as messages print it.
fn cost_range(key: &str) -> &'static str {
    if POSITIVE.contains(&key) {
        "more than 0, up to 1e12 ns"
    } else {
        "0..=1e12 ns"
    }
}

fn check_cost(key: &str, v: f64) -> std::result::Result<(), KeyError> {
    let positive = POSITIVE.contains(&key);
    let message = if !v.is_finite() {
        format!("{v} is not finite")
    } else if v < 0.0 {
        format!("{v} is negative")
    } else if v > MAX_NS || (positive && v == 0.0) {
        format!("{v} is out of range")
    } else {
        return Ok(());
    };
    Err(KeyError {
        key: key.into(),
        message,
        allowed: cost_range(key).into(),
    })
}

/// What a dotted key allows, for messages about it; a section or unknown key
/// lists the keys it may hold.
fn allowed(key: &str) -> String {
    let (section, field) = key.split_once('.').unwrap_or((key, ""));
    let keys: &[&str] = match section {
        "topology" => TOPOLOGY_KEYS,
        CacheCosts::SECTION => CacheCosts::KEYS,
        SchedCosts::SECTION => SchedCosts::KEYS,
        WorkCosts::SECTION => WorkCosts::KEYS,
        "name" => return "a description of the machine".into(),
        _ => return format!("keys {}", TOP.join(", ")),
    };
    if !keys.contains(&field) {
        return format!("keys {}", keys.join(", "));
    }
    match (section, field) {
        ("topology", _) => "an integer, at least 1".into(),
        (_, "line_service") => "random, nearest".into(),
        (_, "policy") => "cfs, eevdf".into(),
        _ => cost_range(key).into(),
    }
}

/// Load and validate the profile at `path`.
pub fn load(path: &Path) -> Result<MachineProfile> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", path.display())))?;
    let table = parse(path, &text)?;
    let profile: MachineProfile = typed(path, table, allowed)?;
    profile.validate().map_err(|e| key_error(path, e))?;
    Ok(profile)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(sockets: u32, dies: u32, cores: u32, threads: u32) -> Topology {
        Topology {
            sockets,
            dies_per_socket: dies,
            cores_per_die: cores,
            threads_per_core: threads,
        }
    }

    #[test]
    fn distance_follows_thread_core_die_socket_numbering() {
        // 2 sockets x 2 dies x 3 cores x 2 threads: 24 CPUs, 6 per die, 12 per socket.
        let t = topo(2, 2, 3, 2);
        assert_eq!(t.cpus(), 24);
        assert_eq!(t.distance(4, 4), Distance::SameCpu);
        assert_eq!(t.distance(4, 5), Distance::Smt);
        assert_eq!(t.distance(2, 5), Distance::Die, "cores 1 and 2 of die 0");
        assert_eq!(t.distance(0, 5), Distance::Die);
        assert_eq!(t.distance(5, 6), Distance::Socket, "die 0 and die 1");
        assert_eq!(t.distance(0, 11), Distance::Socket);
        assert_eq!(t.distance(11, 12), Distance::Remote, "socket 0 and 1");
        assert_eq!(t.distance(3, 20), Distance::Remote);
        // Symmetric.
        for (a, b) in [(0, 1), (1, 7), (2, 13), (23, 0)] {
            assert_eq!(t.distance(a, b), t.distance(b, a));
        }
    }

    #[test]
    fn cpus_past_the_profile_wrap_into_further_sockets() {
        let t = topo(2, 1, 4, 1);
        assert_eq!(
            t.distance(8, 11),
            Distance::Die,
            "3rd socket's cores share a die"
        );
        assert_eq!(t.distance(7, 8), Distance::Remote, "socket 1 and socket 2");
        assert_eq!(t.distance(0, 8), Distance::Remote);
    }

    #[test]
    fn single_die_machine_has_only_die_distances() {
        let t = topo(1, 1, 2, 1);
        assert_eq!(t.distance(0, 1), Distance::Die);
    }

    #[test]
    fn transfer_cost_is_the_distance_cost() {
        let p = default_profile();
        let c = &p.cache;
        assert_eq!(c.transfer_ns(Distance::SameCpu), c.hit_ns);
        assert_eq!(c.transfer_ns(Distance::Smt), c.smt_ns);
        assert_eq!(c.transfer_ns(Distance::Die), c.die_ns);
        assert_eq!(c.transfer_ns(Distance::Socket), c.socket_ns);
        assert_eq!(c.transfer_ns(Distance::Remote), c.remote_ns);
    }

    fn manifest_path(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
    }

    fn default_profile() -> MachineProfile {
        load(&manifest_path("models/machines/default.toml")).expect("default.toml loads")
    }

    #[test]
    fn default_profile_is_a_two_socket_server() {
        let p = default_profile();
        assert_eq!(p.topology.sockets, 2);
        assert!(p.topology.cpus() >= 16, "{:?}", p.topology);
        // A line across sockets costs more than across a die; a hit least.
        assert!(p.cache.hit_ns < p.cache.die_ns && p.cache.die_ns < p.cache.remote_ns);
        assert!(p.sched.min_granularity_ns <= p.sched.sched_latency_ns);
        // Every key of default.toml has its source on the same line.
        let text = std::fs::read_to_string(manifest_path("models/machines/default.toml")).unwrap();
        for l in text.lines() {
            let is_key = l.contains(" = ") && !l.trim_start().starts_with('#');
            assert!(!is_key || l.contains('#'), "no source comment: {l}");
        }
    }

    #[test]
    fn render_reads_back_as_the_same_profile() {
        let mut p = default_profile();
        p.name = "a \"quoted\" name".into();
        p.cache.die_ns = 47.123456789;
        p.cache.line_service = LineService::Nearest;
        p.sched.policy = SchedPolicy::Eevdf;
        let text = p.render("line one\nline two", |k| format!("note for {k}"));
        assert!(text.starts_with("# line one\n# line two\n"), "{text}");
        assert!(
            text.contains("die_ns = 47.123456789  # note for cache.die_ns"),
            "{text}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(load(&path).unwrap(), p);
    }

    #[test]
    fn cost_keys_name_every_cost_once() {
        let mut p = default_profile();
        let keys: Vec<String> = p.costs().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys.len(), 8 + 15 + 16);
        for key in &keys {
            *p.cost_mut(key).unwrap() = 1.5;
        }
        assert!(p.costs().iter().all(|(_, v)| *v == 1.5));
        assert!(p.cost_mut("cache.line_service").is_none());
        assert!(p.cost_mut("nope.x").is_none());
    }

    /// default.toml with `from` replaced by `to` (one occurrence), loaded.
    fn load_edited(from: &str, to: &str) -> Result<MachineProfile> {
        let text = std::fs::read_to_string(manifest_path("models/machines/default.toml")).unwrap();
        assert!(text.contains(from), "default.toml has no {from:?}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
        load(&path)
    }

    fn usage_line(r: Result<MachineProfile>) -> String {
        match r {
            Err(Error::Usage(m)) => {
                assert!(!m.contains('\n'), "one line: {m}");
                assert!(m.contains("bad.toml: "), "names the file: {m}");
                m
            }
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn bad_files_are_one_line_naming_key_and_range() {
        let key = |line: &str| line.split(" = ").next().unwrap().to_string();
        let text = std::fs::read_to_string(manifest_path("models/machines/default.toml")).unwrap();
        let die = text.lines().find(|l| l.starts_with("die_ns = ")).unwrap();
        let tick = text.lines().find(|l| l.starts_with("tick_ns = ")).unwrap();
        let cores = text
            .lines()
            .find(|l| l.starts_with("cores_per_die = "))
            .unwrap();
        let service = text
            .lines()
            .find(|l| l.starts_with("line_service = "))
            .unwrap();
        let cases: Vec<(String, String, &str)> = vec![
            (
                die.into(),
                "die_ns = -3.0".into(),
                "cache.die_ns: -3 is negative (allowed: 0..=1e12 ns)",
            ),
            (
                die.into(),
                "die_ns = inf".into(),
                "cache.die_ns: inf is not finite",
            ),
            (
                die.into(),
                "die_ns = nan".into(),
                "cache.die_ns: NaN is not finite",
            ),
            (
                die.into(),
                "die_ns = 2e12".into(),
                "cache.die_ns: 2000000000000 is out of range",
            ),
            (
                die.into(),
                "die_ns = \"fast\"".into(),
                "cache.die_ns: invalid type",
            ),
            (
                die.into(),
                String::new(),
                "cache.die_ns: missing field `die_ns`",
            ),
            (
                tick.into(),
                "tick_ns = 0".into(),
                "sched.tick_ns: 0 is out of range (allowed: more than 0",
            ),
            (
                cores.into(),
                "cores_per_die = 0".into(),
                "topology.cores_per_die: 0 is out of range (allowed: 1..=1024)",
            ),
            (
                cores.into(),
                "cores_per_die = -2".into(),
                "topology.cores_per_die: invalid value",
            ),
            (
                service.into(),
                "line_service = \"fifo\"".into(),
                "cache.line_service: unknown variant `fifo`",
            ),
            (
                die.into(),
                format!("{die}\ndie2_ns = 3.0"),
                "cache.die2_ns: unknown field `die2_ns`",
            ),
            (
                "[work]".into(),
                "[works]".into(),
                "works: unknown field `works`",
            ),
            ("name = ".into(), "name = 3 #".into(), "name: invalid type"),
        ];
        for (from, to, want) in &cases {
            let got = usage_line(load_edited(from, to));
            assert!(
                got.contains(want),
                "{} -> {to:?}:\n  want {want}\n  got  {got}",
                key(from)
            );
            assert!(got.contains("(allowed: "), "{got}");
        }
        // The allowed list of an unknown key is the section's keys.
        let got = usage_line(load_edited(die, &format!("{die}\nx = 1")));
        assert!(got.contains("(allowed: keys hit_ns, atomic_ns, "), "{got}");
        // TOML syntax errors name the position.
        let got = usage_line(load_edited("[cache]", "[cache"));
        assert!(got.contains("line "), "{got}");
    }

    #[test]
    fn missing_file_is_a_usage_error() {
        let r = load(Path::new("/nonexistent/machine.toml"));
        assert!(matches!(r, Err(Error::Usage(m)) if m.contains("cannot read")));
    }
}
