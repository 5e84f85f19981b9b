//! TEMPORARY: replaced by the real algorithm.
pub type RwsemFifo = super::placeholder::Placeholder<4>;
