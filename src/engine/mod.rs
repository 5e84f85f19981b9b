//! Engines run a model's roles over its world with the lock under test.

pub mod native;
