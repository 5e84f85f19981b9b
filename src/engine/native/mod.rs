//! The native engine: real threads with fixed roles over one shared world.

pub mod pin;
pub mod shared;
