//! `--duration` values: a whole number and a unit, `500ms`, `5s` or `2m`.
//!
//! Shared by every subcommand that runs for a while (`torture`, `run`).

use crate::{Error, Result};
use std::time::Duration;

/// Shortest run accepted: below a millisecond the threads' start-up dominates.
pub const MIN: Duration = Duration::from_millis(1);
/// Longest run accepted: a day, beyond which a typo is likelier than intent.
pub const MAX: Duration = Duration::from_secs(24 * 60 * 60);

/// Parse `text` given for the option `key` (used in the one-line error).
pub fn parse(key: &str, text: &str) -> Result<Duration> {
    let bad = || {
        Error::usage(format!(
            "{key}: '{text}' is not a duration (a whole number with ms, s or m, e.g. 500ms, 5s, 2m)"
        ))
    };
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.checked_mul(60).ok_or_else(bad)?),
        _ => return Err(bad()),
    };
    if !(MIN..=MAX).contains(&d) {
        return Err(Error::usage(format!(
            "{key}: '{text}' is out of range (allowed 1ms..=24h)"
        )));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse("--duration", "5s").unwrap(), Duration::from_secs(5));
        assert_eq!(
            parse("--duration", "500ms").unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(parse("--duration", "2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse("--duration", "1440m").unwrap(), MAX);
    }

    #[test]
    fn zero_garbage_and_overflow_are_usage_errors_naming_the_key() {
        for bad in [
            "0s",
            "0ms",
            "1441m",
            "",
            "5",
            "s",
            "-1s",
            "1.5s",
            "5 s",
            "5h",
            "5sec",
            "99999999999999999999s",
            "999999999999999999m",
        ] {
            let e = parse("--duration", bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            assert!(e.to_string().starts_with("--duration: '"), "{bad}: {e}");
        }
        assert!(
            parse("--duration", "0s")
                .unwrap_err()
                .to_string()
                .contains("1ms..=24h")
        );
    }
}
