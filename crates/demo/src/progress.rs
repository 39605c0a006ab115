//! The optional progress bar shared by both loaders.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Rows between progress updates: updating per row would cost more than
/// generating the row.
pub(crate) const STEP: u64 = 4_096;

/// A bar on stderr over `total` rows, or a hidden one when not `enabled`, so
/// callers update it unconditionally.
pub(crate) fn bar(total: u64, enabled: bool) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    // The template is a constant, so this only falls back if indicatif
    // changes its syntax; the default style is still a usable bar.
    if let Ok(style) =
        ProgressStyle::with_template("{msg:>16} [{bar:40}] {human_pos}/{human_len} rows ({eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
