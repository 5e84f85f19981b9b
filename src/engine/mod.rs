//! engine (to be built).
