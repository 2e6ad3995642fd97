use std::fmt;

/// Everything that can go wrong turning ONNX bytes into the typed IR. Each variant carries
/// enough context (node name, op, the types seen) for a person to act on the message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The bytes are not a `ModelProto` (the protobuf decoder's message).
    #[error("not a valid ONNX model (protobuf decoding failed: {0})")]
    Decode(String),
    /// The `ModelProto` has no `graph` field.
    #[error("the ONNX model has no graph")]
    NoGraph,
    /// An IR version newer than the pinned onnx's.
    #[error("IR version {version} is newer than the newest this importer reads ({newest})")]
    IrVersion {
        /// The model's IR version.
        version: i64,
        /// The newest the importer reads.
        newest: i64,
    },
    /// The graph declares no outputs (ONNX Runtime refuses an empty graph at load).
    #[error("the graph declares no outputs: `forward` would have nothing to return")]
    NoOutputs,
    /// An `opset_import` entry is missing, repeated or out of the supported range.
    #[error("invalid opset import: {0}")]
    Opset(String),
    /// A graph input whose declared type cannot be used (no tensor type, unsupported dtype, ...).
    #[error("graph input `{name}`: {message}")]
    GraphInput {
        /// The input's ONNX name.
        name: String,
        /// What is wrong with it.
        message: String,
    },
    /// Dim sizes declared by name that cannot be applied (no such dim, two sizes for one name).
    #[error("declared dim sizes: {0}")]
    DimSize(String),
    /// A graph input (or the tensors of an input sequence or optional) with no shape: typed Rust
    /// needs its rank, which the user can declare ([`crate::InputShape`]).
    #[error("graph input `{0}`: the model gives it no shape, but `forward` needs its rank")]
    InputWithoutShape(String),
    /// An initializer or constant tensor whose data cannot be read (size mismatch, bad external data, ...).
    #[error("tensor `{name}`: {message}")]
    Tensor {
        /// The tensor's ONNX name.
        name: String,
        /// What is wrong with its data.
        message: String,
    },
    /// A node reads a value that nothing before it defines (the graph is not topologically sorted or is incomplete).
    #[error("node `{node}` ({op}): input `{input}` is not produced by any earlier node, initializer or graph input")]
    DanglingInput {
        /// The reading node's name.
        node: String,
        /// Its op type.
        op: String,
        /// The name of the undefined value.
        input: String,
    },
    /// A graph output names a value that nothing defines.
    #[error("graph output `{0}` is not produced by any node, initializer or graph input")]
    DanglingOutput(String),
    /// A node that cannot be parsed or typed: bad attribute, unsupported dtype or opset, wrong input count, ...
    #[error("node `{node}` ({op}): {message}")]
    Node {
        /// The node's name.
        node: String,
        /// Its op type.
        op: String,
        /// Why it was rejected.
        message: String,
    },
    /// The two branches of an `If` compute outputs of different dtype or rank.
    #[error("node `{node}` (If): branch outputs differ: {then_type} and {else_type}")]
    BranchTypes {
        /// The `If` node's name.
        node: String,
        /// The `then_branch` output's type, as displayed.
        then_type: String,
        /// The `else_branch` output's type, as displayed.
        else_type: String,
        /// The outputs differ only in the rank of a one-element value (`[]` and `[1]`, `[1]` and
        /// `[1, 1]`): either branch's value can be reshaped to the other's type, so no branch
        /// need be given up. `Some(then_wider)`: whether typing the graph for the then branch
        /// gives the output the higher rank (ONNX Runtime's `[1]` for `[]` and `[1]`, the
        /// typing kept when nothing later settles the rank); `None` for other differences.
        reshapable: Option<bool>,
    },
    /// A graph output's declared type contradicts the type inferred for it.
    #[error("graph output `{name}`: the model declares {declared} but the graph computes {inferred}")]
    DeclaredOutput {
        /// The output's ONNX name.
        name: String,
        /// The type the model declares, as displayed.
        declared: String,
        /// The type inference computed, as displayed.
        inferred: String,
    },
    /// A model-local function (`FunctionProto`) that cannot be inlined.
    #[error("model-local function `{function}`: {message}")]
    Function {
        /// The function's name (`domain::name`).
        function: String,
        /// Why it cannot be inlined.
        message: String,
    },
    /// Ops with no parser and no user hook, all of them at once, one entry per `(domain, op_type)`.
    #[error("{}", UnsupportedList(.0))]
    UnsupportedOps(Vec<UnsupportedOp>),
}

/// One operator with no implementation, and how many nodes of the model use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedOp {
    /// The op's domain as the model spells it (`""` for the default domain).
    pub domain: String,
    /// The ONNX op type.
    pub op_type: String,
    /// How many nodes of the model (subgraphs included) use it.
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

/// `Result` with this crate's [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
