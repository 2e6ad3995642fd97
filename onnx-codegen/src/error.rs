use thiserror::Error;

/// Failures of the whole import: reading, IR building, code generation, weight packing.
#[derive(Debug, Error)]
pub enum CodegenError {
    #[error("cannot read `{path}`: {message}")]
    Read { path: String, message: String },
    #[error(transparent)]
    Ir(#[from] onnx_ir::Error),
    #[error("node `{node}` ({op}): {message}")]
    Node { node: String, op: String, message: String },
    #[error("{0}")]
    Unsupported(String),
    #[error("`{0}` is not a Rust type name (letters, digits and `_`, not starting with a digit, not a keyword)")]
    Name(String),
    /// A declared input shape or dim size that does not parse (see [`onnx_ir::InputShape`],
    /// [`onnx_ir::DimSize`]).
    #[error("{0}")]
    InputShape(String),
    #[error("cannot write weights: {0}")]
    Weights(String),
    #[error("cannot write `{path}`: {message}")]
    Write { path: String, message: String },
    /// Writing the files of the macro's `dump` option failed.
    #[error("dump folder `{dir}`: {source}")]
    Dump { dir: String, source: Box<CodegenError> },
}

/// The entry point reporting an error. It decides what its user can do about ops the importer
/// lacks: only the macro can call user code (hooks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontDoor {
    /// `#[onnx_model]`.
    Macro,
    /// `onnx2burn`.
    Cli,
    /// `ModelGen` in a build script.
    ModelGen,
}

impl FrontDoor {
    fn unsupported_ops_hint(self) -> String {
        match self {
            FrontDoor::Macro => "supply each with an #[onnx_custom_op] fn named in the attribute: \
                                 custom_ops = [\"domain::OpType\" => hook]"
                .into(),
            FrontDoor::Cli => without_hooks("onnx2burn"),
            FrontDoor::ModelGen => without_hooks("ModelGen"),
        }
    }

    /// How this door's user declares the shape of graph input `name`.
    fn input_shape_hint(self, name: &str) -> String {
        let declaration = match self {
            FrontDoor::Macro => format!("input_shapes = [\"{name}=[d0, d1, ...]\"] in the attribute"),
            FrontDoor::Cli => format!("--input-shape '{name}=[d0, d1, ...]'"),
            FrontDoor::ModelGen => format!(".input_shape(\"{name}=[d0, d1, ...]\") after its .input(..)"),
        };
        format!("declare one with {declaration}, each dim a size, a name or `?` (for a sequence, its tensors' shape)")
    }
}

/// The hint of a front door that cannot call user code: the macro can.
fn without_hooks(tool: &str) -> String {
    format!(
        "{tool} cannot call user code for them: import the model with \
         #[onnx_model(\"model.onnx\", custom_ops = [\"domain::OpType\" => hook])] and an \
         #[onnx_custom_op] fn for each, or report the missing ops to burn-onnx"
    )
}

impl CodegenError {
    /// The message as `door` shows it: unsupported ops are followed by what its user can do.
    pub fn report(&self, door: FrontDoor) -> String {
        match self {
            CodegenError::Ir(onnx_ir::Error::UnsupportedOps(_)) => format!("{self}; {}", door.unsupported_ops_hint()),
            CodegenError::Ir(onnx_ir::Error::InputWithoutShape(name)) => {
                format!("{self}: {}", door.input_shape_hint(name))
            }
            _ => self.to_string(),
        }
    }
}

pub type Result<T, E = CodegenError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn unsupported() -> CodegenError {
        let op = onnx_ir::UnsupportedOp { domain: "example.custom".into(), op_type: "Scale".into(), nodes: 2 };
        CodegenError::Ir(onnx_ir::Error::UnsupportedOps(vec![op]))
    }

    #[test]
    fn only_the_macro_suggests_a_hook_alone() {
        let list = "model contains 1 op(s) with no implementation: example.custom::Scale (2 nodes)";
        let macro_message = unsupported().report(FrontDoor::Macro);
        assert!(
            macro_message.starts_with(&format!("{list}; supply each with an #[onnx_custom_op] fn")),
            "{macro_message}"
        );
        for (door, tool) in [(FrontDoor::Cli, "onnx2burn"), (FrontDoor::ModelGen, "ModelGen")] {
            let message = unsupported().report(door);
            assert!(message.starts_with(&format!("{list}; {tool} cannot call user code")), "{message}");
            assert!(message.contains("#[onnx_model(") && message.contains("report the missing ops"), "{message}");
        }
    }

    #[test]
    fn each_door_says_how_to_declare_an_input_shape() {
        let error = CodegenError::Ir(onnx_ir::Error::InputWithoutShape("x".into()));
        let lead = "graph input `x`: the model gives it no shape, but `forward` needs its rank: declare one with ";
        let declarations = [
            (FrontDoor::Macro, "input_shapes = [\"x=[d0, d1, ...]\"]"),
            (FrontDoor::Cli, "--input-shape 'x=[d0, d1, ...]'"),
            (FrontDoor::ModelGen, ".input_shape(\"x=[d0, d1, ...]\")"),
        ];
        for (door, declaration) in declarations {
            let message = error.report(door);
            assert!(message.starts_with(&format!("{lead}{declaration}")), "{message}");
        }
    }

    #[test]
    fn other_errors_read_the_same_at_every_door() {
        let error = CodegenError::Name("my-model".into());
        for door in [FrontDoor::Macro, FrontDoor::Cli, FrontDoor::ModelGen] {
            assert_eq!(error.report(door), error.to_string());
        }
    }
}
