//! Valid, unique, deterministic Rust identifiers from ONNX names.

use proc_macro2::{Ident, Span};
use std::collections::{HashMap, HashSet};

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

/// The snake_case form of a Rust type name, which names its files and module: `MnistV2` →
/// `mnist_v2`, `HTTPServer` → `http_server`. A word starts at an upper-case letter that follows a
/// lower-case letter or a digit, or that follows an upper-case one and precedes a lower-case one;
/// so the files of a model named from `my_model.onnx` (`MyModel`) are `my_model.rs` and `.bpk`.
pub fn type_stem(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut words = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
        let starts_word = c.is_uppercase()
            && previous.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next_lower));
        if starts_word {
            words.push('_');
        }
        words.push(c);
    }
    snake_case(&words)
}

/// A Rust type name from a file stem: `mnist-v2` → `MnistV2`.
pub fn type_name(stem: &str) -> String {
    let name: String = snake_case(stem)
        .split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) || name.is_empty() {
        format!("Model{name}")
    } else {
        name
    }
}

/// Hands out identifiers, never the same one twice.
#[derive(Default)]
pub struct Names {
    used: HashSet<String>,
    /// Per hint, the first number not yet tried: names are never released, so the numbers
    /// below it stay taken (28,000 `relu` nodes would otherwise retry `relu_2`, `relu_3`, ...
    /// for each new one).
    next_number: HashMap<String, usize>,
}

impl Names {
    pub fn reserve(&mut self, name: &str) {
        self.used.insert(name.to_string());
    }

    /// `snake_case(hint)`, with `_2`, `_3`, ... appended on collision.
    pub fn fresh(&mut self, hint: &str) -> Ident {
        self.unique(snake_case(hint), "_")
    }

    /// `name` as it is (already an identifier, such as a type name), with `2`, `3`, ...
    /// appended on collision.
    pub fn exact(&mut self, name: &str) -> Ident {
        self.unique(name.to_string(), "")
    }

    fn unique(&mut self, base: String, separator: &str) -> Ident {
        if !self.next_number.contains_key(&base) && self.used.insert(base.clone()) {
            return Ident::new(&base, Span::call_site());
        }
        let name = self.first_free(&base, 2, |n| format!("{base}{separator}{n}"));
        Ident::new(&name, Span::call_site())
    }

    /// `hint1`, `hint2`, ... : numbered names for layers (`conv2d1`, `linear2`).
    pub fn numbered(&mut self, hint: &str) -> Ident {
        let name = self.first_free(&format!("{hint}#"), 1, |n| format!("{hint}{n}"));
        Ident::new(&name, Span::call_site())
    }

    /// The first unused `name(n)` from the hint's next number (or `start`) on.
    fn first_free(&mut self, key: &str, start: usize, name: impl Fn(usize) -> String) -> String {
        let next = self.next_number.entry(key.to_string()).or_insert(start);
        loop {
            let candidate = name(*next);
            *next += 1;
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{type_name, type_stem, Names};

    #[test]
    fn a_type_name_s_stem_splits_its_words() {
        let stems = ["Digits", "MyModel", "MnistV2", "HTTPServer", "UNet", "Model2", "GraphInputNoShape", "ABC"];
        assert_eq!(
            stems.map(type_stem),
            ["digits", "my_model", "mnist_v2", "http_server", "u_net", "model2", "graph_input_no_shape", "abc"]
        );
        for file in ["digits", "my_model", "mnist_v2", "graph_input_no_shape"] {
            assert_eq!(type_stem(&type_name(file)), file, "a file stem's type name gives the stem back");
        }
    }

    #[test]
    fn names_are_numbered_past_every_taken_one() {
        let mut names = Names::default();
        names.reserve("relu_3");
        let fresh: Vec<String> = (0..3).map(|_| names.fresh("Relu").to_string()).collect();
        assert_eq!(fresh, ["relu", "relu_2", "relu_4"]);
        names.reserve("conv2");
        let numbered: Vec<String> = (0..2).map(|_| names.numbered("conv").to_string()).collect();
        assert_eq!(numbered, ["conv1", "conv3"]);
        assert_eq!(names.fresh("self").to_string(), "self_");
        let types: Vec<String> = (0..2).map(|_| names.exact("UnetPart").to_string()).collect();
        assert_eq!(types, ["UnetPart", "UnetPart2"]);
    }
}
