//! The sweep's progress bar: one tick per finished point, on stderr, and drawn
//! only when stderr is a terminal (indicatif's stderr target hides itself
//! otherwise), so logs and CI output stay clean.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar for `len` points on stderr.
pub fn bar(len: usize) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} points, eta {eta} {msg}",
    )
    .expect("the template is a constant and valid")
    .progress_chars("=> ");
    bar.set_style(style);
    bar
}
