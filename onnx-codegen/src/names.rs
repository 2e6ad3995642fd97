//! Valid, unique, deterministic Rust identifiers from ONNX names.

use proc_macro2::{Ident, Span};
use std::collections::HashSet;

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self",
    "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract", "become",
    "box", "do", "final", "gen", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// snake_case from any ONNX name: ASCII alphanumerics kept (lowercased), the rest become `_`.
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let trimmed = out.trim_matches('_');
    let mut s = if trimmed.is_empty() { "v".to_string() } else { trimmed.to_string() };
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert_str(0, "v_");
    }
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// Hands out identifiers, never the same one twice.
#[derive(Default)]
pub struct Names {
    used: HashSet<String>,
}

impl Names {
    pub fn reserve(&mut self, name: &str) {
        self.used.insert(name.to_string());
    }

    /// `snake_case(hint)`, with `_2`, `_3`, ... appended on collision.
    pub fn fresh(&mut self, hint: &str) -> Ident {
        let base = snake_case(hint);
        let mut candidate = base.clone();
        let mut n = 2;
        while !self.used.insert(candidate.clone()) {
            candidate = format!("{base}_{n}");
            n += 1;
        }
        Ident::new(&candidate, Span::call_site())
    }

    /// `hint1`, `hint2`, ... : numbered names for layers (`conv2d1`, `linear2`).
    pub fn numbered(&mut self, hint: &str) -> Ident {
        let mut n = 1;
        loop {
            let candidate = format!("{hint}{n}");
            if self.used.insert(candidate.clone()) {
                return Ident::new(&candidate, Span::call_site());
            }
            n += 1;
        }
    }
}
