//! The doc comment of the generated struct: where the model came from (producer, opset, model
//! version), its descriptions and its metadata, as the file states them. Model text is made
//! inert first: control and text-direction characters become spaces (rustc refuses the latter
//! in a literal), whitespace runs one space, Markdown's special characters are escaped, and
//! every value and the number of entries are bounded, so that a hostile file cannot make the
//! comment long or make rustdoc render anything but text.

use onnx_ir::Graph;
use proc_macro2::TokenStream;
use quote::quote;

/// Characters kept of a key, a value, a name or a producer field.
const MAX_VALUE_CHARS: usize = 200;
/// Characters kept of a description (`doc_string`).
const MAX_DOC_CHARS: usize = 1000;
/// Entries shown of each metadata list.
const MAX_ENTRIES: usize = 32;

/// The lines of the doc comment (each becomes one `///` line).
pub fn lines(graph: &Graph) -> Vec<String> {
    let info = &graph.info;
    let producer = [&info.producer_name, &info.producer_version]
        .iter()
        .map(|s| clean(s, MAX_VALUE_CHARS))
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let mut first = String::from("Imported from ONNX: ");
    if !producer.is_empty() {
        first += &format!("producer {producer}, ");
    }
    first += &format!("opset {}", graph.opset);
    if info.model_version != 0 {
        first += &format!(", model version {}", info.model_version);
    }
    first.push('.');
    let mut lines = vec![first];
    describe(&mut lines, "Description", &info.doc_string);
    let graph_label = match clean(&info.graph_name, MAX_VALUE_CHARS) {
        name if name.is_empty() => "Graph".to_string(),
        name => format!("Graph {name}"),
    };
    describe(&mut lines, &graph_label, &info.graph_doc_string);
    list(&mut lines, "Metadata", &info.metadata);
    list(&mut lines, "Graph metadata", &info.graph_metadata);
    lines
}

/// `#[doc]` attributes of the lines, after a blank doc line when `attrs` (the user's own
/// attributes, which come first) already hold a doc comment.
pub fn attributes(lines: &[String], attrs: &TokenStream) -> TokenStream {
    let user_doc = syn::parse::Parser::parse2(syn::Attribute::parse_outer, attrs.clone())
        .map_or(true, |attrs| attrs.iter().any(|a| a.path().is_ident("doc")));
    let separator = user_doc.then(|| quote! { #[doc = ""] });
    let lines = lines.iter().map(|l| if l.is_empty() { String::new() } else { format!(" {l}") });
    quote! { #separator #(#[doc = #lines])* }
}

/// `label: text` as a paragraph of its own, when there is text.
fn describe(lines: &mut Vec<String>, label: &str, text: &str) {
    let text = clean(text, MAX_DOC_CHARS);
    if !text.is_empty() {
        lines.push(String::new());
        lines.push(format!("{label}: {text}"));
    }
}

/// `label:` and one `- key = value` item per entry, at most [`MAX_ENTRIES`] of them.
fn list(lines: &mut Vec<String>, label: &str, entries: &[(String, String)]) {
    if entries.is_empty() {
        return;
    }
    lines.push(String::new());
    lines.push(format!("{label}:"));
    for (key, value) in entries.iter().take(MAX_ENTRIES) {
        lines.push(format!("- {} = {}", clean(key, MAX_VALUE_CHARS), clean(value, MAX_VALUE_CHARS)));
    }
    if entries.len() > MAX_ENTRIES {
        lines.push(format!("- ({} more entries not shown)", entries.len() - MAX_ENTRIES));
    }
}

/// Unicode's explicit text-direction controls, which rustc refuses in literals and comments.
fn is_direction_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// One line of inert text: at most `max` characters of `text` (a note saying how long it was
/// when cut), whitespace collapsed, Markdown escaped.
fn clean(text: &str, max: usize) -> String {
    let plain: String = text.chars().map(|c| if c.is_control() || is_direction_control(c) { ' ' } else { c }).collect();
    let words: Vec<&str> = plain.split_whitespace().collect();
    let joined = words.join(" ");
    let total = joined.chars().count();
    let kept: String = joined.chars().take(max).collect();
    let mut out = escape_markdown(&kept);
    if total > max {
        out += &format!(" … (cut, {total} characters in all)");
    }
    out
}

/// A backslash before every character that Markdown (as rustdoc reads it) could take for
/// markup: code spans, emphasis, links, HTML and entities; `_` only where it could open or
/// close emphasis (inside a word it cannot, so `onnx_version` stays as it is).
fn escape_markdown(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let in_word = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_some_and(|c| c.is_alphanumeric());
        let escape = match c {
            '\\' | '`' | '*' | '[' | ']' | '<' | '>' | '&' | '~' | '#' | '|' => true,
            '_' => !(in_word(i.checked_sub(1)) && in_word(Some(i + 1))),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use onnx_ir::ModelInfo;

    #[test]
    fn text_is_inert_and_bounded() {
        assert_eq!(clean("a\n\tb  c", 100), "a b c");
        assert_eq!(clean("<script>`x`*y*", 100), r"\<script\>\`x\`\*y\*");
        assert_eq!(clean("onnx_version _x_", 100), r"onnx_version \_x\_");
        assert_eq!(clean("a\u{202e}b", 100), "a b");
        assert_eq!(clean("abcdef", 3), "abc … (cut, 6 characters in all)");
        assert_eq!(clean("ééé", 2), "éé … (cut, 3 characters in all)");
    }

    #[test]
    fn entries_are_bounded() {
        let mut lines = vec![];
        let entries: Vec<(String, String)> = (0..40).map(|i| (format!("k{i}"), "v".to_string())).collect();
        list(&mut lines, "Metadata", &entries);
        assert_eq!(lines.len(), 2 + MAX_ENTRIES + 1);
        assert_eq!(lines.last().unwrap(), "- (8 more entries not shown)");
    }

    #[test]
    fn user_docs_come_first_then_a_blank_line() {
        let lines = vec!["Imported from ONNX: opset 13.".to_string()];
        let none = attributes(&lines, &quote! {});
        assert_eq!(none.to_string(), quote! { #[doc = " Imported from ONNX: opset 13."] }.to_string());
        let with_doc = attributes(&lines, &quote! { #[doc = " Mine."] #[derive(Clone)] });
        assert!(with_doc.to_string().starts_with(&quote! { #[doc = ""] }.to_string()));
        let derive_only = attributes(&lines, &quote! { #[derive(Clone)] });
        assert_eq!(derive_only.to_string(), none.to_string());
    }

    #[test]
    fn info_lines() {
        let graph = Graph {
            values: vec![],
            nodes: vec![],
            inputs: vec![],
            outputs: vec![],
            opset: 17,
            side_files: vec![],
            fixed_dims: vec![],
            info: ModelInfo {
                producer_name: "pytorch".into(),
                producer_version: "2.1.0".into(),
                model_version: 3,
                doc_string: "A *small*\nmodel.".into(),
                graph_name: "main_graph".into(),
                graph_doc_string: String::new(),
                metadata: vec![("author".into(), "me".into()), ("license".into(), "MIT".into())],
                graph_metadata: vec![],
            },
        };
        assert_eq!(
            lines(&graph),
            [
                "Imported from ONNX: producer pytorch 2.1.0, opset 17, model version 3.",
                "",
                r"Description: A \*small\* model.",
                "",
                "Metadata:",
                "- author = me",
                "- license = MIT",
            ]
        );
    }
}
