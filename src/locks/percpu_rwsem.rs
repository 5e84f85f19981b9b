//! TEMPORARY: replaced by the real algorithm.
pub type PercpuRwsem = super::placeholder::Placeholder<7>;
