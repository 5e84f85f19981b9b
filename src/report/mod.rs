//! report (to be built).
