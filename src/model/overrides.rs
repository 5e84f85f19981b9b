//! `--set SECTION.KEY=VALUE`: edit the parsed TOML table before it is typed.
//!
//! The value is parsed as a TOML value (`5`, `0.5`, `true`, `"x"`, `[1, 2]`);
//! anything that does not parse is taken as a string, so `--set
//! world.shape=tree` needs no quotes. The key must be one the schema knows.

use super::schema;
use super::world::KeyError;
use toml::{Table, Value};

/// Apply one override to `table`.
pub fn apply(table: &mut Table, set: &str) -> Result<(), KeyError> {
    let Some((path, raw)) = set.split_once('=') else {
        return Err(KeyError {
            key: format!("--set {set}"),
            message: "expected SECTION.KEY=VALUE".into(),
            allowed: "SECTION.KEY=VALUE".into(),
        });
    };
    let path: Vec<&str> = path.trim().split('.').collect();
    schema::check_path(&path)?;
    let raw = raw.trim();
    let value = raw
        .parse::<Value>()
        .unwrap_or_else(|_| Value::String(raw.to_string()));
    let (last, parents) = path.split_last().expect("checked: at least two parts");
    let mut at = table;
    for (depth, part) in parents.iter().enumerate() {
        let entry = at
            .entry(part.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        at = entry.as_table_mut().ok_or_else(|| KeyError {
            key: path[..=depth].join("."),
            message: "is not a table".into(),
            allowed: "a [section] table".into(),
        })?;
    }
    at.insert(last.to_string(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_typed_values_and_bare_strings() {
        let mut t: Table = "[world]\ntasks = 3\n".parse().unwrap();
        apply(&mut t, "world.tasks=500").unwrap();
        apply(&mut t, "world.shape = tree").unwrap();
        apply(&mut t, "workload.reclaim.threads=4").unwrap();
        assert_eq!(t["world"]["tasks"].as_integer(), Some(500));
        assert_eq!(t["world"]["shape"].as_str(), Some("tree"));
        assert_eq!(t["workload"]["reclaim"]["threads"].as_integer(), Some(4));
    }

    #[test]
    fn rejects_unknown_keys_and_missing_values() {
        let mut t = Table::new();
        assert_eq!(apply(&mut t, "world.nope=1").unwrap_err().key, "world.nope");
        assert_eq!(apply(&mut t, "bogus.x=1").unwrap_err().key, "bogus");
        assert!(apply(&mut t, "world.tasks").is_err());
    }
}
