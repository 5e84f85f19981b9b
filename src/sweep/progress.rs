//! The sweep's progress bar: one tick per finished point, on stderr, and drawn
//! only when stderr is a terminal (indicatif's stderr target hides itself
//! otherwise), so logs and CI output stay clean.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar on stderr; [`super::run`] sets its length to the points to run.
pub fn bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} points, eta {eta} {msg}",
    )
    .expect("the template is a constant and valid")
    .progress_chars("=> ");
    bar.set_style(style);
    bar
}
