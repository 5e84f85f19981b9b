//! rmap-storm: a model of the Linux reverse map and the locks that guard it.
//!
//! Data flows one way: a model file ([`model`]) builds a world ([`rmap`]); an
//! engine ([`engine`]) runs the storm's roles over it taking the lock under
//! test ([`locks`]); the run's figures are computed by [`metrics`] into the
//! plain data of [`results`], stored and read back by [`fileio`], and printed
//! by [`report`]; [`sweep`] runs many points, [`crosscheck`] runs points on
//! both engines and [`reproduce`] a seed's scenarios (both hand plain
//! [`results`] up, printed by [`report`] or [`cli`]), [`torture`] stresses one
//! lock on its own, locktorture style; [`cli`] wires the subcommands. Each
//! layer imports only the layers before it in that list.

pub mod cli;
pub mod crosscheck;
pub mod engine;
pub mod error;
pub mod fileio;
pub mod locks;
pub mod metrics;
pub mod mode;
pub mod model;
pub mod report;
pub mod reproduce;
pub mod results;
pub mod rmap;
pub mod sweep;
pub mod torture;

pub use error::{Error, Result};
