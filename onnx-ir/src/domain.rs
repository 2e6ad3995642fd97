//! ONNX's default operator domain has two spellings, `""` and `ai.onnx`.

use crate::proto::ModelProto;

/// Whether `domain` is the default one.
pub fn is_default(domain: &str) -> bool {
    domain.is_empty() || domain == "ai.onnx"
}

/// `""` for the default domain (either spelling), else the domain: for comparisons.
pub fn canonical(domain: &str) -> &str {
    if is_default(domain) {
        ""
    } else {
        domain
    }
}

/// `ai.onnx` for the default domain (either spelling), else the domain: for messages.
pub fn display(domain: &str) -> &str {
    if is_default(domain) {
        "ai.onnx"
    } else {
        domain
    }
}

/// The opset of the default domain a model imports (1 when it lists none: see
/// `builder::check_opset`).
pub fn default_opset(model: &ModelProto) -> i64 {
    model.opset_import.iter().find(|o| is_default(o.domain())).map_or(1, |o| o.version())
}

/// The opset version a model imports of a domain other than the default one.
pub fn opset(model: &ModelProto, domain: &str) -> Option<i64> {
    model.opset_import.iter().find(|o| o.domain() == domain).map(|o| o.version())
}
