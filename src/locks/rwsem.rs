//! TEMPORARY: replaced by the real algorithm.
pub type Rwsem = super::placeholder::Placeholder<5>;
