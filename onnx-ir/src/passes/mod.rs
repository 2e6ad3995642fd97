//! Simplification passes over the IR, each in its own module. `simplify = false` skips them;
//! outputs must be the same either way.

pub mod fold;
mod remove_identity;

use crate::graph::Graph;

pub use remove_identity::remove_identity;

/// Runs every pass in order.
pub fn simplify(graph: &mut Graph) {
    remove_identity(graph);
}
