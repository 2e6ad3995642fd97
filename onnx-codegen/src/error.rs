use thiserror::Error;

/// Failures of the whole import: reading, IR building, code generation, weight packing.
#[derive(Debug, Error)]
pub enum CodegenError {
    #[error("cannot read `{path}`: {message}")]
    Read { path: String, message: String },
    #[error(transparent)]
    Ir(#[from] onnx_ir::Error),
    #[error("node `{node}`: {message}")]
    Node { node: String, message: String },
    #[error("{0}")]
    Unsupported(String),
    #[error("`{0}` is not a Rust type name (letters, digits and `_`, not starting with a digit, not a keyword)")]
    Name(String),
    #[error("cannot write weights: {0}")]
    Weights(String),
    #[error("cannot write `{path}`: {message}")]
    Write { path: String, message: String },
}

pub type Result<T, E = CodegenError> = std::result::Result<T, E>;
