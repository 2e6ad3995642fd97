//! External data through the code generator: the same code and `.bpk` bytes as the embedded
//! twin, a `.bpk` written by default (not embedded) from the macro, an expansion cache that
//! follows the side file, and a model of 2.4 GB of side data written in little memory.

use onnx_codegen::generate::{generate, write_files, GenerateOptions, GeneratedModel};
use onnx_codegen::{expand, Request, WeightsMode};
use onnx_ir::proto::*;
use prost::Message;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

mod common;
use common::weights_path;

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../onnx-ir/tests/models/external_data")
}

fn generated(model: &Path, out_dir: &Path) -> GeneratedModel<'static> {
    let bytes = std::fs::read(model).expect("model file");
    let folder = onnx_codegen::model_folder(model);
    let opts = GenerateOptions { external_data_dir: Some(&folder), ..GenerateOptions::new("Model", out_dir) };
    generate(&bytes, &opts).expect("generates")
}

/// A fresh temporary folder, removed when dropped: under the target folder (on disk), not
/// `/tmp`, which may be memory and cannot take the large case's 2.4 GB.
struct Folder(PathBuf);

impl Folder {
    fn new(case: &str) -> Self {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("external-{}-{case}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp folder");
        Self(dir)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn side_file_weights_pack_to_the_embedded_bytes() {
    let out = Folder::new("pack");
    let external = generated(&models().join("model.onnx"), &out.0);
    let embedded = generated(&models().join("embedded.onnx"), &out.0);
    assert_eq!(external.code, embedded.code);
    let (external, embedded) = (external.bpk.expect("weights"), embedded.bpk.expect("weights"));
    assert!(external.reads_side_files() && !embedded.reads_side_files());
    let bytes = embedded.to_bytes().expect("packs");
    assert_eq!(external.to_bytes().expect("packs"), bytes);
    // Streamed to a file, the same bytes.
    let path = out.0.join("model.bpk");
    external.write(&path).expect("writes");
    assert_eq!(std::fs::read(&path).expect("reads back"), bytes);
}

/// A side file truncated after the import, before the weights are written (as the CLI and
/// ModelGen write them): an error naming the tensor and the file, and no `.bpk`, whether the
/// short tensor is streamed as it is (`weight`, f32, at the start of the file) or converted
/// (`codes`, int8 to i64, at its end).
#[test]
fn a_side_file_truncated_before_writing_is_an_error() {
    // Byte sizes of the side file's tensors, in file order (scripts/make_external_data_models.py).
    let (weight, bias, shape, codes) = (257 * 256 * 4, 256 * 4, 2 * 8, 65600);
    for (tensor, keep) in [("weight", 1000), ("codes", weight + bias + shape + codes - 1)] {
        let folder = Folder::new(&format!("truncated-{tensor}"));
        for file in ["model.onnx", "weights.bin"] {
            std::fs::copy(models().join(file), folder.0.join(file)).expect("copies the model");
        }
        let out = folder.0.join("out");
        let model = generated(&folder.0.join("model.onnx"), &out);
        let side = std::fs::File::options().write(true).open(folder.0.join("weights.bin")).expect("side file");
        side.set_len(keep as u64).expect("truncates");
        let pack = model.bpk.as_ref().expect("weights");
        let messages = [
            write_files(&model, &out).map(|_| ()).expect_err("writing must fail").to_string(),
            pack.to_bytes().map(|_| ()).expect_err("packing must fail").to_string(),
        ];
        for message in messages {
            let names_both = message.contains(&format!("`{tensor}`")) && message.contains("weights.bin");
            assert!(names_both && message.contains(&format!("now has {keep} bytes")), "{message}");
        }
        assert!(!out.join("model.bpk").exists(), "a partial .bpk was left");
    }
}

fn request(manifest_dir: &Path, name: &str, weights: Option<WeightsMode>) -> Request {
    common::request(manifest_dir, "model.onnx", name, weights)
}

#[test]
fn the_macro_writes_side_file_weights_to_a_file_by_default() {
    let dir = models();
    let default = expand(&request(&dir, "ExternalDefault", None)).expect("expands").to_string();
    assert!(default.contains("WEIGHTS_FILE") && !default.contains("include_bytes_aligned"), "{default}");
    let embedded = expand(&request(&dir, "ExternalEmbedded", Some(WeightsMode::Embed))).expect("expands").to_string();
    assert!(embedded.contains("include_bytes_aligned"), "{embedded}");
    let twin = Request { model: "embedded.onnx".into(), ..request(&dir, "EmbeddedDefault", None) };
    assert!(expand(&twin).expect("expands").to_string().contains("include_bytes_aligned"));
}

#[test]
fn a_changed_side_file_is_expanded_again() {
    let folder = Folder::new("cache");
    for file in ["model.onnx", "weights.bin"] {
        std::fs::copy(models().join(file), folder.0.join(file)).expect("copies the model");
    }
    let request = request(&folder.0, "ExternalCached", None);
    let bpk = weights_path(&expand(&request).expect("expands").to_string());
    let first = std::fs::read(&bpk).expect("the weights file");
    let written = std::fs::metadata(&bpk).and_then(|m| m.modified()).expect("mtime");
    // Unchanged: the cached expansion, and the weights file is not rewritten.
    expand(&request).expect("expands");
    assert_eq!(std::fs::metadata(&bpk).and_then(|m| m.modified()).expect("mtime"), written);
    // One byte of `weight` changed in place: same size, newer mtime; the model file untouched.
    let side = folder.0.join("weights.bin");
    let mut data = std::fs::read(&side).expect("side file");
    data[100] ^= 0x40;
    std::fs::write(&side, &data).expect("rewrites the side file");
    let later = SystemTime::now() + Duration::from_secs(2);
    std::fs::File::options().write(true).open(&side).and_then(|f| f.set_modified(later)).expect("sets the mtime");
    assert_eq!(weights_path(&expand(&request).expect("expands").to_string()), bpk);
    let second = std::fs::read(&bpk).expect("the weights file");
    assert!(first.len() == second.len() && first != second, "the weights must follow the side file");
}

/// Elements of the large model's single initializer: 2.4 GB of f32.
const BIG_ELEMENTS: u64 = 600_000_000;
/// Element offsets of the pages of the side file that are not zero.
const PAGES: [u64; 3] = [0, 300_000_000, BIG_ELEMENTS - 1024];
/// Elements per page (4 KiB).
const PAGE: u64 = 1024;

fn page_value(page: u64, i: u64) -> f32 {
    (page / PAGE + i + 1) as f32
}

/// `y = x + w` with `w` of [`BIG_ELEMENTS`] in the sparse side file `big.bin`.
fn write_big_model(dir: &Path) {
    let side = std::fs::File::create(dir.join("big.bin")).expect("side file");
    side.set_len(BIG_ELEMENTS * 4).expect("sparse side file");
    for page in PAGES {
        let values: Vec<u8> = (0..PAGE).flat_map(|i| page_value(page, i).to_le_bytes()).collect();
        (&side).seek(SeekFrom::Start(page * 4)).and_then(|_| (&side).write_all(&values)).expect("writes a page");
    }
    let entry = |key: &str, value: String| StringStringEntryProto { key: Some(key.into()), value: Some(value) };
    let weight = TensorProto {
        name: Some("w".into()),
        data_type: Some(1),
        dims: vec![BIG_ELEMENTS as i64],
        external_data: vec![entry("location", "big.bin".into()), entry("length", (BIG_ELEMENTS * 4).to_string())],
        data_location: Some(tensor_proto::DataLocation::External as i32),
        ..Default::default()
    };
    let tensor = |name: &str| {
        let dim = tensor_shape_proto::Dimension {
            value: Some(tensor_shape_proto::dimension::Value::DimValue(BIG_ELEMENTS as i64)),
            ..Default::default()
        };
        let shape = TensorShapeProto { dim: vec![dim] };
        let ty = type_proto::Tensor { elem_type: Some(1), shape: Some(shape) };
        ValueInfoProto {
            name: Some(name.into()),
            r#type: Some(TypeProto { value: Some(type_proto::Value::TensorType(ty)), ..Default::default() }),
            ..Default::default()
        }
    };
    let add = NodeProto {
        op_type: Some("Add".into()),
        name: Some("add".into()),
        input: vec!["x".into(), "w".into()],
        output: vec!["y".into()],
        ..Default::default()
    };
    let graph = GraphProto {
        node: vec![add],
        input: vec![tensor("x")],
        output: vec![tensor("y")],
        initializer: vec![weight],
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(17) }],
        graph: Some(graph),
        ..Default::default()
    };
    std::fs::write(dir.join("big.onnx"), model.encode_to_vec()).expect("writes the model");
}

/// Peak resident memory of this process (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).expect("a number of kB") * 1024
}

/// Set for the child process that imports the large model, so that its peak memory is the
/// import's alone (the test harness runs other tests in the parent's threads).
const CHILD: &str = "ONNX_CODEGEN_BIG_MODEL_DIR";

/// Imports the large model in a child process and writes its `.bpk`: the data lands where it
/// belongs and the import's peak memory stays far below the model's 2.4 GB.
#[cfg(target_os = "linux")]
#[test]
fn a_model_of_many_gb_of_side_data_imports_in_little_memory() {
    let folder = Folder::new("big");
    write_big_model(&folder.0);
    let started = Instant::now();
    let child = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "big_model_child", "--include-ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD, &folder.0)
        .output()
        .expect("runs the child");
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&child.stdout);
    assert!(child.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&child.stderr));
    let peak: u64 = stdout
        .lines()
        .find_map(|l| l.split("peak-rss ").nth(1))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("the child reports no peak: {stdout}"));
    let times = stdout.lines().find(|l| l.contains("imported in")).unwrap_or_default();
    eprintln!("2.4 GB side-data model: {elapsed:.1?} in all ({times}), peak RSS {} MB", peak >> 20);
    assert!(peak < 500 << 20, "peak RSS {} MB", peak >> 20);
    check_big_pack(&folder.0.join("out/model.bpk"));
}

/// The child's work (skipped in a normal run).
#[test]
#[ignore = "run by a_model_of_many_gb_of_side_data_imports_in_little_memory"]
fn big_model_child() {
    let Some(dir) = std::env::var_os(CHILD).map(PathBuf::from) else { return };
    let started = Instant::now();
    let model = generated(&dir.join("big.onnx"), &dir.join("out"));
    let imported = started.elapsed();
    write_files(&model, &dir.join("out")).expect("writes the files");
    println!("imported in {imported:.1?}, .bpk written in {:.1?}", started.elapsed() - imported);
    println!("peak-rss {}", peak_rss());
}

/// The pack's one tensor holds the side file's pages at their offsets, zeros elsewhere.
fn check_big_pack(path: &Path) {
    let mut file = std::fs::File::open(path).expect("the .bpk");
    let mut header = [0u8; burn_pack::HEADER_SIZE];
    file.read_exact(&mut header).expect("a header");
    let metadata_size = u32::from_le_bytes(header[6..10].try_into().unwrap()) as usize;
    let data = burn_pack::aligned_data_section_start(metadata_size) as u64;
    assert_eq!(file.metadata().unwrap().len(), data + BIG_ELEMENTS * 4, "one tensor of 2.4 GB");
    let read_f32s = |file: &mut std::fs::File, element: u64, n: u64| -> Vec<f32> {
        let mut bytes = vec![0u8; (n * 4) as usize];
        file.seek(SeekFrom::Start(data + element * 4)).and_then(|_| file.read_exact(&mut bytes)).expect("reads");
        bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
    };
    for page in PAGES {
        let expected: Vec<f32> = (0..PAGE).map(|i| page_value(page, i)).collect();
        assert_eq!(read_f32s(&mut file, page, PAGE), expected, "page at element {page}");
    }
    assert!(read_f32s(&mut file, PAGE, PAGE).iter().all(|&v| v == 0.0));
    assert!(read_f32s(&mut file, 450_000_000, PAGE).iter().all(|&v| v == 0.0));
}
