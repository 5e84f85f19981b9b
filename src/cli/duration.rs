//! `--duration` values: a number (decimals allowed) and a unit, `500ms`, `1.5s`
//! or `2m`. Shared by every subcommand that runs for a while (torture, run, sweep).

use crate::{Error, Result};
use std::time::Duration;

/// Shortest run accepted: below a millisecond the threads' start-up dominates.
pub const MIN: Duration = Duration::from_millis(1);
/// Longest run accepted: a day, beyond which a typo is likelier than intent.
pub const MAX: Duration = Duration::from_secs(24 * 60 * 60);

/// Parse `text` given for the option `key` (named in the one-line error).
pub fn parse(key: &str, text: &str) -> Result<Duration> {
    let bad = || {
        Error::usage(format!(
            "{key}: '{text}' is not a duration (a number with ms, s or m, e.g. 500ms, 1.5s, 2m)"
        ))
    };
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let seconds_per_unit = match unit {
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        _ => return Err(bad()),
    };
    let out_of_range = || {
        Error::usage(format!(
            "{key}: '{text}' is out of range (allowed: 1ms..=24h)"
        ))
    };
    let d = Duration::try_from_secs_f64(number * seconds_per_unit).map_err(|_| out_of_range())?;
    if !(MIN..=MAX).contains(&d) {
        return Err(out_of_range());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_decimals() {
        let p = |t| parse("--duration", t).unwrap();
        assert_eq!(p("5s"), Duration::from_secs(5));
        assert_eq!(p("500ms"), Duration::from_millis(500));
        assert_eq!(p("0.5s"), Duration::from_millis(500));
        assert_eq!(p("2m"), Duration::from_secs(120));
        assert_eq!(p("1440m"), MAX);
    }

    #[test]
    fn zero_garbage_and_overflow_are_usage_errors_naming_the_key() {
        for bad in [
            "0s",
            "0ms",
            "0.0001s",
            "1441m",
            "",
            "5",
            "s",
            "-1s",
            "1.2.3s",
            "5 s",
            "5h",
            "5sec",
            "1e3s",
            "99999999999999999999s",
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
