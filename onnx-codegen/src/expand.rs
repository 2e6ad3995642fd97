//! What the `#[onnx_model]` attribute does, as a library call: read the model, import it,
//! lower it, write the weights where the option says, and return the items to splice in.

use crate::error::{CodegenError, Result};
use crate::model::{default_impl, BpkPath, StructSpec, WeightsSource};
use crate::names::snake_case;
use crate::generate::{generate, write_files, BpkLocation, GenerateOptions, LoadStrategy};
use crate::{prelude, weights};
use onnx_ir::ImportOptions;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightsMode {
    Embed,
    File,
    None,
}

/// One `#[onnx_model(...)]` invocation.
pub struct Request {
    /// `CARGO_MANIFEST_DIR` of the crate being compiled.
    pub manifest_dir: PathBuf,
    /// The model path as written, relative to `manifest_dir`.
    pub model: String,
    pub weights: WeightsMode,
    pub simplify: bool,
    /// Folder (relative to `manifest_dir`) for the generated `.rs`, `.bpk` and IR dump.
    pub dump: Option<String>,
    pub name: Ident,
    pub vis: TokenStream,
    pub attrs: TokenStream,
    /// User hooks (`custom_ops = [...]`).
    pub hooks: Vec<crate::Hook>,
}

pub fn expand(req: &Request) -> Result<TokenStream> {
    let model_path = req.manifest_dir.join(&req.model);
    let bytes = std::fs::read(&model_path).map_err(|e| CodegenError::Read { path: model_path.display().to_string(), message: e.to_string() })?;
    // An unchanged model and request (cargo check, rust-analyzer) reuses the previous
    // expansion. Requests with hooks (whose spans point into the user's code) or a dump (a side
    // effect) always run the pipeline.
    let cacheable = req.hooks.is_empty() && req.dump.is_none();
    let cache = artifact_dir(&req.manifest_dir).join(format!("{:016x}.expansion.rs", cache_key(req, &bytes)));
    if cacheable {
        let cached = std::fs::read_to_string(&cache).ok().filter(|text| weights_present(text));
        if let Some(tokens) = cached.and_then(|text| text.parse::<TokenStream>().ok()) {
            return Ok(tokens);
        }
    }
    let tokens = run_pipeline(req, &bytes, &model_path)?;
    if cacheable {
        // A cache that cannot be written only costs the next expansion its speed.
        let _ = write(&cache, tokens.to_string().as_bytes());
    }
    Ok(tokens)
}

/// Whether every `.bpk` file a cached expansion names still exists.
fn weights_present(text: &str) -> bool {
    text.match_indices(".bpk\"").all(|(end, _)| {
        let start = text[..end].rfind('"').map_or(0, |q| q + 1);
        Path::new(&format!("{}.bpk", &text[start..end])).is_file()
    })
}

/// What an expansion depends on: the model bytes, every option, and this generator's version.
fn cache_key(req: &Request, bytes: &[u8]) -> u64 {
    let options = format!(
        "{}|{:?}|{}|{}|{}|{}|{}|{}",
        env!("CARGO_PKG_VERSION"),
        req.weights,
        req.simplify,
        req.name,
        req.vis,
        req.attrs,
        req.model,
        req.manifest_dir.display()
    );
    fnv1a(&[bytes, options.as_bytes()].concat())
}

fn run_pipeline(req: &Request, bytes: &[u8], model_path: &Path) -> Result<TokenStream> {
    let bytes = bytes.to_vec();
    let custom: Vec<(String, String)> = req.hooks.iter().map(|h| (h.domain.clone(), h.op_type.clone())).collect();
    let graph = onnx_ir::import_with_custom_ops(&bytes, ImportOptions { simplify: req.simplify }, &custom)?;
    let lowered = crate::model::lower_with_hooks(&graph, &req.hooks)?;
    let stem = snake_case(&req.name.to_string());
    let packed = match req.weights {
        WeightsMode::None => None,
        _ if !lowered.has_weights() => None,
        _ => Some(weights::pack(&lowered.weights)?),
    };
    let source = match (&packed, req.weights) {
        (Some(bpk), WeightsMode::Embed) => WeightsSource::Embedded(BpkPath::Literal(store_artifact(&req.manifest_dir, &stem, bpk)?)),
        (Some(bpk), WeightsMode::File) => WeightsSource::File(BpkPath::Literal(store_artifact(&req.manifest_dir, &stem, bpk)?)),
        _ => WeightsSource::None,
    };
    let spec = StructSpec { name: &req.name, vis: quote! { pub }, attrs: req.attrs.clone() };
    let items = lowered.items(&spec, &source);
    let default = default_impl(&req.name, &source, lowered.has_weights());
    let prelude = prelude();
    if let Some(dir) = &req.dump {
        // The same files the CLI writes for these options.
        let dir = req.manifest_dir.join(dir);
        let strategy = match req.weights {
            WeightsMode::Embed => LoadStrategy::Embedded,
            WeightsMode::File => LoadStrategy::File,
            WeightsMode::None => LoadStrategy::None,
        };
        let name = req.name.to_string();
        let opts = GenerateOptions { name: &name, strategy, simplify: req.simplify, location: BpkLocation::Beside, out_dir: &dir, hooks: &req.hooks };
        write_files(&generate(&bytes, &opts)?, &dir, true)?;
    }
    let module = format_ident!("__burn_onnx_{}", stem);
    let (name, vis) = (&req.name, &req.vis);
    let model_path = model_path.display().to_string();
    Ok(quote! {
        #[doc(hidden)]
        mod #module {
            // Hooks named in the attribute resolve as they would beside the struct.
            #[allow(unused_imports)]
            use super::*;
            #prelude
            // Rebuild when the model changes.
            const _: &[u8] = include_bytes!(#model_path);
            #items
            #default
        }
        #vis use #module::#name;
    })
}

/// Writes `bytes` under the build's target folder, named by content so that concurrent and
/// repeated expansions agree; returns the absolute path.
fn store_artifact(manifest_dir: &Path, stem: &str, bytes: &[u8]) -> Result<String> {
    let dir = artifact_dir(manifest_dir);
    let path = dir.join(format!("{stem}-{:016x}.bpk", fnv1a(bytes)));
    if std::fs::read(&path).ok().as_deref() != Some(bytes) {
        write(&path, bytes)?;
    }
    Ok(path.display().to_string())
}

/// `$CARGO_TARGET_DIR/burn-onnx`, else `target/burn-onnx` beside the outermost `Cargo.lock`.
fn artifact_dir(manifest_dir: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return manifest_dir.join(dir).join("burn-onnx");
    }
    let root = manifest_dir.ancestors().filter(|d| d.join("Cargo.lock").is_file()).last().unwrap_or(manifest_dir);
    root.join("target").join("burn-onnx")
}

/// Atomic write (temporary file, then rename) so a concurrent reader never sees half a file.
fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let fail = |e: std::io::Error| CodegenError::Write { path: path.display().to_string(), message: e.to_string() };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}
