//! Durations on the command line: `500ms`, `2s`, `1.5s`, `1m`.

use std::time::Duration;

/// Parse a positive duration: a number (decimals allowed) and a unit, `ms`,
/// `s` or `m`. Zero is refused: no run can measure anything in no time.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("'{text}' is not a duration (expected e.g. 500ms, 2s or 1m)");
    let text = text.trim();
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
    let duration = Duration::try_from_secs_f64(number * seconds_per_unit).map_err(|_| bad())?;
    if duration.is_zero() {
        return Err(format!("'{text}' is zero (allowed: more than zero)"));
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_unit() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("0.5s"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
    }

    #[test]
    fn rejects_zero_and_malformed() {
        assert!(parse_duration("0s").unwrap_err().contains("zero"));
        assert!(parse_duration("0ms").unwrap_err().contains("zero"));
        for bad in ["", "2", "s", "2h", "-1s", "1.2.3s", "2 s", "1e3s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
