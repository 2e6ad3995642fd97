//! Whole-file generation shared by the `onnx2burn` CLI, `ModelGen` (build scripts) and the
//! macro's `dump` option: formatted Rust source with an `@generated` header, the Burnpack
//! weights, and text dumps of the IR before and after simplification.

use crate::error::{CodegenError, Result};
use crate::model::{default_impl, BpkPath, Lowered, StructSpec, WeightsSource};
use crate::names::type_stem;
use crate::weights::Pack;
use onnx_ir::{DimSize, ImportOptions, InputShape};
use proc_macro2::{Ident, TokenStream};
use quote::quote;
use std::path::Path;

/// How a generated model gets its weights; identical across the three front doors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadStrategy {
    /// `Default` reads the `.bpk` written next to the code (the CLI's and ModelGen's default).
    #[default]
    File,
    /// The `.bpk` is embedded in the binary; `Default` and `from_embedded` use it.
    Embedded,
    /// Only `from_bytes` / `from_file`; `Default` builds the structure without weights.
    Bytes,
    /// No weights written; `Default` builds the structure.
    None,
}

/// Where the generated code will find its `.bpk`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BpkLocation {
    /// Beside the generated `.rs` (CLI): embedded with a path relative to the source file,
    /// read with `out_dir/<name>.bpk` relative to the working directory.
    Beside,
    /// In this folder under the build script's `OUT_DIR` (ModelGen).
    OutDir(std::path::PathBuf),
}

/// How to generate a model outside the macro (CLI, ModelGen): names, weights, passes, hooks.
pub struct GenerateOptions<'a> {
    /// Struct name (a Rust type name); files are named after its snake_case form (`MyModel`: `my_model.rs`).
    pub name: &'a str,
    /// How the generated model gets its weights (embedded, a file, none).
    pub strategy: LoadStrategy,
    /// Run onnx-ir's simplification passes before generating code.
    pub simplify: bool,
    /// Split large graphs into submodules (see [`crate::partition`]).
    pub partition: bool,
    /// Where the `.bpk` file goes and how the generated code finds it.
    pub location: BpkLocation,
    /// The folder the files go to, as the user named it (used by `File` from the CLI).
    pub out_dir: &'a Path,
    /// User hooks (the macro's `custom_ops`); empty for the CLI and ModelGen.
    pub hooks: &'a [crate::emitter::Hook],
    /// The model file's folder, where its external data is (see
    /// [`onnx_ir::ImportOptions::external_data_dir`]).
    pub external_data_dir: Option<&'a Path>,
    /// Also render the IR as text, as imported and as simplified ([`GeneratedModel::ir`]), for
    /// the development dumps (text of the whole graph, twice: not wanted otherwise).
    pub ir_dumps: bool,
    /// Shapes declared for graph inputs (see [`onnx_ir::InputShape`]).
    pub input_shapes: &'a [InputShape],
    /// Sizes declared for dims the model names (see [`onnx_ir::DimSize`]).
    pub dim_sizes: &'a [DimSize],
}

impl<'a> GenerateOptions<'a> {
    /// The options of `onnx2burn model.onnx <out_dir> --name <name>`: weights in a `.bpk` beside
    /// the code, read by `Default`; simplified; split into parts; no hooks, dumps or declared
    /// input shapes. Set the other fields with struct update syntax.
    pub fn new(name: &'a str, out_dir: &'a Path) -> Self {
        Self {
            name,
            strategy: LoadStrategy::File,
            simplify: true,
            partition: true,
            location: BpkLocation::Beside,
            out_dir,
            hooks: &[],
            external_data_dir: None,
            ir_dumps: false,
            input_shapes: &[],
            dim_sizes: &[],
        }
    }
}

/// What [`generate`] produces: the formatted code, the weights to write and statistics.
pub struct GeneratedModel<'a> {
    /// File stem (`digits` for `Digits`).
    pub stem: String,
    /// The generated Rust source, formatted with prettyplease.
    pub code: String,
    /// The weights to write as a `.bpk` file (`None` when the model has none).
    pub bpk: Option<Pack<'a>>,
    /// The IR as text, when [`GenerateOptions::ir_dumps`] asked for it.
    pub ir: Option<IrDumps>,
    /// Top-level nodes of the graph the code was generated from (after simplification).
    pub nodes: usize,
}

/// The IR as imported, and after simplification (equal when `simplify` is off).
pub struct IrDumps {
    /// The IR as onnx-ir imported it.
    pub imported: String,
    /// The IR after simplification.
    pub simplified: String,
}

pub use crate::names::type_name;

/// The `use` lines generated code relies on. `Vec` and `vec!` come from `alloc` (the same
/// items std's prelude has) so that the code also compiles in `#![no_std]` crates.
pub fn prelude() -> TokenStream {
    quote! {
        #[allow(unused_imports)]
        use burn_onnx::burn;
        #[allow(unused_imports)]
        use burn_onnx::burn::tensor::{Bool, Device, Int, Tensor};
        #[allow(unused_imports)]
        use burn_onnx::__private::alloc::{vec, vec::Vec};
    }
}

/// Formats generated tokens as a readable source file (falls back to the raw tokens if they
/// do not parse, so a bug shows up as a compile error in the dumped file, not a panic here).
pub fn format_file(tokens: TokenStream) -> String {
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => tokens.to_string(),
    }
}

/// Generates a model's Rust code (formatted) and its weights from ONNX `bytes`: the library
/// entry point shared by the CLI and ModelGen.
pub fn generate(bytes: &[u8], opts: &GenerateOptions) -> Result<GeneratedModel<'static>> {
    // Checked first: the name becomes the struct's identifier, and `Ident::new` panics on `my-model`.
    let name: Ident = syn::parse_str(opts.name).map_err(|_| CodegenError::Name(opts.name.to_string()))?;
    let custom: Vec<(String, String)> = opts.hooks.iter().map(|h| (h.domain.clone(), h.op_type.clone())).collect();
    let options = ImportOptions {
        simplify: opts.simplify,
        external_data_dir: opts.external_data_dir.map(Path::to_path_buf),
        input_shapes: opts.input_shapes.to_vec(),
        dim_sizes: opts.dim_sizes.to_vec(),
    };
    let (graph, ir) = import_graph(bytes, options, &custom, opts.ir_dumps)?;
    let mut lowered =
        crate::model::lower_with(&graph, opts.hooks, opts.partition.then_some(crate::partition::PART_NODES))?;
    // The lowered model has its own copy of every weight: the graph's is freed before the rest.
    let nodes = graph.nodes.len();
    drop(graph);
    let stem = type_stem(opts.name);
    let source = weights_source(opts.strategy, &opts.location, opts.out_dir, &stem);
    let code = source_file(&lowered, &name, &source);
    // Moved, not copied: the weights are most of the memory an expansion takes.
    let bpk = match opts.strategy {
        LoadStrategy::None => None,
        _ if !lowered.has_weights() => None,
        _ => Some(Pack::new(std::mem::take(&mut lowered.weights))),
    };
    Ok(GeneratedModel { stem, code, bpk, ir, nodes })
}

/// Imports the model once; with `dumps`, also its IR as text as imported and as simplified (the
/// first rendered before the passes run, rather than by importing the model again).
pub(crate) fn import_graph(
    bytes: &[u8],
    options: ImportOptions,
    custom: &[(String, String)],
    dumps: bool,
) -> Result<(onnx_ir::Graph, Option<IrDumps>)> {
    let simplify = options.simplify;
    let mut graph = onnx_ir::import_with_custom_ops(bytes, ImportOptions { simplify: false, ..options }, custom)?;
    let imported = dumps.then(|| graph.to_string());
    if simplify {
        onnx_ir::passes::simplify(&mut graph);
    }
    let ir = imported.map(|imported| {
        let simplified = if simplify { graph.to_string() } else { imported.clone() };
        IrDumps { imported, simplified }
    });
    Ok((graph, ir))
}

/// Where the code of `<stem>.rs` finds its weights under `strategy`, its `.bpk` at `location`.
pub(crate) fn weights_source(
    strategy: LoadStrategy,
    location: &BpkLocation,
    out_dir: &Path,
    stem: &str,
) -> WeightsSource {
    let file = format!("{stem}.bpk");
    let bpk_path = match location {
        BpkLocation::OutDir(sub) => BpkPath::OutDir(sub.join(&file).display().to_string()),
        BpkLocation::Beside if strategy == LoadStrategy::Embedded => BpkPath::Literal(file),
        BpkLocation::Beside => BpkPath::Literal(out_dir.join(&file).display().to_string()),
    };
    match strategy {
        LoadStrategy::File => WeightsSource::File(bpk_path),
        LoadStrategy::Embedded => WeightsSource::Embedded(bpk_path),
        LoadStrategy::Bytes => WeightsSource::Bytes,
        LoadStrategy::None => WeightsSource::None,
    }
}

/// The formatted `<stem>.rs` of a lowered model: prelude, struct, impls, `Default`.
pub(crate) fn source_file(lowered: &Lowered, name: &Ident, source: &WeightsSource) -> String {
    let spec = StructSpec { name, vis: quote! { pub }, attrs: quote! {} };
    let items = lowered.items(&spec, source);
    let default = default_impl(name, source, lowered.has_weights());
    let prelude = prelude();
    format!(
        "// @generated by onnx-codegen from an ONNX model; edits are lost when it is regenerated.\n\n{}",
        format_file(quote! { #prelude #items #default })
    )
}

/// Writes `<stem>.rs`, `<stem>.bpk` (when there are weights) and, when the model has them, the
/// IR dumps `<stem>.ir.txt` and `<stem>.simplified.ir.txt` into `dir`; returns the files written.
pub fn write_files(model: &GeneratedModel, dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut files = vec![(format!("{}.rs", model.stem), model.code.as_bytes())];
    if let Some(ir) = &model.ir {
        files.push((format!("{}.ir.txt", model.stem), ir.imported.as_bytes()));
        files.push((format!("{}.simplified.ir.txt", model.stem), ir.simplified.as_bytes()));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| CodegenError::Write { path: dir.display().to_string(), message: e.to_string() })?;
    let mut written = vec![];
    for (name, bytes) in files {
        let path = dir.join(name);
        write_if_changed(&path, bytes)?;
        written.push(path);
    }
    if let Some(pack) = &model.bpk {
        let path = dir.join(format!("{}.bpk", model.stem));
        write_pack(pack, &path)?;
        written.insert(1, path);
    }
    Ok(written)
}

/// Writes `pack` at `path`. A pack read from side files (GBs) is streamed to the file; any other
/// is written only when its bytes changed, so that an unchanged model leaves the file, and what
/// embeds it, untouched.
pub fn write_pack(pack: &Pack, path: &Path) -> Result<()> {
    if pack.reads_side_files() {
        pack.write(path)
    } else {
        write_if_changed(path, &pack.to_bytes()?)
    }
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::read(path).ok().as_deref() == Some(bytes) {
        return Ok(());
    }
    write_atomic(path, bytes)
}

/// Atomic write (temporary file, then rename) so a concurrent reader never sees half a file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let fail = |e: std::io::Error| CodegenError::Write { path: path.display().to_string(), message: e.to_string() };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}
