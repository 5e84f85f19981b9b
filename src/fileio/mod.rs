//! Every file the tool writes, and the JSON it reads back.
//!
//! One writer: [`write_atomic`] puts the bytes in `.tmp-NAME` next to NAME,
//! fsyncs it, renames it over NAME (atomic within a file system) and fsyncs
//! the folder so the rename itself survives a crash. A reader therefore sees
//! the old file or the new one, never half of one; only a kill during a write
//! leaves a `.tmp-*` file, which readers skip (dot files) and
//! [`remove_temps`] deletes. Run JSON and CSV, sweep folders, plots, `inspect
//! --dot` and machine profiles all go through it.
//!
//! One reader: [`read_json`] for any file, and [`results`] for the tool's
//! own result files (a run JSON, a sweep folder, a results.json), with their
//! schema checked.

pub mod results;

use crate::{Error, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Prefix of the temporary file a write goes through.
const TEMP_PREFIX: &str = ".tmp-";

/// The temp name [`write_atomic`] uses for `path`; it keeps the extension, so
/// writers that pick a format by extension (plotters' bitmap) can write it
/// themselves and then call [`commit_temp`].
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    path.with_file_name(format!("{TEMP_PREFIX}{name}"))
}

/// Write `bytes` to `path` whole or not at all (see the module doc). A path
/// that names no file (`dir/`, `..`) is bad input.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if path.file_name().is_none() {
        return Err(Error::usage(format!(
            "{}: not a file name (allowed: a path ending in a file name)",
            path.display()
        )));
    }
    let temp = temp_path(path);
    fs::File::create(&temp)
        .and_then(|mut file| file.write_all(bytes))
        .map_err(|e| io_error("writing", &temp, e))?;
    commit_temp(path)
}

/// Make the written [`temp_path`] of `path` durable (fsync) and rename it over
/// `path`, then fsync the folder so the rename survives a crash too.
pub fn commit_temp(path: &Path) -> Result<()> {
    let temp = temp_path(path);
    fs::File::open(&temp)
        .and_then(|f| f.sync_all())
        .and_then(|()| fs::rename(&temp, path))
        .map_err(|e| {
            let _ = fs::remove_file(&temp);
            io_error("writing", path, e)
        })?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    fs::File::open(dir.unwrap_or(Path::new(".")))
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error("syncing the folder of", path, e))
}

/// `value` as pretty JSON with a final newline: the bytes of every JSON file
/// the tool writes.
pub fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| Error::failed(format!("serializing JSON: {e}")))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// [`to_json`], written with [`write_atomic`].
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    write_atomic(path, &to_json(value)?)
}

/// Parse one JSON file; a missing or malformed file is bad input.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| Error::usage(format!("{}: {e}", path.display())))
}

/// The entries of `dir` that are not dot files (temp files, editor litter),
/// sorted by name.
pub fn visible_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = fs::read_dir(dir).map_err(|e| io_error("reading", dir, e))?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error("reading", dir, e))?;
        if !entry.file_name().to_string_lossy().starts_with('.') {
            paths.push(entry.path());
        }
    }
    paths.sort();
    Ok(paths)
}

/// Delete the temp files an interrupted write left in `dir`.
pub fn remove_temps(dir: &Path) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| io_error("reading", dir, e))?;
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            let path = entry.path();
            fs::remove_file(&path).map_err(|e| io_error("removing", &path, e))?;
        }
    }
    Ok(())
}

fn io_error(doing: &str, path: &Path, e: std::io::Error) -> Error {
    Error::failed(format!("{doing} {}: {e}", path.display()))
}

/// Replace what lies between the lines `begin` and `end` of the text file
/// at `path` with `body` (a README's generated table), writing it whole or
/// not at all. A file without both markers, in that order, is bad input.
pub fn replace_between(path: &Path, begin: &str, end: &str, body: &str) -> Result<()> {
    let (text, b, e) = section(path, begin, end)?;
    let head = &text[..b + begin.len()];
    let tail = &text[e..];
    write_atomic(path, format!("{head}\n{body}{tail}").as_bytes())
}

/// The text of `path` and where its `begin` and `end` markers are; checks a
/// file before a long job that will replace its section.
pub fn section(path: &Path, begin: &str, end: &str) -> Result<(String, usize, usize)> {
    let text = fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", path.display())))?;
    match (text.find(begin), text.find(end)) {
        (Some(b), Some(e)) if b < e => Ok((text, b, e)),
        _ => Err(Error::usage(format!(
            "{}: no '{begin}' ... '{end}' markers (allowed: a file holding both, in that order)",
            path.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_section_is_replaced_between_its_markers_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("README.md");
        fs::write(&path, "head\n<!-- b -->\nold\n<!-- e -->\ntail\n").unwrap();
        replace_between(&path, "<!-- b -->", "<!-- e -->", "new\n").unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "head\n<!-- b -->\nnew\n<!-- e -->\ntail\n"
        );
        fs::write(&path, "no markers\n").unwrap();
        let e = replace_between(&path, "<!-- b -->", "<!-- e -->", "x").unwrap_err();
        assert!(matches!(e, Error::Usage(_)), "{e}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "no markers\n");
    }

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomic(&path, b"old").unwrap();
        write_json(&path, &[1, 2]).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "[\n  1,\n  2\n]\n");
        assert_eq!(visible_entries(dir.path()).unwrap(), vec![path.clone()]);
        assert!(!temp_path(&path).exists());
        assert_eq!(read_json::<Vec<u32>>(&path).unwrap(), vec![1, 2]);
    }

    #[test]
    fn leftover_temps_are_hidden_then_removed() {
        let dir = tempfile::tempdir().unwrap();
        let left = temp_path(&dir.path().join("b.csv"));
        fs::write(&left, "half").unwrap();
        assert!(visible_entries(dir.path()).unwrap().is_empty());
        remove_temps(dir.path()).unwrap();
        assert!(!left.exists());
    }

    #[test]
    fn bad_paths_are_one_line_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_atomic(&dir.path().join(".."), b"x").unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        let missing = dir.path().join("no/such/folder/f.json");
        assert_eq!(write_atomic(&missing, b"x").unwrap_err().exit_code(), 1);
        let e = read_json::<u32>(&dir.path().join("none.json")).unwrap_err();
        assert!(e.to_string().contains("cannot read"), "{e}");
    }
}
