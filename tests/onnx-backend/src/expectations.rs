//! `expectations.toml`: one table per test with its status and, if not passing, why.
//! A tiny writer and reader for exactly this shape, so the file stays diff-friendly.

use std::collections::BTreeMap;
use std::fmt::Write as _;

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

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn unquote(s: &str) -> Option<String> {
    let inner = s.trim().strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.push(chars.next()?);
        } else {
            out.push(c);
        }
    }
    Some(out)
}

pub fn write(suite: &str, outcomes: &BTreeMap<String, Outcome>) -> String {
    let passed = outcomes.values().filter(|o| o.passed()).count();
    let mut out = format!(
        "# Test outcomes for `{suite}`: {passed} of {} pass.\n# Written by the onnx-backend runner with --update; do not edit by hand.\n",
        outcomes.len()
    );
    for (name, o) in outcomes {
        let _ = write!(out, "\n[{name}]\nstatus = {}\n", quote(&o.status));
        if !o.reason.is_empty() {
            let _ = writeln!(out, "reason = {}", quote(&o.reason));
        }
    }
    out
}

pub fn parse(text: &str) -> Result<BTreeMap<String, Outcome>, String> {
    let mut map = BTreeMap::new();
    let mut current: Option<(String, Outcome)> = None;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if let Some((k, v)) = current.take() {
                map.insert(k, v);
            }
            current = Some((name.to_string(), Outcome::new("", "")));
            continue;
        }
        let (key, value) = line.split_once('=').ok_or_else(|| format!("line {}: expected key = value", n + 1))?;
        let value = unquote(value).ok_or_else(|| format!("line {}: expected a quoted string", n + 1))?;
        let (_, outcome) = current.as_mut().ok_or_else(|| format!("line {}: key outside a table", n + 1))?;
        match key.trim() {
            "status" => outcome.status = value,
            "reason" => outcome.reason = value,
            other => return Err(format!("line {}: unknown key `{other}`", n + 1)),
        }
    }
    if let Some((k, v)) = current {
        map.insert(k, v);
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
}
