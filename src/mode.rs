//! Shared or exclusive: the one read/write mode of the whole crate.
//!
//! A step of a kernel operation declares the mode of each lock it needs
//! ([`crate::rmap::LockReq`]), a queued waiter carries the mode it asked for
//! ([`crate::locks::waitq::Req`]), and the statistics count acquisitions and
//! contended requests by it ([`crate::locks::stats`]).

use serde::Serialize;

/// down_read / read_lock (shared) or down_write / write_lock (exclusive).
///
/// Exclusive-only kinds grant a `Read` request exclusively but still count it
/// as a read, so reports compare kinds request for request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Mode {
    Read,
    Write,
}
