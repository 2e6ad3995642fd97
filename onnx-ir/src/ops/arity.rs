//! The one input/output-count check every default-domain op goes through before its parser
//! runs, from the schema table of `onnx.defs` (see `arity_table`). Parsers and type inference
//! index their inputs by position; this check is what makes that indexing safe for any model
//! bytes, instead of a bounds check in each op handler.

/// The generated table (a child module, so that it can name [`Arity`]).
#[path = "arity_table.rs"]
mod arity_table;

use arity_table::ARITY;

/// One schema version's counts, as `onnx.defs` declares them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arity {
    /// The op type.
    pub op: &'static str,
    /// The opset version that introduced this schema version.
    pub since: i64,
    /// The fewest inputs a node may have (`min_input`).
    pub min_inputs: usize,
    /// The most inputs a node may have (`max_input`: 2^31 - 1 when the last one is variadic).
    pub max_inputs: usize,
    /// Bit `i` set when formal input `i` is optional (may be omitted or named `""`).
    pub optional_inputs: u64,
    /// The fewest outputs a node may have (`min_output`).
    pub min_outputs: usize,
    /// The most outputs a node may have (`max_output`: 2^31 - 1 when the last one is variadic).
    pub max_outputs: usize,
}

pub use arity_table::NEWEST_OPSET;

/// Every schema version of the default domain, sorted by op and version.
pub fn schemas() -> &'static [Arity] {
    ARITY
}

impl Arity {
    fn optional(&self, index: usize) -> bool {
        index < 64 && self.optional_inputs & (1 << index) != 0
    }
}

/// Every schema version of `op_type`, oldest first (empty for an op `onnx.defs` does not define).
fn versions(op_type: &str) -> &'static [Arity] {
    let start = ARITY.partition_point(|a| a.op < op_type);
    &ARITY[start..start + ARITY[start..].partition_point(|a| a.op == op_type)]
}

/// The schema of `op_type` in force at `opset`: the newest version introduced at or before it.
/// Before the op's first version it is the first one: [`check`] refuses such a node, and callers
/// that only compare versions (function inlining) read `since` against the opset themselves.
pub fn schema(op_type: &str, opset: i64) -> Option<&'static Arity> {
    let versions = versions(op_type);
    versions.iter().rev().find(|a| a.since <= opset).or(versions.first())
}

fn range(min: usize, max: usize, what: &str) -> String {
    match (min, max) {
        (min, max) if min == max => format!("{min} {what}"),
        (min, max) if max >= i32::MAX as usize => format!("at least {min} {what}"),
        (min, max) => format!("{min} to {max} {what}"),
    }
}

/// Why a node with these input names (`""` for an omitted one) and `outputs` outputs does not
/// fit the op's schema at `opset`, or `None` when it fits (or the op has no schema here).
pub fn check(op_type: &str, opset: i64, inputs: &[String], outputs: usize) -> Option<String> {
    let s = schema(op_type, opset)?;
    // ONNX Runtime refuses such a model at load ("invalid model"): the op does not exist there.
    if s.since > opset {
        return Some(format!(
            "{op_type} is defined from opset {} of ai.onnx on, the model imports opset {opset}",
            s.since
        ));
    }
    let version = format!("{op_type}-{}", s.since);
    if !(s.min_inputs..=s.max_inputs).contains(&inputs.len()) {
        let expected = range(s.min_inputs, s.max_inputs, "input(s)");
        return Some(format!("{version} takes {expected}, the node has {}", inputs.len()));
    }
    if let Some(i) = inputs.iter().enumerate().position(|(i, name)| name.is_empty() && !s.optional(i)) {
        return Some(format!("input {i} of {version} is required but omitted (empty name)"));
    }
    if !(s.min_outputs..=s.max_outputs).contains(&outputs) {
        let expected = range(s.min_outputs, s.max_outputs, "output(s)");
        return Some(format!("{version} has {expected}, the node declares {outputs}"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn table_is_sorted_for_the_binary_search() {
        assert!(ARITY.windows(2).all(|w| (w[0].op, w[0].since) < (w[1].op, w[1].since)));
    }

    #[test]
    fn picks_the_version_in_force() {
        assert_eq!(schema("Clip", 10).map(|a| a.since), Some(6));
        assert_eq!(schema("Clip", 11).map(|a| a.since), Some(11));
        assert_eq!(schema("Clip", 12).map(|a| a.max_inputs), Some(3));
        assert!(schema("NoSuchOp", 13).is_none());
    }

    #[test]
    fn counts_and_omitted_inputs() {
        assert_eq!(check("Identity", 13, &[], 1).as_deref(), Some("Identity-13 takes 1 input(s), the node has 0"));
        assert!(check("Add", 14, &names(&["a"]), 1).unwrap().contains("takes 2 input(s)"));
        assert!(check("Add", 14, &names(&["a", ""]), 1).unwrap().contains("input 1 of Add-14 is required"));
        assert_eq!(check("Clip", 13, &names(&["x", "", "max"]), 1), None);
        assert!(check("Sum", 13, &[], 1).unwrap().contains("at least 1 input(s)"));
        assert!(check("Relu", 14, &names(&["x"]), 0).unwrap().contains("the node declares 0"));
        assert_eq!(check("Dropout", 13, &names(&["x"]), 2), None);
    }

    #[test]
    fn an_op_before_its_first_version_is_refused() {
        let message = check("Gelu", 17, &names(&["x"]), 1).unwrap();
        assert_eq!(message, "Gelu is defined from opset 20 of ai.onnx on, the model imports opset 17");
        assert_eq!(check("Gelu", 20, &names(&["x"]), 1), None);
        assert!(check("Mish", 17, &names(&["x"]), 1).is_some());
    }
}
