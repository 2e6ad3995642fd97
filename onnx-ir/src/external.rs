//! ONNX external data: tensors whose bytes live in side files next to the model (`location`,
//! `offset`, `length`; `checksum` is not checked). The model comes from a file someone
//! downloaded, so a location is confined to the model's folder: absolute paths, `..` and
//! symlinks that lead out of it are refused, as are byte ranges past the end of the file.

use crate::proto::{GraphProto, SparseTensorProto, TensorProto};
use std::cell::Cell;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

/// A checked byte range of a side file: it existed inside the model's folder, held these bytes,
/// and their count is the tensor's size, when the model was imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalBytes {
    /// The tensor's name, for messages.
    pub tensor: String,
    /// The side file, canonical (symlinks resolved).
    pub path: PathBuf,
    /// Where the tensor's bytes start in the side file (`offset` of `external_data`).
    pub offset: u64,
    /// How many bytes it has (`length` of `external_data`).
    pub length: u64,
}

impl ExternalBytes {
    /// Reads the whole range into memory (for small tensors, and where values are needed).
    pub fn read(&self) -> Result<Vec<u8>, String> {
        let len = usize::try_from(self.length).map_err(|_| format!("{} bytes do not fit in memory", self.length))?;
        let mut bytes = vec![0u8; len];
        self.read_into(0, &mut bytes)?;
        Ok(bytes)
    }

    /// Checks that the side file still holds the whole range. Import checked it, but the file
    /// can be truncated before the weights are written, and the file-backed bytes the weights
    /// writer streams panic on a short read instead of failing.
    pub fn check_still_there(&self) -> Result<(), String> {
        let size = std::fs::metadata(&self.path)
            .map_err(|e| format!("cannot read side file `{}`: {e}", self.path.display()))?
            .len();
        let end = self.offset.checked_add(self.length).ok_or_else(|| "offset overflows".to_string())?;
        if size < end {
            return Err(format!(
                "side file `{}` of tensor `{}` now has {size} bytes, fewer than the {end} its range needs \
                 (it changed after the import)",
                self.path.display(),
                self.tensor
            ));
        }
        Ok(())
    }

    /// Fills `buffer` from `start` bytes into the range (a chunk of a streamed read).
    pub fn read_into(&self, start: u64, buffer: &mut [u8]) -> Result<(), String> {
        let fail = |e: std::io::Error| format!("cannot read side file `{}`: {e}", self.path.display());
        let at = self.offset.checked_add(start).ok_or_else(|| "offset overflows".to_string())?;
        let mut file = File::open(&self.path).map_err(fail)?;
        file.seek(SeekFrom::Start(at)).map_err(fail)?;
        file.read_exact(buffer).map_err(fail)
    }
}

/// Most bytes of side data one build of the graph reads into memory. Tensors small enough to be
/// constants are read at import (at most `tensor::MAX_RESIDENT_EXTERNAL_ELEMENTS` elements), and a
/// model can name the same range of a small side file many times over. 256 MiB, as the other
/// bounds on what an import allocates (inlined functions, densified sparse tensors). Per build,
/// not per import: the If-typing search builds the graph again for each typing it tries.
pub const MAX_RESIDENT_BYTES: u64 = 1 << 28;

/// The model's folder, for its side files, and how many of their bytes have been read into
/// memory so far.
pub struct SideData<'a> {
    dir: Option<&'a Path>,
    resident: Cell<u64>,
}

impl<'a> SideData<'a> {
    /// `dir`: the model's folder (`None` when the model did not come from a file).
    pub fn new(dir: Option<&'a Path>) -> Self {
        Self { dir, resident: Cell::new(0) }
    }

    /// The folder side files are read from and confined to; `None` when there is none.
    pub fn dir(&self) -> Option<&'a Path> {
        self.dir
    }

    /// Reads `ext` into memory, within [`MAX_RESIDENT_BYTES`] for all reads together.
    pub fn read(&self, ext: &ExternalBytes) -> Result<Vec<u8>, String> {
        let total = self.resident.get().checked_add(ext.length).filter(|&t| t <= MAX_RESIDENT_BYTES);
        let total = total.ok_or_else(|| {
            format!(
                "its {} bytes would bring the side data read into memory at import past {MAX_RESIDENT_BYTES} \
                 bytes ({} already read)",
                ext.length,
                self.resident.get()
            )
        })?;
        let bytes = ext.read()?;
        self.resident.set(total);
        Ok(bytes)
    }
}

/// The folder of a model file, where its side files are: `.` for a bare file name.
pub fn model_folder(model: &Path) -> PathBuf {
    match model.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether `proto` says its data is in a side file (or carries side-file entries at all).
pub fn is_external(proto: &TensorProto) -> bool {
    proto.data_location() == crate::proto::tensor_proto::DataLocation::External || !proto.external_data.is_empty()
}

/// Resolves and checks the side file of an external tensor of `expected` bytes, confined to
/// `dir` (the model's folder; `None` when the model did not come from a file). The reason, if
/// it cannot be read.
pub fn locate(proto: &TensorProto, dir: Option<&Path>, expected: u64) -> Result<ExternalBytes, String> {
    if proto.data_location() != crate::proto::tensor_proto::DataLocation::External {
        return Err("has external_data entries but its data_location is not EXTERNAL".into());
    }
    if !proto.raw_data().is_empty() {
        return Err("holds both raw_data and external data".into());
    }
    let entries = Entries::parse(proto)?;
    let dir = dir.ok_or_else(|| {
        format!(
            "its data is in the side file `{}`, but no folder was given to read side files from \
             (import the model from its file)",
            entries.location
        )
    })?;
    let path = confine(dir, &entries.location)?;
    let size = std::fs::metadata(&path).map_err(|e| format!("cannot read side file `{}`: {e}", path.display()))?.len();
    let past_end = || format!("side file `{}` has {size} bytes, fewer than its `offset`/`length` need", path.display());
    let available = size.checked_sub(entries.offset).ok_or_else(past_end)?;
    let length = entries.length.unwrap_or(available);
    if length > available {
        return Err(past_end());
    }
    if length != expected {
        return Err(format!("its external data has {length} bytes, but its type and shape need {expected}"));
    }
    Ok(ExternalBytes { tensor: proto.name().to_string(), path, offset: entries.offset, length })
}

/// The side file `location` names, inside `dir` after symlinks are resolved.
fn confine(dir: &Path, location: &str) -> Result<PathBuf, String> {
    let relative = Path::new(location);
    if relative.components().any(|c| matches!(c, Component::RootDir | Component::Prefix(_))) {
        return Err(format!(
            "its side file location `{location}` is absolute; it must be relative to the model's folder"
        ));
    }
    if relative.components().any(|c| c == Component::ParentDir) {
        return Err(format!("its side file location `{location}` contains `..`; it must stay in the model's folder"));
    }
    let joined = dir.join(relative);
    let missing = |e: std::io::Error| format!("side file `{}` cannot be opened: {e}", joined.display());
    let path = joined.canonicalize().map_err(missing)?;
    let root = dir.canonicalize().map_err(|e| format!("model folder `{}` cannot be opened: {e}", dir.display()))?;
    if !path.starts_with(&root) {
        return Err(format!(
            "its side file `{location}` resolves to `{}`, outside the model's folder `{}`",
            path.display(),
            root.display()
        ));
    }
    if !path.is_file() {
        return Err(format!("side file `{}` is not a file", path.display()));
    }
    Ok(path)
}

/// The side files the external tensors of `graph` (subgraphs included) name, canonical, sorted
/// and without repeats. Run after the import, which checked every location.
pub fn side_files(graph: &GraphProto, dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![];
    visit_tensors(graph, &mut |tensor| {
        let location = Entries::parse(tensor).ok().map(|e| e.location);
        files.extend(location.and_then(|l| confine(dir, &l).ok()));
    });
    files.sort();
    files.dedup();
    files
}

/// Calls `f` on every external tensor of `graph`: initializers (sparse ones' parts too) and
/// tensor attributes, in subgraphs too.
fn visit_tensors(graph: &GraphProto, f: &mut impl FnMut(&TensorProto)) {
    let mut visit = |t: &TensorProto| {
        if is_external(t) {
            f(t)
        }
    };
    graph.initializer.iter().for_each(&mut visit);
    graph.sparse_initializer.iter().flat_map(sparse_parts).for_each(&mut visit);
    for attr in graph.node.iter().flat_map(|n| &n.attribute) {
        attr.t.iter().chain(&attr.tensors).for_each(&mut visit);
        attr.sparse_tensor.iter().chain(&attr.sparse_tensors).flat_map(sparse_parts).for_each(&mut visit);
    }
    for subgraph in graph.node.iter().flat_map(|n| &n.attribute).flat_map(|a| a.g.iter().chain(&a.graphs)) {
        visit_tensors(subgraph, f);
    }
}

fn sparse_parts(sparse: &SparseTensorProto) -> impl Iterator<Item = &TensorProto> {
    sparse.values.iter().chain(&sparse.indices)
}

/// The recognised `external_data` keys.
struct Entries {
    location: String,
    offset: u64,
    length: Option<u64>,
}

impl Entries {
    fn parse(proto: &TensorProto) -> Result<Self, String> {
        let (mut location, mut offset, mut length) = (None, None, None);
        for entry in &proto.external_data {
            let (key, value) = (entry.key(), entry.value());
            let number =
                || value.parse::<u64>().map_err(|_| format!("external data `{key}` is `{value}`, not a byte count"));
            let slot_taken = match key {
                "location" => location.replace(value.to_string()).is_some(),
                "offset" => offset.replace(number()?).is_some(),
                "length" => length.replace(number()?).is_some(),
                // An integrity hint ONNX Runtime does not check either.
                "checksum" => false,
                other => return Err(format!("unknown external data key `{other}`")),
            };
            if slot_taken {
                return Err(format!("external data key `{key}` is given twice"));
            }
        }
        let location = location.filter(|l| !l.is_empty()).ok_or("its external data has no `location`")?;
        Ok(Self { location, offset: offset.unwrap_or(0), length })
    }
}
