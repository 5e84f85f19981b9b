//! The storm, engine-agnostic: the roles, the locked world they share, memory
//! pressure and the roster of tasks. An engine (the native one: real threads)
//! runs each worker's role over a [`ctx::Ctx`] and records what it did.

pub mod ctx;
pub mod memory;
pub mod roles;
pub mod roster;
pub mod shared;
