use thiserror::Error;

/// Failures of the whole import: reading, IR building, code generation, weight packing.
#[derive(Debug, Error)]
pub enum CodegenError {
    /// A model file (or its external data) could not be read.
    #[error("cannot read `{path}`: {message}")]
    Read {
        /// The file, as the user named it.
        path: String,
        /// The operating system's reason.
        message: String,
    },
    /// The ONNX model did not import into the IR (onnx-ir's error, with its node and reason).
    #[error(transparent)]
    Ir(#[from] onnx_ir::Error),
    /// A node the code generator cannot lower as configured.
    #[error("node `{node}` ({op}): {message}")]
    Node {
        /// The node's name in the graph.
        node: String,
        /// Its ONNX op type.
        op: String,
        /// What is wrong with it.
        message: String,
    },
    /// Ops the importer lacks, listed with what the user can do (hooks, where the macro is used).
    #[error("{0}")]
    Unsupported(String),
    /// A struct name that is not a Rust type name.
    #[error("`{0}` is not a Rust type name (letters, digits and `_`, not starting with a digit, not a keyword)")]
    Name(String),
    /// A declared input shape or dim size that does not parse (see [`onnx_ir::InputShape`],
    /// [`onnx_ir::DimSize`]).
    #[error("{0}")]
    InputShape(String),
    /// The Burnpack file could not be assembled.
    #[error("cannot write weights: {0}")]
    Weights(String),
    /// A generated file could not be written.
    #[error("cannot write `{path}`: {message}")]
    Write {
        /// The file.
        path: String,
        /// The operating system's reason.
        message: String,
    },
    /// Writing the files of the macro's `dump` option failed.
    #[error("dump folder `{dir}`: {source}")]
    Dump {
        /// The dump folder, as the user named it.
        dir: String,
        /// What failed there.
        source: Box<CodegenError>,
    },
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

/// The code generator's result: its error is a [`CodegenError`].
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
