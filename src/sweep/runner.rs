//! The one boundary between a sweep and an engine: whatever runs a point and
//! returns its [`RunReport`]. The native engine, a simulator or a test's fake
//! plugs in here; the sweep loop, plots and comparisons never know which.

use crate::Result;
use crate::results::RunReport;
use crate::results::SweepPoint;

/// Runs one point of a sweep.
pub trait Runner {
    /// Reject a point that cannot run (a bad model file, a bad override) without
    /// running it. The sweep checks every point before it writes anything, so
    /// bad input exits 2 with no output; the default accepts everything.
    fn check(&self, _point: &SweepPoint) -> Result<()> {
        Ok(())
    }

    /// Run the point and report it.
    fn run(&self, point: &SweepPoint) -> Result<RunReport>;

    /// This runner, shareable between threads, when its points may run at
    /// the same time (on rayon's threads): a point whose figures do not
    /// depend on the host (a simulated one) loses nothing by sharing the
    /// machine. None, the default, runs points one at a time: a native point
    /// measures the machine, and two at once would measure each other.
    fn parallel(&self) -> Option<&(dyn Runner + Sync)> {
        None
    }
}

/// Any closure is a runner that accepts every point.
impl<F: Fn(&SweepPoint) -> Result<RunReport>> Runner for F {
    fn run(&self, point: &SweepPoint) -> Result<RunReport> {
        self(point)
    }
}
