//! TEMPORARY: replaced by the real algorithm.
pub type TicketSpinlock = super::placeholder::Placeholder<0>;
