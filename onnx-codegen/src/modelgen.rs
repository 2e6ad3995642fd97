//! `ModelGen`: the build-script front door.
//!
//! ```ignore
//! // build.rs
//! onnx_codegen::ModelGen::new().input("model/digits.onnx").out_dir("model/").run_from_script();
//! // src/lib.rs
//! include!(concat!(env!("OUT_DIR"), "/model/digits.rs"));
//! ```

use crate::error::{CodegenError, FrontDoor, Result};
use crate::generate::{generate, write_files, BpkLocation, GenerateOptions, LoadStrategy};
use crate::names::type_name;
use onnx_ir::{DimSize, InputShape};
use std::path::{Path, PathBuf};

/// One model to generate, with the input shapes declared for it.
#[derive(Debug, Clone)]
struct ModelInput {
    path: PathBuf,
    /// As written (`x=[N, 3]`), parsed when the model is generated.
    shapes: Vec<String>,
    /// As written (`N=1`), parsed when the model is generated.
    dim_sizes: Vec<String>,
}

/// Generates models from build scripts (`run_from_script`, into `OUT_DIR`) and the CLI
/// (`run_from_cli`): one builder, the model files added with `input`.
#[derive(Debug, Clone, Default)]
pub struct ModelGen {
    inputs: Vec<ModelInput>,
    out_dir: PathBuf,
    strategy: LoadStrategy,
    development: bool,
    no_simplify: bool,
}

impl ModelGen {
    /// A builder with no models, weights embedded, simplification on.
    pub fn new() -> Self {
        Self::default()
    }

    /// An ONNX file to generate code for (relative paths to the working directory, which is the
    /// crate root in a build script).
    pub fn input(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.inputs.push(ModelInput { path: path.as_ref().to_path_buf(), shapes: vec![], dim_sizes: vec![] });
        self
    }

    /// Declares the shape of a graph input that the model of the last [`Self::input`] leaves
    /// open, as `name=[d0, d1, ...]` (each dim a size, a name or `?`; see
    /// [`onnx_ir::InputShape`]): a model may give an input no shape, but `forward` needs its rank.
    pub fn input_shape(&mut self, spec: &str) -> &mut Self {
        if let Some(last) = self.inputs.last_mut() {
            last.shapes.push(spec.to_string());
        }
        self
    }

    /// Fixes a dim that the model of the last [`Self::input`] names (or denotes) to a size
    /// wherever the model uses it, as `name=size` (see [`onnx_ir::DimSize`]); `forward` checks it.
    pub fn dim_size(&mut self, spec: &str) -> &mut Self {
        if let Some(last) = self.inputs.last_mut() {
            last.dim_sizes.push(spec.to_string());
        }
        self
    }

    /// Output folder: under `OUT_DIR` for `run_from_script`, as given for `run_from_cli`.
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = dir.as_ref().to_path_buf();
        self
    }

    /// How the generated models get their weights (embedded by default).
    pub fn load_strategy(&mut self, strategy: LoadStrategy) -> &mut Self {
        self.strategy = strategy;
        self
    }

    /// Also write the IR text dumps.
    pub fn development(&mut self, on: bool) -> &mut Self {
        self.development = on;
        self
    }

    /// Whether to run onnx-ir's simplification passes (on by default).
    pub fn simplify(&mut self, on: bool) -> &mut Self {
        self.no_simplify = !on;
        self
    }

    /// For build scripts: writes into `$OUT_DIR/<out_dir>`, tells cargo to rerun when a model
    /// changes, and panics with the error (a build script's way to fail).
    pub fn run_from_script(&self) {
        let out = std::env::var_os("OUT_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("ModelGen::run_from_script must run inside a build script (OUT_DIR is not set)"));
        if let Err(e) = self.run(&out.join(&self.out_dir), true) {
            panic!("burn-onnx ModelGen: {}", e.report(FrontDoor::ModelGen));
        }
    }

    /// Writes into `out_dir` as given (for tools); the files written.
    pub fn run_from_cli(&self) -> Result<Vec<PathBuf>> {
        self.run(&self.out_dir, false)
    }

    fn run(&self, dir: &Path, script: bool) -> Result<Vec<PathBuf>> {
        let mut written = vec![];
        for ModelInput { path: input, shapes, dim_sizes } in &self.inputs {
            let shapes = parse_all::<InputShape>(shapes)?;
            let dim_sizes = parse_all::<DimSize>(dim_sizes)?;
            if script {
                println!("cargo:rerun-if-changed={}", input.display());
            }
            let bytes = std::fs::read(input)
                .map_err(|e| CodegenError::Read { path: input.display().to_string(), message: e.to_string() })?;
            let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
            let name = type_name(&stem);
            // In a build script the files live in OUT_DIR, under `out_dir`.
            let location = if script { BpkLocation::OutDir(self.out_dir.clone()) } else { BpkLocation::Beside };
            let opts = GenerateOptions {
                strategy: self.strategy,
                simplify: !self.no_simplify,
                location,
                external_data_dir: Some(&onnx_ir::external::model_folder(input)),
                ir_dumps: self.development,
                input_shapes: &shapes,
                dim_sizes: &dim_sizes,
                ..GenerateOptions::new(&name, &self.out_dir)
            };
            let model = generate(&bytes, &opts)?;
            written.extend(write_files(&model, dir)?);
        }
        Ok(written)
    }
}

/// Declarations as written, parsed.
fn parse_all<T: std::str::FromStr<Err = String>>(specs: &[String]) -> Result<Vec<T>> {
    specs.iter().map(|s| s.parse()).collect::<std::result::Result<Vec<T>, _>>().map_err(CodegenError::InputShape)
}
