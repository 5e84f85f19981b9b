//! TEMPORARY: replaced by the real algorithm.
pub type Qrwlock = super::placeholder::Placeholder<3>;
