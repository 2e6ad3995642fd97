//! What the `#[onnx_model]` attribute does, as a library call: read the model, import it,
//! lower it, write the weights where the option says, and return the items to splice in.

use crate::error::{CodegenError, Result};
use crate::generate::{generate, write_files, BpkLocation, GenerateOptions, LoadStrategy};
use crate::model::{default_impl, BpkPath, StructSpec, WeightsSource};
use crate::names::snake_case;
use crate::partition::PART_NODES;
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
    /// Split large graphs into submodules (see [`crate::partition`]).
    pub partition: bool,
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
    // An unchanged model and request (cargo check, rust-analyzer) reuses the previous
    // expansion, found by content. Requests with hooks (whose spans point into the user's code)
    // or a dump (a side effect) always run the pipeline.
    let cacheable = req.hooks.is_empty() && req.dump.is_none();
    let dir = artifact_dir(&req.manifest_dir);
    let options = request_options(req);
    // Taken before reading: a file changed meanwhile gets a newer stamp next time.
    let stamp = file_stamp(&model_path);
    let stamp_path = dir.join(format!("{:016x}.stamp", content_hash(&[options.as_bytes()])));
    if cacheable {
        if let Some(tokens) = stamp
            .as_deref()
            .and_then(|stamp| stamped_key(&stamp_path, stamp))
            .and_then(|key| cached_expansion(&dir, &key))
        {
            return Ok(tokens);
        }
    }
    let bytes = std::fs::read(&model_path)
        .map_err(|e| CodegenError::Read { path: model_path.display().to_string(), message: e.to_string() })?;
    let key = format!("{:016x}", content_hash(&[&bytes, options.as_bytes()]));
    if cacheable {
        if let Some(tokens) = cached_expansion(&dir, &key) {
            return Ok(tokens);
        }
    }
    let tokens = run_pipeline(req, &bytes, &model_path)?;
    if cacheable {
        // A cache that cannot be written only costs the next expansion its speed.
        let _ = write(&dir.join(format!("{key}.expansion.rs")), tokens.to_string().as_bytes());
        if let Some(stamp) = stamp {
            let _ = write(&stamp_path, format!("{stamp}\n{key}").as_bytes());
        }
    }
    Ok(tokens)
}

/// The model file's size and modification time. When they equal the stamp saved with the
/// previous expansion of the same request, the file need not be read and hashed again
/// (hundreds of MB for big models; the same trust cargo puts in mtimes).
fn file_stamp(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(format!("{} {}", meta.len(), modified.as_nanos()))
}

/// The content key saved beside `stamp`, if the stamp file has that stamp.
fn stamped_key(stamp_path: &Path, stamp: &str) -> Option<String> {
    let saved = std::fs::read_to_string(stamp_path).ok()?;
    let (saved_stamp, key) = saved.split_once('\n')?;
    (saved_stamp == stamp).then(|| key.to_string())
}

/// A previous expansion under `key`, if it exists and the weights it names are still there.
fn cached_expansion(dir: &Path, key: &str) -> Option<TokenStream> {
    let text = std::fs::read_to_string(dir.join(format!("{key}.expansion.rs"))).ok()?;
    if !weights_present(&text) {
        return None;
    }
    text.parse().ok()
}

/// Whether every `.bpk` file a cached expansion names still exists.
fn weights_present(text: &str) -> bool {
    text.match_indices(".bpk\"").all(|(end, _)| {
        let start = text[..end].rfind('"').map_or(0, |q| q + 1);
        Path::new(&format!("{}.bpk", &text[start..end])).is_file()
    })
}

/// Everything of a request besides the model bytes that changes its expansion, and this
/// generator's version and source fingerprint.
fn request_options(req: &Request) -> String {
    format!(
        "{}|{}|{:?}|{}|{}|{}|{}|{}|{}|{}",
        env!("CARGO_PKG_VERSION"),
        env!("BURN_ONNX_GENERATOR_FINGERPRINT"),
        req.weights,
        req.simplify,
        req.partition,
        req.name,
        req.vis,
        req.attrs,
        req.model,
        req.manifest_dir.display()
    )
}

fn run_pipeline(req: &Request, bytes: &[u8], model_path: &Path) -> Result<TokenStream> {
    let custom: Vec<(String, String)> = req.hooks.iter().map(|h| (h.domain.clone(), h.op_type.clone())).collect();
    let graph = onnx_ir::import_with_custom_ops(bytes, ImportOptions { simplify: req.simplify }, &custom)?;
    let lowered = crate::model::lower_with(&graph, &req.hooks, req.partition.then_some(PART_NODES))?;
    let stem = snake_case(&req.name.to_string());
    let packed = match req.weights {
        WeightsMode::None => None,
        _ if !lowered.has_weights() => None,
        _ => Some(weights::pack(&lowered.weights)?),
    };
    let source = match (&packed, req.weights) {
        (Some(bpk), WeightsMode::Embed) => {
            WeightsSource::Embedded(BpkPath::Literal(store_artifact(&req.manifest_dir, &stem, bpk)?))
        }
        (Some(bpk), WeightsMode::File) => {
            WeightsSource::File(BpkPath::Literal(store_artifact(&req.manifest_dir, &stem, bpk)?))
        }
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
        let opts = GenerateOptions {
            name: &name,
            strategy,
            simplify: req.simplify,
            partition: req.partition,
            location: BpkLocation::Beside,
            out_dir: &dir,
            hooks: &req.hooks,
        };
        write_files(&generate(bytes, &opts)?, &dir, true)?;
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
    let path = dir.join(format!("{stem}-{:016x}.bpk", content_hash(&[bytes])));
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

/// A 64-bit content hash, the same on every platform. Models are hundreds of MB and the
/// cached path hashes the whole file on every expansion: four independent multiply-rotate
/// lanes over 32-byte blocks run several times faster than a byte-at-a-time hash.
fn content_hash(parts: &[&[u8]]) -> u64 {
    const K: [u64; 4] = [0x9e37_79b9_7f4a_7c15, 0xc2b2_ae3d_27d4_eb4f, 0x1656_67b1_9e37_79f9, 0x85eb_ca77_c2b2_ae63];
    let mut lanes = K;
    let mut mix = |lane: usize, word: u64| lanes[lane] = (lanes[lane] ^ word).wrapping_mul(K[lane]).rotate_left(29);
    for part in parts {
        let blocks = part.chunks_exact(32);
        let tail = blocks.remainder();
        for block in blocks {
            for (lane, word) in block.chunks_exact(8).enumerate() {
                mix(lane, u64::from_le_bytes([word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7]]));
            }
        }
        for (i, &byte) in tail.iter().enumerate() {
            mix(i % 4, u64::from(byte) | ((i as u64) << 8));
        }
        // The length separates parts, so ("ab", "c") and ("a", "bc") differ.
        mix(0, part.len() as u64);
    }
    lanes.iter().fold(0, |h, &lane| (h ^ lane).wrapping_mul(K[0]).rotate_left(31))
}
