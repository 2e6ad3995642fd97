//! External data (tensors in side files): the committed model imports to the same weights as
//! its embedded twin, and every way out of the model's folder or past a file's end is an error
//! naming the tensor.

use onnx_ir::{import, Error, Graph, ImportOptions, Storage};
use std::path::{Path, PathBuf};

mod common;
use common::*;

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models/external_data")
}

fn import_from(file: &Path, dir: Option<&Path>) -> Result<Graph, Error> {
    let bytes = std::fs::read(file).expect("model file");
    import(
        &bytes,
        ImportOptions { simplify: false, external_data_dir: dir.map(Path::to_path_buf), ..Default::default() },
    )
}

#[test]
fn side_file_weights_equal_the_embedded_ones() {
    let dir = models();
    let external = import_from(&dir.join("model.onnx"), Some(&dir)).expect("imports");
    let embedded = import_from(&dir.join("embedded.onnx"), None).expect("imports");
    let constants = |g: &Graph| -> Vec<(String, Vec<usize>, Vec<u8>)> {
        let values = g.values.iter().filter_map(|v| Some((v, v.constant.as_ref()?)));
        values.map(|(v, c)| (v.name.clone(), c.shape.clone(), c.read_bytes().expect("reads").into_owned())).collect()
    };
    assert_eq!(constants(&external), constants(&embedded));
    assert_eq!(external.to_string(), embedded.to_string());
    // Above the read-at-import size the data stays in the file; below it, it is read.
    let storage = |name: &str| external.values.iter().find(|v| v.name == name).and_then(|v| v.constant.clone());
    for (name, in_file) in [("weight", true), ("codes", true), ("bias", false), ("shape", false)] {
        let stays = matches!(storage(name).expect("a constant").storage, Storage::External(_));
        assert_eq!(stays, in_file, "{name}");
    }
    assert_eq!(external.side_files, vec![dir.join("weights.bin").canonicalize().unwrap()]);
    assert!(embedded.side_files.is_empty());
}

/// A model of one f32 [4] initializer `w` in a side file described by `entries`, in `dir`.
fn one_weight(entries: &[(&str, &str)]) -> Vec<u8> {
    let add = node("Add", &["x", "w"], &["y"], vec![]);
    model(17, vec![add], vec![input("x", &[4])], vec![external_init("w", 1, &[4], entries)])
}

/// A fresh folder for one case, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new(case: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("onnx-ir-external-{}-{case}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("model")).expect("temp folder");
        Self(dir)
    }

    /// The model's folder (inside the case folder, so that a way out has somewhere to go).
    fn model(&self) -> PathBuf {
        self.0.join("model")
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The message of the import error, which must name `w`.
fn refusal(folder: &Folder, entries: &[(&str, &str)]) -> String {
    match import(
        &one_weight(entries),
        ImportOptions { simplify: false, external_data_dir: Some(folder.model()), ..Default::default() },
    ) {
        Err(Error::Tensor { name, message }) if name == "w" => message,
        other => panic!("expected an error naming `w`, got {other:?}"),
    }
}

#[test]
fn a_side_file_in_the_folder_is_read() {
    let folder = Folder::new("read");
    let values: Vec<u8> = [1f32, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(folder.model().join("w.bin"), [vec![9u8; 8], values.clone()].concat()).unwrap();
    let bytes = one_weight(&[("location", "w.bin"), ("offset", "8"), ("length", "16"), ("checksum", "ignored")]);
    let graph = import(
        &bytes,
        ImportOptions { simplify: false, external_data_dir: Some(folder.model()), ..Default::default() },
    )
    .unwrap();
    let w = graph.values.iter().find(|v| v.name == "w").and_then(|v| v.constant.as_ref()).expect("w");
    assert_eq!(w.resident(), Some(&values[..]));
    // No length: the rest of the file.
    let bytes = one_weight(&[("location", "w.bin"), ("offset", "8")]);
    assert!(import(
        &bytes,
        ImportOptions { simplify: false, external_data_dir: Some(folder.model()), ..Default::default() }
    )
    .is_ok());
}

#[test]
fn no_folder_is_an_error() {
    let message = match import(&one_weight(&[("location", "w.bin")]), ImportOptions::default()) {
        Err(Error::Tensor { name, message }) if name == "w" => message,
        other => panic!("expected an error naming `w`, got {other:?}"),
    };
    assert!(message.contains("no folder was given"), "{message}");
}

#[test]
fn an_absolute_location_is_refused() {
    let folder = Folder::new("absolute");
    let location = folder.model().join("w.bin");
    std::fs::write(&location, [0u8; 16]).unwrap();
    let message = refusal(&folder, &[("location", location.to_str().unwrap())]);
    assert!(message.contains("is absolute"), "{message}");
}

#[test]
fn a_location_with_dot_dot_is_refused() {
    let folder = Folder::new("dotdot");
    std::fs::write(folder.0.join("w.bin"), [0u8; 16]).unwrap();
    for location in ["../w.bin", "sub/../../w.bin"] {
        let message = refusal(&folder, &[("location", location)]);
        assert!(message.contains("contains `..`"), "{message}");
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_folder_is_refused() {
    let folder = Folder::new("symlink");
    std::fs::write(folder.0.join("outside.bin"), [0u8; 16]).unwrap();
    std::os::unix::fs::symlink(folder.0.join("outside.bin"), folder.model().join("w.bin")).unwrap();
    let message = refusal(&folder, &[("location", "w.bin")]);
    assert!(message.contains("outside the model's folder"), "{message}");
    // A symlinked folder leading out is refused the same way.
    std::os::unix::fs::symlink(&folder.0, folder.model().join("up")).unwrap();
    let message = refusal(&folder, &[("location", "up/outside.bin")]);
    assert!(message.contains("outside the model's folder"), "{message}");
}

#[test]
fn a_missing_side_file_is_an_error_with_its_path() {
    let folder = Folder::new("missing");
    let message = refusal(&folder, &[("location", "absent.bin")]);
    assert!(message.contains(&folder.model().join("absent.bin").display().to_string()), "{message}");
}

/// Each of `cases` (entries besides `location`) on a side file of `len` bytes is refused with
/// a message containing `expected`.
fn refused_ranges(case: &str, len: usize, cases: &[Vec<(&str, &str)>], expected: &str) {
    let folder = Folder::new(case);
    std::fs::write(folder.model().join("w.bin"), vec![0u8; len]).unwrap();
    for entries in cases {
        let message = refusal(&folder, &[[("location", "w.bin")].as_slice(), entries].concat());
        assert!(message.contains(expected), "{entries:?}: {message}");
    }
}

#[test]
fn a_range_past_the_end_is_refused() {
    let max = u64::MAX.to_string();
    let cases = [
        vec![("offset", "8"), ("length", "16")],
        vec![("offset", "21")],
        vec![("offset", max.as_str()), ("length", "16")],
        vec![("offset", "16"), ("length", max.as_str())],
        vec![("offset", max.as_str()), ("length", max.as_str())],
    ];
    refused_ranges("past-end", 20, &cases, "has 20 bytes, fewer than its `offset`/`length` need");
}

#[test]
fn a_length_that_is_not_the_tensor_size_is_refused() {
    let cases = [vec![("length", "12")], vec![("length", "32")], vec![]];
    refused_ranges("length", 32, &cases, "but its type and shape need 16");
}

#[test]
fn malformed_entries_are_refused() {
    let folder = Folder::new("entries");
    std::fs::write(folder.model().join("w.bin"), [0u8; 16]).unwrap();
    for (entries, expected) in [
        (vec![("offset", "-1")], "not a byte count"),
        (vec![("length", "0x10")], "not a byte count"),
        (vec![("location", "w.bin"), ("offset", "0")], "given twice"),
        (vec![("where", "here")], "unknown external data key `where`"),
    ] {
        let message = refusal(&folder, &[[("location", "w.bin")].as_slice(), &entries].concat());
        assert!(message.contains(expected), "{entries:?}: {message}");
    }
    let message = refusal(&folder, &[("offset", "0")]);
    assert!(message.contains("no `location`"), "{message}");
}

/// Many small tensors naming one range of a small side file: each is read at import (it may be
/// folded), so together they are bounded. 512 f64 tensors of 65,536 elements (512 KiB each)
/// fill the 256 MiB budget exactly; the 513th, `w512`, crosses it.
#[test]
fn small_side_tensors_are_bounded_in_total() {
    let folder = Folder::new("many");
    let elements = 65536;
    std::fs::write(folder.model().join("w.bin"), vec![0u8; elements * 8]).unwrap();
    let weights = |count: usize| -> Vec<u8> {
        let add = node("Add", &["x", "w0"], &["y"], vec![]);
        let init = |i: usize| external_init(&format!("w{i}"), 11, &[elements as i64], &[("location", "w.bin")]);
        model(17, vec![add], vec![typed_input("x", 11, &[elements as i64])], (0..count).map(init).collect())
    };
    let options = || ImportOptions { simplify: false, external_data_dir: Some(folder.model()), ..Default::default() };
    assert!(import(&weights(512), options()).is_ok(), "the budget holds 512 of them");
    match import(&weights(513), options()) {
        Err(Error::Tensor { name, message }) => {
            assert_eq!(name, "w512");
            assert!(message.contains("past 268435456 bytes (268435456 already read)"), "{message}");
        }
        other => panic!("expected an error naming `w512`, got {other:?}"),
    }
}
