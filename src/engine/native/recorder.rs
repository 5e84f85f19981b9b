//! How a native worker hands its record to the run while it goes.
//!
//! A worker counts its done operations in its own cache-padded slot (the
//! monitor reads them every window) and keeps everything else in its local
//! [`Record`]: latencies, failures, read holds, direct-reclaim time. It
//! flushes the local record into its slot now and then, and at the end, so a
//! run the watchdog cuts off still reports what its threads did up to their
//! last flush.

use crate::locks::{stats, trace};
use crate::metrics::ThreadCtx;
use crate::metrics::record::{OpOutcome, Record};
use crate::metrics::summary::ThreadRecord;
use crate::model::Role;
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often a worker flushes its record.
const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// One worker's shared slot.
pub struct Slot {
    pub role: Role,
    /// The worker's place in the run's plan (its lock trace's thread index).
    pub index: u32,
    /// Done operations, read by the monitor while the run goes.
    pub ops: CachePadded<AtomicU64>,
    /// Set when the worker has left its loop and flushed.
    pub finished: AtomicBool,
    pub record: Mutex<Record>,
}

impl Slot {
    pub fn new(role: Role, index: u32) -> Slot {
        Slot {
            role,
            index,
            ops: CachePadded::new(AtomicU64::new(0)),
            finished: AtomicBool::new(false),
            record: Mutex::new(Record::default()),
        }
    }

    /// What the worker flushed so far, taken out of the slot (a snapshot: a
    /// cut-off worker may still be running).
    pub fn take(&self) -> ThreadRecord {
        ThreadRecord {
            role: self.role,
            ops: self.ops.load(Ordering::Relaxed),
            record: std::mem::take(&mut *self.record.lock()),
        }
    }
}

/// A worker's private side: when it last flushed, and its context switches
/// and lifetime so far.
pub struct Recorder<'a> {
    slot: &'a Slot,
    ctx_at_flush: ThreadCtx,
    last_flush: Instant,
    started: Instant,
}

impl<'a> Recorder<'a> {
    /// Call on the worker thread itself (context switches and lock stats are
    /// per thread), when its run starts.
    pub fn new(slot: &'a Slot) -> Recorder<'a> {
        let _ = stats::take();
        let _ = stats::take_trace();
        let now = Instant::now();
        Recorder {
            slot,
            ctx_at_flush: ThreadCtx::now(),
            last_flush: now,
            started: now,
        }
    }

    /// One operation that started at `start` ended at `end` with `outcome`:
    /// the worker loop's own clock reads, so recording adds none. Only a done
    /// one moves the slot's counter.
    #[inline]
    pub fn ended(&mut self, local: &mut Record, outcome: OpOutcome, start: Instant, end: Instant) {
        if local.note(outcome, (end - start).as_nanos() as u64) {
            self.slot.ops.fetch_add(1, Ordering::Relaxed);
        }
        if end - self.last_flush >= FLUSH_EVERY {
            self.flush(local);
        }
    }

    /// Move the local record into the shared slot.
    pub fn flush(&mut self, local: &mut Record) {
        let now = ThreadCtx::now();
        local.ctx = now - self.ctx_at_flush;
        self.ctx_at_flush = now;
        local.lock = stats::take();
        if trace::on() {
            // The worker thread is named as the sched trace names it.
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("worker");
            trace::collect(self.slot.index, name, stats::take_trace());
        }
        local.lifetime_ns = self.started.elapsed().as_nanos() as u64;
        self.slot.record.lock().absorb(local);
        self.last_flush = Instant::now();
    }

    /// The final flush; the run may read the slot from now on.
    pub fn finish(mut self, local: &mut Record) {
        self.flush(local);
        self.slot.finished.store(true, Ordering::Release);
    }
}
