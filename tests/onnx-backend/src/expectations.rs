//! `expectations.toml`: one table per test with its status and, if not passing, why; read and
//! written with `toml_edit`, one table a test with a blank line before it, so the file stays
//! diff-friendly.

use std::collections::BTreeMap;
use toml_edit::{value, DocumentMut, Item, Table};

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// `pass`, `import-error`, `compile-error`, `mismatch` or `runtime-error`.
    pub status: String,
    /// First line of the error (empty for a pass).
    pub reason: String,
    /// Largest difference seen over the data sets, and data set 0's forward time in ms
    /// (reported, not stored).
    pub max_diff: Option<f64>,
    pub forward_ms: Option<f64>,
}

impl Outcome {
    pub fn new(status: &str, reason: &str) -> Self {
        let reason = reason.lines().next().unwrap_or("").trim();
        let reason: String = reason.chars().take(300).collect();
        Self { status: status.into(), reason, max_diff: None, forward_ms: None }
    }

    pub fn passed(&self) -> bool {
        self.status == "pass"
    }
}

pub fn write(suite: &str, outcomes: &BTreeMap<String, Outcome>) -> String {
    let passed = outcomes.values().filter(|o| o.passed()).count();
    let mut doc = DocumentMut::new();
    for (name, o) in outcomes {
        let mut table = Table::new();
        table.decor_mut().set_prefix("\n");
        table.insert("status", value(&o.status));
        if !o.reason.is_empty() {
            table.insert("reason", value(&o.reason));
        }
        doc.insert(name, Item::Table(table));
    }
    format!(
        "# Test outcomes for `{suite}`: {passed} of {} pass.\n# Written by the onnx-backend runner with --update; do not edit by hand.\n{doc}",
        outcomes.len()
    )
}

pub fn parse(text: &str) -> Result<BTreeMap<String, Outcome>, String> {
    let doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| e.to_string())?;
    let mut map = BTreeMap::new();
    for (name, item) in doc.iter() {
        let table = item.as_table().ok_or_else(|| format!("`{name}` is not a table"))?;
        let mut outcome = Outcome::new("", "");
        for (key, v) in table.iter() {
            let text = v.as_str().ok_or_else(|| format!("`{name}.{key}` is not a string"))?.to_string();
            match key {
                "status" => outcome.status = text,
                "reason" => outcome.reason = text,
                other => return Err(format!("`{name}`: unknown key `{other}`")),
            }
        }
        map.insert(name.to_string(), outcome);
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut m = BTreeMap::new();
        m.insert("test_a".to_string(), Outcome::new("pass", ""));
        m.insert("test_b".to_string(), Outcome::new("import-error", "node `x` (Foo): \"bad\" \\ thing\nsecond line"));
        let parsed = parse(&write("node", &m)).expect("parses");
        assert_eq!(parsed, m);
        assert_eq!(parsed["test_b"].reason, "node `x` (Foo): \"bad\" \\ thing");
    }

    /// Reading and writing again gives each checked-in file back byte for byte, so `--update`
    /// changes only the lines of tests whose outcome changed.
    #[test]
    fn checked_in_files_round_trip() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for suite in ["node", "simple", "pytorch-converted", "pytorch-operator", "light", "real-models"] {
            let file = if suite == "node" { "expectations.toml".to_string() } else { format!("{suite}.toml") };
            let text = std::fs::read_to_string(dir.join(&file)).expect("a checked-in expectations file");
            let parsed = parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(write(suite, &parsed), text, "{file}");
        }
    }
}
