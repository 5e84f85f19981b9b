//! TEMPORARY: replaced by the real algorithm.
pub type McsSpinlock = super::placeholder::Placeholder<1>;
