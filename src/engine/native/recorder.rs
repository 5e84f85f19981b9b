//! What each worker thread records, and how the run reads it.
//!
//! A worker counts its operations in its own cache-padded slot (the monitor
//! reads them every window) and keeps everything else locally: latencies, its
//! read holds of rmap locks, direct-reclaim time. It flushes the local record
//! into its slot now and then, and at the end, so a run the watchdog cuts off
//! still reports what its threads did up to their last flush.

use crate::locks::stats::{self, LockStats};
use crate::metrics::overlap::Hold;
use crate::metrics::{self, ThreadCtx};
use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Read holds kept per thread for the concurrency integral: beyond this the
/// figure is computed over the first holds only (bounded memory: 16 MiB).
const MAX_HOLDS: usize = 1 << 20;
/// How often a worker flushes its record.
const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// Which rmap lock a hold was of: an anon_vma family or a file's i_mmap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockKey {
    Family(u32),
    Space(u32),
}

/// One worker's shared slot.
pub struct Slot {
    pub role: usize,
    /// Completed operations, read by the monitor while the run goes.
    pub ops: CachePadded<AtomicU64>,
    /// Set when the worker has left its loop and flushed.
    pub finished: AtomicBool,
    pub record: Mutex<Record>,
}

impl Slot {
    pub fn new(role: usize) -> Slot {
        Slot {
            role,
            ops: CachePadded::new(AtomicU64::new(0)),
            finished: AtomicBool::new(false),
            record: Mutex::new(Record::default()),
        }
    }
}

/// Everything a worker measured (summed over flushes).
pub struct Record {
    pub latency_ns: Histogram<u64>,
    /// Read holds of rmap locks, keyed by which lock (family or file id).
    pub holds: Vec<(LockKey, Hold)>,
    pub lock: LockStats,
    pub ctx: ThreadCtx,
    pub vmas_visited: u64,
    pub direct_reclaims: u64,
    pub direct_reclaim_ns: u64,
    pub pages_reclaimed: u64,
    /// Operations that could not be done (no free mm slot, page budget exhausted).
    pub failed: u64,
    /// The thread's time in the run so far (start barrier to last flush), ns:
    /// the denominator of its wait shares.
    pub lifetime_ns: u64,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            latency_ns: metrics::histogram(),
            holds: Vec::new(),
            lock: LockStats::default(),
            ctx: ThreadCtx::default(),
            vmas_visited: 0,
            direct_reclaims: 0,
            direct_reclaim_ns: 0,
            pages_reclaimed: 0,
            failed: 0,
            lifetime_ns: 0,
        }
    }
}

impl Record {
    fn absorb(&mut self, local: &mut Record) {
        self.latency_ns
            .add(&local.latency_ns)
            .expect("auto-resizing histograms merge");
        local.latency_ns.reset();
        let room = MAX_HOLDS.saturating_sub(self.holds.len());
        self.holds.extend(local.holds.drain(..).take(room));
        self.lock.merge(&local.lock);
        local.lock = LockStats::default();
        self.ctx = self.ctx + local.ctx;
        local.ctx = ThreadCtx::default();
        for (a, b) in [
            (&mut self.vmas_visited, &mut local.vmas_visited),
            (&mut self.direct_reclaims, &mut local.direct_reclaims),
            (&mut self.direct_reclaim_ns, &mut local.direct_reclaim_ns),
            (&mut self.pages_reclaimed, &mut local.pages_reclaimed),
            (&mut self.failed, &mut local.failed),
        ] {
            *a += std::mem::take(b);
        }
        self.lifetime_ns = self.lifetime_ns.max(local.lifetime_ns);
    }
}

/// A worker's private side: the local record and when it last flushed.
pub struct Recorder<'a> {
    slot: &'a Slot,
    pub local: Record,
    ctx_at_flush: ThreadCtx,
    last_flush: Instant,
    started: Instant,
}

impl<'a> Recorder<'a> {
    /// Call on the worker thread itself (context switches are per thread),
    /// when its run starts.
    pub fn new(slot: &'a Slot) -> Recorder<'a> {
        let _ = stats::take();
        let now = Instant::now();
        Recorder {
            slot,
            local: Record::default(),
            ctx_at_flush: ThreadCtx::now(),
            last_flush: now,
            started: now,
        }
    }

    /// One operation that started at `start` ended at `end`: the worker
    /// loop's own clock reads, so recording adds none.
    #[inline]
    pub fn op_done(&mut self, start: Instant, end: Instant) {
        metrics::record(&mut self.local.latency_ns, (end - start).as_nanos() as u64);
        self.slot.ops.fetch_add(1, Ordering::Relaxed);
        if end - self.last_flush >= FLUSH_EVERY {
            self.flush();
        }
    }

    /// One read hold of the rmap lock `key`.
    pub fn hold(&mut self, key: LockKey, h: Hold) {
        if self.local.holds.len() < MAX_HOLDS {
            self.local.holds.push((key, h));
        }
    }

    /// Move the local record into the shared slot.
    pub fn flush(&mut self) {
        let now = ThreadCtx::now();
        self.local.ctx = now - self.ctx_at_flush;
        self.ctx_at_flush = now;
        self.local.lock = stats::take();
        self.local.lifetime_ns = self.started.elapsed().as_nanos() as u64;
        self.slot.record.lock().absorb(&mut self.local);
        self.last_flush = Instant::now();
    }

    /// The final flush; the run may read the slot from now on.
    pub fn finish(mut self) {
        self.flush();
        self.slot.finished.store(true, Ordering::Release);
    }
}
