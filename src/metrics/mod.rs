//! metrics (to be built).
