//! What the `#[onnx_model]` attribute does, as a library call: read the model, import it,
//! lower it, write the weights where the option says, and return the items to splice in.

use crate::error::{CodegenError, Result};
use crate::generate::{
    import_graph, prelude, source_file, weights_source, write_atomic as write, write_files, write_pack, BpkLocation,
    GeneratedModel, LoadStrategy,
};
use crate::model::{default_impl, BpkPath, StructSpec, WeightsSource};
use crate::names::type_stem;
use crate::partition::PART_NODES;
use crate::weights::Pack;
use onnx_ir::{DimSize, ImportOptions, InputShape};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use std::path::{Path, PathBuf};

/// Where a macro-generated model's weights live (the macro's `weights = "..."`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightsMode {
    /// Embedded in the binary (`include_bytes_aligned!`), loaded zero-copy by `Default`.
    Embed,
    /// In a `.bpk` file written at build time, read at run time with `from_file`.
    File,
    /// No weights: the struct is built uninitialised, for loading them by other means.
    None,
}

/// One `#[onnx_model(...)]` invocation.
pub struct Request {
    /// `CARGO_MANIFEST_DIR` of the crate being compiled.
    pub manifest_dir: PathBuf,
    /// The model path as written, relative to `manifest_dir`.
    pub model: String,
    /// `None`: embedded, unless the model has external data (see [`default_weights`]).
    pub weights: Option<WeightsMode>,
    /// Run onnx-ir's simplification passes (constant folding, fusions) before generating code.
    pub simplify: bool,
    /// Split large graphs into submodules (see [`crate::partition`]).
    pub partition: bool,
    /// Folder (relative to `manifest_dir`) for the generated `.rs`, `.bpk` and IR dump.
    pub dump: Option<String>,
    /// The struct's name, as the user wrote it.
    pub name: Ident,
    /// The struct's visibility, copied to the generated struct.
    pub vis: TokenStream,
    /// The struct's other attributes and doc comments, copied to the generated struct.
    pub attrs: TokenStream,
    /// Shapes declared for graph inputs (`input_shapes = [...]`).
    pub input_shapes: Vec<InputShape>,
    /// Sizes declared for dims the model names (`dims = [...]`).
    pub dim_sizes: Vec<DimSize>,
    /// User hooks (`custom_ops = [...]`).
    pub hooks: Vec<crate::emitter::Hook>,
}

/// Generates the model's code for one macro invocation: the struct, its `new`/`forward`/loaders, and
/// the weights embedded or written beside the build, or an error naming the node at fault.
pub fn expand(req: &Request) -> Result<TokenStream> {
    let model_path = req.manifest_dir.join(&req.model);
    // An unchanged model and request (cargo check, rust-analyzer) reuses the previous
    // expansion, found by content. Requests with hooks (whose spans point into the user's code)
    // or a dump (a side effect) always run the pipeline.
    let cacheable = req.hooks.is_empty() && req.dump.is_none();
    let dir = artifact_dir(&req.manifest_dir);
    let options = request_options(req);
    // Taken before reading: a file changed meanwhile gets a newer stamp next time.
    let stamp = file_stamp(&model_path).unwrap_or_default();
    let entry_path = dir.join(format!("{}.entry", content_hash(&[options.as_bytes()])));
    let previous = Entry::read(&entry_path);
    if cacheable {
        let unchanged = previous.as_ref().filter(|e| !stamp.is_empty() && e.stamp == stamp);
        if let Some(tokens) = unchanged.and_then(|e| cached_expansion(&dir, &e.key)).and_then(|t| t.parse().ok()) {
            return Ok(tokens);
        }
    }
    let bytes = std::fs::read(&model_path)
        .map_err(|e| CodegenError::Read { path: model_path.display().to_string(), message: e.to_string() })?;
    let key = content_hash(&[&bytes, options.as_bytes()]);
    let cached = if cacheable { cached_expansion(&dir, &key) } else { None };
    let (tokens, text) = match cached.and_then(|text| Some((text.parse().ok()?, text))) {
        Some(hit) => hit,
        None => {
            let (tokens, side_files) = run_pipeline(req, &bytes, &model_path, &key)?;
            let text = tokens.to_string();
            // A cache that cannot be written only costs the next expansion its speed.
            if let Some(sides) = side_stamps(&side_files).filter(|_| cacheable) {
                let _ = write(&dir.join(expansion_file(&key)), format!("{sides}\n{text}").as_bytes());
            }
            (tokens, text)
        }
    };
    let mut files: Vec<String> = bpk_paths(&text).iter().filter_map(|p| file_in(&dir, Path::new(p))).collect();
    if cacheable {
        files.push(expansion_file(&key));
    }
    Entry { stamp, key, files }.replace(&entry_path, &dir, previous);
    Ok(tokens)
}

/// One request's record in the cache folder (`<hash of the request>.entry`): the model file's
/// stamp, the content key and the files written for that key. The next expansion under another
/// key (the model or the generator changed) removes them, so the folder holds only the current
/// expansion of each request rather than one more per model edit.
#[derive(Debug, PartialEq)]
struct Entry {
    stamp: String,
    key: String,
    /// File names inside the cache folder.
    files: Vec<String>,
}

impl Entry {
    fn read(path: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut lines = text.lines().map(str::to_string);
        Some(Self { stamp: lines.next()?, key: lines.next()?, files: lines.collect() })
    }

    /// Saves this entry, then removes the files of `previous` that it no longer names. The
    /// cache only costs speed: failures are ignored.
    fn replace(self, path: &Path, dir: &Path, previous: Option<Entry>) {
        if previous.as_ref() == Some(&self) {
            return;
        }
        let text = [&self.stamp, &self.key].into_iter().chain(&self.files).fold(String::new(), |t, l| t + l + "\n");
        if write(path, text.as_bytes()).is_err() {
            return;
        }
        for stale in previous.into_iter().flat_map(|p| p.files).filter(|f| !self.files.contains(f)) {
            let _ = std::fs::remove_file(dir.join(stale));
        }
    }
}

fn expansion_file(key: &str) -> String {
    format!("{key}.expansion.rs")
}

/// The name of `path` when it lies directly in `dir`.
fn file_in(dir: &Path, path: &Path) -> Option<String> {
    (path.parent()? == dir).then(|| path.file_name()?.to_str().map(str::to_string)).flatten()
}

/// The model file's size and modification time. When they equal the stamp saved with the
/// previous expansion of the same request, the file need not be read and hashed again
/// (hundreds of MB for big models; the same trust cargo puts in mtimes).
fn file_stamp(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(format!("{} {}", meta.len(), modified.as_nanos()))
}

/// The text of a previous expansion under `key`, if it exists, the side files it read are
/// unchanged and the weights it names are still there.
fn cached_expansion(dir: &Path, key: &str) -> Option<String> {
    let file = std::fs::read_to_string(dir.join(expansion_file(key))).ok()?;
    let (sides, text) = file.split_once('\n')?;
    let unchanged = sides.is_empty()
        || sides.split('\t').all(|side| {
            side.rsplit_once('=').is_some_and(|(path, stamp)| file_stamp(Path::new(path)).as_deref() == Some(stamp))
        });
    (unchanged && bpk_paths(text).iter().all(|p| Path::new(p).is_file())).then(|| text.to_string())
}

/// `path=stamp` of each side file (see [`file_stamp`]), tab-separated: the first line of a
/// cached expansion. The key is the model's content, which names the side files but not
/// theirs; hashing GBs of side data on every expansion would cost what the cache saves, so a
/// side file counts as unchanged while its size and modification time are (the trust the model
/// file's stamp already gets). `None` (do not cache) for a path this line cannot hold.
fn side_stamps(files: &[PathBuf]) -> Option<String> {
    let stamps = files.iter().map(|file| {
        let path = file.to_str().filter(|p| !p.contains(['\t', '\n']))?;
        Some(format!("{path}={}", file_stamp(file)?))
    });
    Some(stamps.collect::<Option<Vec<_>>>()?.join("\t"))
}

/// The `.bpk` paths an expansion names (string literals ending in `.bpk`).
fn bpk_paths(text: &str) -> Vec<String> {
    text.match_indices(".bpk\"")
        .map(|(end, _)| {
            let start = text[..end].rfind('"').map_or(0, |q| q + 1);
            format!("{}.bpk", &text[start..end])
        })
        .collect()
}

/// Everything of a request besides the model bytes that changes its expansion, and this
/// generator's version and source fingerprint.
fn request_options(req: &Request) -> String {
    format!(
        "{}|{}|{:?}|{}|{}|{}|{}|{}|{}|{}|{:?}|{:?}",
        env!("CARGO_PKG_VERSION"),
        env!("BURN_ONNX_GENERATOR_FINGERPRINT"),
        req.weights,
        req.simplify,
        req.partition,
        req.name,
        req.vis,
        req.attrs,
        req.model,
        req.manifest_dir.display(),
        req.input_shapes,
        req.dim_sizes
    )
}

/// The weights mode of a request that names none: embedded, unless the model has external
/// data. Such a model is usually large (external data exists for models over protobuf's 2 GB),
/// and embedding GBs makes rustc hold them in memory and the binary carry them.
fn default_weights(graph: &onnx_ir::Graph) -> WeightsMode {
    if graph.side_files.is_empty() {
        WeightsMode::Embed
    } else {
        WeightsMode::File
    }
}

/// Runs import and code generation; `key` names the weights file of this request and content.
/// Returns the items and the side files the model's data was read from.
fn run_pipeline(req: &Request, bytes: &[u8], model_path: &Path, key: &str) -> Result<(TokenStream, Vec<PathBuf>)> {
    let custom: Vec<(String, String)> = req.hooks.iter().map(|h| (h.domain.clone(), h.op_type.clone())).collect();
    let data_dir = onnx_ir::external::model_folder(model_path);
    let options = ImportOptions {
        simplify: req.simplify,
        external_data_dir: Some(data_dir.clone()),
        input_shapes: req.input_shapes.clone(),
        dim_sizes: req.dim_sizes.clone(),
    };
    let (graph, ir) = import_graph(bytes, options, &custom, req.dump.is_some())?;
    let weights = req.weights.unwrap_or_else(|| default_weights(&graph));
    let lowered = crate::model::lower_with(&graph, &req.hooks, req.partition.then_some(PART_NODES))?;
    let stem = type_stem(&req.name.to_string());
    let packed = match weights {
        WeightsMode::None => None,
        _ if !lowered.has_weights() => None,
        _ => Some(Pack::new(&lowered.weights[..])),
    };
    let source = match (&packed, weights) {
        (Some(bpk), WeightsMode::Embed) => {
            WeightsSource::Embedded(BpkPath::Literal(store_artifact(&req.manifest_dir, &format!("{stem}-{key}"), bpk)?))
        }
        (Some(bpk), WeightsMode::File) => {
            WeightsSource::File(BpkPath::Literal(store_artifact(&req.manifest_dir, &format!("{stem}-{key}"), bpk)?))
        }
        _ => WeightsSource::None,
    };
    let spec = StructSpec { name: &req.name, vis: quote! { pub }, attrs: req.attrs.clone() };
    let items = lowered.items(&spec, &source);
    let default = default_impl(&req.name, &source, lowered.has_weights());
    let prelude = prelude();
    if let Some(folder) = &req.dump {
        // The files the CLI writes for these options, from this import and lowering.
        let dir = req.manifest_dir.join(folder);
        let strategy = match weights {
            WeightsMode::Embed => LoadStrategy::Embedded,
            WeightsMode::File => LoadStrategy::File,
            WeightsMode::None => LoadStrategy::None,
        };
        let source = weights_source(strategy, &BpkLocation::Beside, &dir, &stem);
        let code = source_file(&lowered, &req.name, &source);
        let model = GeneratedModel { stem: stem.clone(), code, bpk: packed, ir, nodes: graph.nodes.len() };
        let dumped = write_files(&model, &dir);
        dumped.map_err(|e| CodegenError::Dump { dir: folder.clone(), source: Box::new(e) })?;
    }
    let module = format_ident!("__burn_onnx_{}", stem);
    let (name, vis) = (&req.name, &req.vis);
    let model_path = model_path.display().to_string();
    let items = quote! {
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
    };
    Ok((items, graph.side_files))
}

/// Writes `pack` as `<name>.bpk` under the build's target folder; returns the absolute path.
/// The name carries the request's content key, so concurrent and repeated expansions agree and
/// each request owns its file (see [`Entry`]).
fn store_artifact(manifest_dir: &Path, name: &str, pack: &Pack) -> Result<String> {
    let dir = artifact_dir(manifest_dir);
    let path = dir.join(format!("{name}.bpk"));
    std::fs::create_dir_all(&dir)
        .map_err(|e| CodegenError::Write { path: dir.display().to_string(), message: e.to_string() })?;
    write_pack(pack, &path)?;
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

/// The 64-bit xxh3 hash of `parts`, in hex: the same on every platform, and fast enough to hash
/// a model of hundreds of MB on every expansion whose stamp changed.
fn content_hash(parts: &[&[u8]]) -> String {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for part in parts {
        hasher.update(part);
        // The length separates parts, so ("ab", "c") and ("a", "bc") differ.
        hasher.update(&(part.len() as u64).to_le_bytes());
    }
    format!("{:016x}", hasher.digest())
}
