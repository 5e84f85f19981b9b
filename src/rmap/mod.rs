//! The reverse map model.
