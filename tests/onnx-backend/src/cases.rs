//! Test cases of a suite folder: `NAME/model.onnx` with `NAME/test_data_set_N/{input,output}_K.pb`
//! (node, simple, pytorch-*, or any folder a user points at), or the `light` layout
//! (`light_X.onnx` + `light_X_output_0.pb`, inputs generated as ONNX's runner does:
//! `arange(n) / n` in float32, unknown dims taken as 1; their constant weights score every
//! class the same, so no top-1 check).
//!
//! A test folder may also hold `ort_ms.txt` (ONNX Runtime's time for data set 0, reported
//! beside ours) and `case.txt`, one directive per line: `top1` (a classifier: the arg-max of
//! output 0 must match too) or `feed OUTPUT INPUT` (a stateful stream: from the second data
//! set on, INPUT is the model's own OUTPUT of the previous data set).

use onnx_ir::proto::tensor_shape_proto::dimension::Value as DimValue;
use onnx_ir::proto::{ModelProto, TensorProto, TypeProto};
use onnx_ir::InputShape;
use prost::Message;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub struct Case {
    pub name: String,
    pub model: PathBuf,
    pub data_sets: Vec<PathBuf>,
    pub top1: bool,
    /// `(output, input)`: the output fed back as that input for the next data set.
    pub feed: Option<(String, String)>,
    pub ort_ms: Option<f64>,
    /// Shapes declared for graph inputs the model leaves open (see [`declared_input_shapes`]).
    pub input_shapes: Vec<InputShape>,
}

impl Case {
    fn from_folder(name: String, path: &Path) -> Result<Case, String> {
        let directives = std::fs::read_to_string(path.join("case.txt")).unwrap_or_default();
        let (mut top1, mut feed) = (false, None);
        for line in directives.lines().map(str::trim).filter(|l| !l.is_empty()) {
            match line.split_whitespace().collect::<Vec<_>>()[..] {
                ["top1"] => top1 = true,
                ["feed", output, input] => feed = Some((output.to_string(), input.to_string())),
                _ => {
                    return Err(format!(
                        "{}: unknown directive `{line}` (top1, feed OUTPUT INPUT)",
                        path.join("case.txt").display()
                    ))
                }
            }
        }
        let ort_ms = std::fs::read_to_string(path.join("ort_ms.txt")).ok().and_then(|t| t.trim().parse().ok());
        let model = path.join("model.onnx");
        Ok(Case { data_sets: data_sets(path), model, name, top1, feed, ort_ms, input_shapes: vec![] })
    }
}

fn data_sets(dir: &Path) -> Vec<PathBuf> {
    let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("test_data_set_"))
                })
                .collect()
        })
        .unwrap_or_default();
    sets.sort();
    sets
}

/// The input shapes declared per test in `file` (`tests/onnx-backend/input-shapes.txt`): one
/// line per test, its name then its declarations (`test_x x=[?, ?]`), as a user declares them
/// with `input_shapes = [...]` for a model that gives an input no shape; `#` starts a comment.
pub fn declared_input_shapes(file: &Path) -> Result<BTreeMap<String, Vec<InputShape>>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut declared = BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (test, specs) =
            line.split_once(' ').ok_or_else(|| format!("{}: `{line}` declares nothing", file.display()))?;
        // Dims are separated by `, `: a declaration ends at a space after `]`.
        let shapes = specs.split_inclusive(']').map(str::trim).filter(|s| !s.is_empty()).map(str::parse);
        let shapes = shapes.collect::<Result<Vec<InputShape>, _>>().map_err(|e| format!("{}: {e}", file.display()))?;
        declared.insert(test.to_string(), shapes);
    }
    Ok(declared)
}

/// Cases in `folder`, in name order, with the input shapes `declared` for them. `scratch`
/// receives generated data for the light layout.
pub fn list(folder: &Path, scratch: &Path, declared: &BTreeMap<String, Vec<InputShape>>) -> Result<Vec<Case>, String> {
    let entries = std::fs::read_dir(folder).map_err(|e| format!("cannot list {}: {e}", folder.display()))?;
    let mut cases = vec![];
    for entry in entries.filter_map(|e| e.ok()) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.join("model.onnx").is_file() {
            cases.push(Case::from_folder(name, &path)?);
        } else if let Some(stem) = name.strip_suffix(".onnx") {
            let output = folder.join(format!("{stem}_output_0.pb"));
            if output.is_file() {
                let set = light_data_set(&path, &output, &scratch.join(stem))?;
                cases.push(Case {
                    name: stem.to_string(),
                    model: path,
                    data_sets: vec![set],
                    top1: false,
                    feed: None,
                    ort_ms: None,
                    input_shapes: vec![],
                });
            }
        }
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    for case in &mut cases {
        case.input_shapes = declared.get(&case.name).cloned().unwrap_or_default();
    }
    Ok(cases)
}

/// Writes `test_data_set_0` for a light model: generated inputs and the stored output.
fn light_data_set(model: &Path, output: &Path, dir: &Path) -> Result<PathBuf, String> {
    let bytes = std::fs::read(model).map_err(|e| e.to_string())?;
    let proto = ModelProto::decode(&bytes[..]).map_err(|e| format!("{}: {e}", model.display()))?;
    let graph = proto.graph.ok_or("model without graph")?;
    let set = dir.join("test_data_set_0");
    std::fs::create_dir_all(&set).map_err(|e| e.to_string())?;
    let initializers: Vec<&str> = graph.initializer.iter().map(|t| t.name()).collect();
    for (i, input) in graph.input.iter().filter(|i| !initializers.contains(&i.name())).enumerate() {
        let dims: Vec<i64> = input
            .r#type
            .as_ref()
            .and_then(TypeProto::tensor_type)
            .and_then(|t| t.shape.as_ref())
            .map(|s| {
                s.dim
                    .iter()
                    .map(|d| match d.value {
                        Some(DimValue::DimValue(v)) if v > 0 => v,
                        _ => 1,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let n: i64 = dims.iter().product();
        let raw_data = (0..n).flat_map(|k| ((k as f64 / n as f64) as f32).to_le_bytes()).collect();
        let tensor = TensorProto {
            dims,
            data_type: Some(1),
            raw_data: Some(raw_data),
            name: input.name.clone(),
            ..Default::default()
        };
        std::fs::write(set.join(format!("input_{i}.pb")), tensor.encode_to_vec()).map_err(|e| e.to_string())?;
    }
    std::fs::copy(output, set.join("output_0.pb")).map_err(|e| e.to_string())?;
    Ok(set)
}
