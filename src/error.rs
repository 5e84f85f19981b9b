//! The two ways a command fails, and the exit status each maps to.
//!
//! Bad input (a malformed model, an unknown lock, an impossible parameter) is a
//! [`Error::Usage`]: one line, exit status 2, nothing written. A run that could not
//! do its job for another reason (a torture failure, an I/O error on output) is an
//! [`Error::Failed`]: exit status 1. Both print one line on stderr.

use std::fmt;

/// A command's failure, carrying the one line the user sees.
#[derive(Debug)]
pub enum Error {
    /// The input was wrong: exit status 2.
    Usage(String),
    /// The input was fine but the job failed: exit status 1.
    Failed(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A usage error (exit status 2) from any displayable message.
    pub fn usage(msg: impl fmt::Display) -> Self {
        Error::Usage(msg.to_string())
    }

    /// A job failure (exit status 1) from any displayable message.
    pub fn failed(msg: impl fmt::Display) -> Self {
        Error::Failed(msg.to_string())
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            Error::Failed(_) => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Always one line: the contract of every command.
        let msg = match self {
            Error::Usage(m) | Error::Failed(m) => m,
        };
        f.write_str(&msg.replace('\n', " "))
    }
}

impl std::error::Error for Error {}
