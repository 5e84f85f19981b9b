//! Which sections and keys a model file may have, and what each allows: the
//! source of every "unknown key" and "(allowed: ...)" in error messages.
//!
//! `[world]` is typed here ([`super::world::KEYS`]). `[workload]` and
//! `[memory]` are accepted as opaque tables for now: the engines' issue types
//! them (and adds their keys here).

use super::world::{KEYS, KeyError};

/// Top-level sections.
pub const SECTIONS: &[&str] = &["world", "workload", "memory"];

/// Sections whose keys are not checked yet.
const OPAQUE: &[&str] = &["workload", "memory"];

fn unknown(key: String, allowed: String) -> KeyError {
    KeyError {
        key,
        message: "unknown key".into(),
        allowed,
    }
}

/// Check a dotted key path (`world.tasks`) against the schema.
pub fn check_path(path: &[&str]) -> Result<(), KeyError> {
    let section = path[0];
    if !SECTIONS.contains(&section) {
        return Err(unknown(section.into(), SECTIONS.join(", ")));
    }
    if path.len() < 2 {
        return Err(KeyError {
            key: section.into(),
            message: "a whole section cannot be set".into(),
            allowed: format!("{section}.KEY"),
        });
    }
    if OPAQUE.contains(&section) {
        return Ok(());
    }
    let key = path[1];
    if path.len() > 2 || !KEYS.iter().any(|(k, _)| *k == key) {
        return Err(unknown(path.join("."), world_keys()));
    }
    Ok(())
}

fn world_keys() -> String {
    KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
}

/// Check every key present in a parsed file.
pub fn check_table(table: &toml::Table) -> Result<(), KeyError> {
    for (section, value) in table {
        match value.as_table() {
            Some(t) if section == "world" => {
                for key in t.keys() {
                    check_path(&["world", key])?;
                }
            }
            Some(_) => check_path(&[section, "*"])?,
            None if SECTIONS.contains(&section.as_str()) => {
                return Err(KeyError {
                    key: section.clone(),
                    message: "must be a [section] table".into(),
                    allowed: format!("[{section}]"),
                });
            }
            None => check_path(&[section])?,
        }
    }
    Ok(())
}

/// What a key allows, for messages about it (`world.tasks` -> `1..=1000000`).
pub fn allowed(path: &str) -> String {
    let mut parts = path.split('.');
    match (parts.next(), parts.next()) {
        (Some("world"), Some(key)) => KEYS
            .iter()
            .find(|(k, _)| *k == key)
            .map_or_else(world_keys, |(_, a)| a.to_string()),
        (Some("world"), None) => format!("a [world] table with {}", world_keys()),
        (Some("workload" | "memory"), _) => super::workload::allowed(path).unwrap_or_default(),
        _ => format!("sections {}", SECTIONS.join(", ")),
    }
}
