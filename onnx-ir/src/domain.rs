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

/// The opset of the default domain a model imports (1 when it lists none: see [`check_opset`]).
pub fn default_opset(model: &ModelProto) -> i64 {
    model.opset_import.iter().find(|o| is_default(o.domain())).map_or(1, |o| o.version())
}

/// IR version 3 introduced `opset_import`; older models implicitly use opset 1.
const FIRST_IR_WITH_OPSET_IMPORT: i64 = 3;

/// The default-domain opset must be one ONNX defines, as ONNX Runtime requires at load: a
/// version below 1 or above the newest in `onnx.defs`, or none at all in a model that has
/// default-domain nodes (`uses_default`) and an IR version with opset imports, is refused (the
/// importer would otherwise guess the ops' semantics).
pub fn check_opset(model: &ModelProto, uses_default: bool) -> Result<(), String> {
    let newest = crate::ops::arity::NEWEST_OPSET;
    match model.opset_import.iter().find(|o| is_default(o.domain())) {
        None if uses_default && model.ir_version() >= FIRST_IR_WITH_OPSET_IMPORT => Err(format!(
            "the model imports no opset of the default domain (ai.onnx), required from IR version \
             {FIRST_IR_WITH_OPSET_IMPORT} (the model has IR version {})",
            model.ir_version()
        )),
        None => Ok(()),
        Some(o) if !(1..=newest).contains(&o.version()) => Err(format!(
            "opset version {} of the default domain (ai.onnx) does not exist: ONNX defines 1 to {newest}",
            o.version()
        )),
        Some(_) => Ok(()),
    }
}
