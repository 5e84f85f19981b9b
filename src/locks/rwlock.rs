//! TEMPORARY: replaced by the real algorithm.
pub type RwlockT = super::placeholder::Placeholder<2>;
