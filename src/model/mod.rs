//! Model files: read TOML, apply `--set` overrides, type, validate.
//!
//! Every failure is one line, `FILE: KEY: message (allowed: RANGE)`, and a
//! usage error (exit status 2); nothing here panics on any input.
//!
//! Sections: `[world]` ([`WorldSpec`]), `[workload]` ([`WorkloadSpec`]) and
//! `[memory]` ([`MemorySpec`]). Machine profiles for the simulator
//! (`models/machines/*.toml`) are read the same way by [`machine`].

pub mod machine;
mod overrides;
pub mod role;
pub mod schema;
pub mod workload;
pub mod world;

pub use role::{PerRole, Role};
pub use workload::{FaultLock, MemorySpec, MmChoice, RoleSpec, StudiedLock, WorkloadSpec};
pub use world::{KeyError, Shape, WorldSpec};

use crate::{Error, Result};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// A loaded, validated model.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub world: WorldSpec,
    pub workload: WorkloadSpec,
    pub memory: MemorySpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    world: WorldSpec,
    #[serde(default)]
    workload: WorkloadSpec,
    #[serde(default)]
    memory: MemorySpec,
}

impl Model {
    /// The model `rmap-storm` runs when none is given.
    pub fn default_path() -> PathBuf {
        PathBuf::from("models/aim7-fork-storm.toml")
    }
}

/// The one-line usage error for `file`.
pub(crate) fn key_error(file: &Path, e: KeyError) -> Error {
    Error::usage(format!(
        "{}: {}: {} (allowed: {})",
        file.display(),
        e.key,
        e.message,
        e.allowed
    ))
}

/// Load `path`, apply `overrides` (`SECTION.KEY=VALUE`, in order), validate.
pub fn load(path: &Path, overrides: &[String]) -> Result<Model> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", path.display())))?;
    let mut table = parse(path, &text)?;
    schema::check_table(&table).map_err(|e| key_error(path, e))?;
    for set in overrides {
        overrides::apply(&mut table, set).map_err(|e| key_error(path, e))?;
    }
    let raw: RawModel = typed(path, table, schema::allowed)?;
    raw.world.validate().map_err(|e| key_error(path, e))?;
    raw.workload
        .validate(raw.world.files)
        .map_err(|e| key_error(path, e))?;
    raw.memory.validate().map_err(|e| key_error(path, e))?;
    Ok(Model {
        world: raw.world,
        workload: raw.workload,
        memory: raw.memory,
    })
}

/// Type a checked table as `T`; a missing key, a wrong type or an unknown key
/// becomes one line naming the dotted key and what `allowed` says it takes.
pub(crate) fn typed<T: DeserializeOwned>(
    path: &Path,
    table: toml::Table,
    allowed: impl Fn(&str) -> String,
) -> Result<T> {
    serde_path_to_error::deserialize(table).map_err(|e| {
        let mut key = e.path().to_string();
        let inner = e.into_inner();
        let message = inner.message().to_string();
        // serde names a missing field in the message, not the path.
        if let Some(field) = message
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
        {
            key = if key == "." {
                field.into()
            } else {
                format!("{key}.{field}")
            };
        }
        let allowed = allowed(&key);
        key_error(
            path,
            KeyError {
                key,
                message,
                allowed,
            },
        )
    })
}

/// Parse TOML text; a syntax error becomes one line with its position.
pub(crate) fn parse(path: &Path, text: &str) -> Result<toml::Table> {
    text.parse::<toml::Table>().map_err(|e| {
        let at = e.span().map_or(String::from("syntax"), |span| {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {col}")
        });
        let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
        Error::usage(format!(
            "{}: {at}: {message} (allowed: TOML 1.0 syntax)",
            path.display()
        ))
    })
}
