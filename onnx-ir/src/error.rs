use std::fmt;

/// Everything that can go wrong turning ONNX bytes into the typed IR. Each variant carries
/// enough context (node name, op, the types seen) for a person to act on the message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error("not a valid ONNX model (protobuf decoding failed: {0})")]
    Decode(String),
    #[error("the ONNX model has no graph")]
    NoGraph,
    #[error("invalid opset import: {0}")]
    Opset(String),
    #[error("graph input `{name}`: {message}")]
    GraphInput { name: String, message: String },
    #[error("tensor `{name}`: {message}")]
    Tensor { name: String, message: String },
    #[error("node `{node}` ({op}): input `{input}` is not produced by any earlier node, initializer or graph input")]
    DanglingInput { node: String, op: String, input: String },
    #[error("graph output `{0}` is not produced by any node, initializer or graph input")]
    DanglingOutput(String),
    #[error("node `{node}` ({op}): {message}")]
    Node { node: String, op: String, message: String },
    #[error("node `{node}` (If): branch outputs differ: {then_type} and {else_type}")]
    BranchTypes { node: String, then_type: String, else_type: String },
    #[error("graph output `{name}`: the model declares {declared} but the graph computes {inferred}")]
    DeclaredOutput { name: String, declared: String, inferred: String },
    #[error("model-local function `{function}`: {message}")]
    Function { function: String, message: String },
    #[error("{}", UnsupportedList(.0))]
    UnsupportedOps(Vec<UnsupportedOp>),
}

/// One operator with no implementation, and how many nodes of the model use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedOp {
    pub domain: String,
    pub op_type: String,
    pub nodes: usize,
}

impl fmt::Display for UnsupportedOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let domain = crate::domain::display(&self.domain);
        let plural = if self.nodes == 1 { "" } else { "s" };
        write!(f, "{domain}::{} ({} node{plural})", self.op_type, self.nodes)
    }
}

struct UnsupportedList<'a>(&'a [UnsupportedOp]);

impl fmt::Display for UnsupportedList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "model contains {} op(s) with no implementation: ", self.0.len())?;
        for (i, op) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{op}")?;
        }
        // What the user can do depends on the front door (only the macro takes hooks): it adds that.
        Ok(())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
