//! `onnx2burn check`: the generated code of one model, built in a throwaway crate and run on
//! given or seeded inputs, against expected outputs from files or from ONNX Runtime; with
//! `bisect`, the same model with every intermediate value exposed as an output, compared in
//! execution order to name the first node whose output differs.

use crate::npy;
use crate::{write_if_changed, ScratchCrate};
use onnx_ir::proto::tensor_shape_proto::{dimension::Value as DimValue, Dimension};
use onnx_ir::proto::type_proto::{Tensor as TensorTypeProto, Value as TypeValue};
use onnx_ir::proto::{ModelProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto};
use onnx_ir::{DType, Dim, DimSize, Graph, ImportOptions, InputShape, Kind, TensorData};
use prost::Message;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What to check and how.
pub struct CheckOptions {
    pub model: PathBuf,
    /// `--input NAME=FILE` (`.npy` or `.pb`).
    pub inputs: Vec<(String, PathBuf)>,
    /// The seed of the random values of inputs not given as files.
    pub seed: u64,
    /// `--expected NAME=FILE`.
    pub expected: Vec<(String, PathBuf)>,
    /// The Python that runs ONNX Runtime where expected values are not all given.
    pub python: PathBuf,
    pub rtol: f64,
    pub atol: f64,
    pub bisect: bool,
    pub simplify: bool,
    /// The device's default int type set to int64 (Burn's flex default is int32).
    pub int64: bool,
    pub input_shapes: Vec<InputShape>,
    pub dim_sizes: Vec<DimSize>,
    /// A Rust file of `#[onnx_custom_op]` hooks, compiled as the module `hooks`.
    pub hooks: Option<PathBuf>,
    /// `(op, function)`: `"domain::OpType"` (or `OpType`) and the hook's path in the hooks file.
    pub custom_ops: Vec<(String, String)>,
    /// The burn-onnx workspace (see [`crate::workspace_root`]).
    pub repo: PathBuf,
    /// Cargo's target folder for the throwaway crate.
    pub target: PathBuf,
}

/// How one value compares with its expected value.
#[derive(Debug, Clone)]
pub struct Diff {
    pub shape: Vec<usize>,
    pub max_abs: f64,
    pub max_rel: f64,
    /// Elements beyond `atol + rtol * |expected|` (NaN against a number counts).
    pub beyond: usize,
    pub elements: usize,
    /// Why the values were not compared element by element (a shape that differs).
    pub mismatch: Option<String>,
}

impl Diff {
    pub fn passed(&self) -> bool {
        self.mismatch.is_none() && self.beyond == 0
    }

    fn summary(&self) -> String {
        match &self.mismatch {
            Some(m) => m.clone(),
            None => format!(
                "max abs diff {}, max rel diff {} ({} of {} elements beyond tolerance)",
                sci(self.max_abs),
                sci(self.max_rel),
                self.beyond,
                self.elements
            ),
        }
    }
}

fn sci(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else {
        format!("{v:.1e}")
    }
}

/// The outcome: the text to print and whether every output matched.
pub struct Report {
    pub text: String,
    pub passed: bool,
}

/// Compares `ours` with `expected` element by element (as f64), within `atol + rtol * |expected|`;
/// NaN equals NaN.
pub fn compare(ours: &TensorData, expected: &TensorData, rtol: f64, atol: f64) -> Diff {
    let mut diff = Diff {
        shape: expected.shape.clone(),
        max_abs: 0.0,
        max_rel: 0.0,
        beyond: 0,
        elements: expected.num_elements(),
        mismatch: None,
    };
    if ours.shape != expected.shape {
        diff.mismatch = Some(format!("shape {:?}, expected {:?}", ours.shape, expected.shape));
        return diff;
    }
    let (Some(got), Some(want)) = (ours.to_f64s(), expected.to_f64s()) else {
        diff.mismatch = Some("values not readable".into());
        return diff;
    };
    for (&g, &w) in got.iter().zip(&want) {
        if g == w || g.is_nan() && w.is_nan() {
            continue;
        }
        let abs = (g - w).abs();
        let abs = if abs.is_nan() { f64::INFINITY } else { abs };
        diff.max_abs = diff.max_abs.max(abs);
        diff.max_rel = diff.max_rel.max(if w == 0.0 { f64::INFINITY } else { abs / w.abs() });
        if abs > atol + rtol * w.abs() {
            diff.beyond += 1;
        }
    }
    diff
}

/// A stable name for the model's throwaway crate: its path and the hooks it uses.
fn crate_key(opts: &CheckOptions) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    std::path::absolute(&opts.model).unwrap_or_else(|_| opts.model.clone()).hash(&mut hasher);
    opts.hooks.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// `"domain::OpType"` as the importer keys custom ops (`""` for the default domain).
fn op_key(op: &str) -> (String, String) {
    match op.rsplit_once("::") {
        Some((d, o)) => (if d == "ai.onnx" { String::new() } else { d.to_string() }, o.to_string()),
        None => (String::new(), op.to_string()),
    }
}

/// Runs the check. `Err` is an error of the tool or the input (exit code 2), not a difference.
pub fn check(opts: &CheckOptions) -> Result<Report, String> {
    let model_path = std::path::absolute(&opts.model).map_err(|e| format!("{}: {e}", opts.model.display()))?;
    let bytes = std::fs::read(&model_path).map_err(|e| format!("cannot read {}: {e}", model_path.display()))?;
    let proto =
        ModelProto::decode(&bytes[..]).map_err(|e| format!("{}: not an ONNX model: {e}", model_path.display()))?;
    let proto_graph = proto.graph.clone().unwrap_or_default();
    if opts.hooks.is_none() && !opts.custom_ops.is_empty() {
        return Err("--custom-op names a function of the --hooks file: give --hooks FILE.rs".into());
    }
    let hooks = match &opts.hooks {
        Some(h) if !h.is_file() => return Err(format!("--hooks {}: no such file", h.display())),
        Some(h) => Some(std::path::absolute(h).map_err(|e| e.to_string())?),
        None => None,
    };
    let custom: Vec<(String, String)> = opts.custom_ops.iter().map(|(op, _)| op_key(op)).collect();
    let folder = model_path.parent().map(Path::to_path_buf);
    let import_options = ImportOptions {
        simplify: false,
        external_data_dir: folder,
        input_shapes: opts.input_shapes.clone(),
        dim_sizes: opts.dim_sizes.clone(),
    };
    let graph = onnx_ir::import_with_custom_ops(&bytes, import_options, &custom).map_err(|e| {
        let hint = match e {
            onnx_ir::Error::UnsupportedOps(_) => {
                "; implement them as #[onnx_custom_op] functions in a file and give it with --hooks FILE.rs \
                 --custom-op 'domain::OpType=function'"
            }
            _ => "",
        };
        format!("{}: the model does not import: {e}{hint}", model_path.display())
    })?;

    let work = opts.target.join("onnx2burn-check").join(crate_key(opts));
    let data = work.join("data");
    for dir in ["data", "ours/plain", "ours/exposed", "ort"] {
        let dir = work.join(dir);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let input_notes = write_inputs(opts, &graph, &data)?;
    let output_names: Vec<String> = graph.outputs.iter().map(|&id| graph.values[id].name.clone()).collect();
    let mut expected: BTreeMap<usize, TensorData> = BTreeMap::new();
    for (name, path) in &opts.expected {
        let k = output_names.iter().position(|n| n == name).ok_or_else(|| {
            format!("--expected {name}: the model has no output `{name}` (its outputs: {})", output_names.join(", "))
        })?;
        expected.insert(k, npy::read_tensor(path)?);
    }

    // The values --bisect compares: every tensor a top-level node of the file computes, in
    // execution order, but for constants and the graph's outputs.
    let candidates = if opts.bisect { candidates(&proto, &graph) } else { vec![] };
    if opts.bisect && proto_graph.initializer.iter().any(|t| !t.external_data.is_empty()) {
        return Err("--bisect rewrites the model with more outputs, which a model with external data cannot be".into());
    }
    let exposed_model = work.join("exposed.onnx");
    if opts.bisect {
        let mut exposed = proto.clone();
        if let Some(g) = exposed.graph.as_mut() {
            g.output.extend(candidates.iter().map(|c| value_info(&c.value, &graph.values[c.id].ty)));
        }
        write_if_changed(&exposed_model, &exposed.encode_to_vec())?;
    }

    let ort_needed = opts.bisect || expected.len() < output_names.len();
    let ort_dir = work.join("ort");
    if ort_needed {
        run_ort(opts, &model_path, &data, &ort_dir, &candidates, &work)?;
        for k in 0..output_names.len() {
            let path = ort_dir.join(format!("output_{k}.npy"));
            if let (std::collections::btree_map::Entry::Vacant(slot), true) = (expected.entry(k), path.is_file()) {
                slot.insert(npy::read_tensor(&path)?);
            }
        }
    }

    // The throwaway crate: the model as the user imports it, and with --bisect the exposed one.
    let key = crate_key(opts);
    let scratch = ScratchCrate {
        dir: work.join("crate"),
        name: format!("onnx2burn-check-{}", &key[..12]),
        repo: opts.repo.clone(),
        target: opts.target.clone(),
        release: false,
        check_only: false,
        cuda: false,
    };
    scratch.init()?;
    let mut modules = vec![module_source("plain", &model_path, opts, &graph, graph.outputs.len())];
    if opts.bisect {
        modules.push(module_source("exposed", &exposed_model, opts, &graph, graph.outputs.len() + candidates.len()));
    }
    let main = main_source(&modules, hooks.as_deref());
    write_if_changed(&scratch.dir.join("src/main.rs"), main.as_bytes())?;
    eprintln!("onnx2burn check: building the generated code ({})", scratch.dir.display());
    let started = std::time::Instant::now();
    // Cargo's progress shows (the first build in a target folder compiles burn: minutes).
    let mut build = scratch.build()?;
    let first_errors = |build: &crate::Build| {
        let errors = build.errors();
        let shown: Vec<&str> = errors.iter().map(String::as_str).take(3).collect();
        if shown.is_empty() {
            "cargo failed without a compiler error".to_string()
        } else {
            shown.join("\n")
        }
    };
    // The model with its intermediates exposed may not build where the model does: the check
    // of the outputs goes on without it.
    let mut bisect_failure = None;
    if !build.success && opts.bisect {
        bisect_failure = Some(first_errors(&build));
        modules.truncate(1);
        write_if_changed(&scratch.dir.join("src/main.rs"), main_source(&modules, hooks.as_deref()).as_bytes())?;
        build = scratch.build()?;
    }
    if !build.success {
        return Err(format!(
            "the generated code does not build (crate {}):\n{}",
            scratch.dir.display(),
            first_errors(&build)
        ));
    }
    eprintln!("onnx2burn check: built in {:.1}s; running", started.elapsed().as_secs_f64());
    let ours = work.join("ours");
    // Burn's default device would be wgpu in this build (the workspace's burn has that
    // feature): flex, the CPU backend, unless BURN_DEVICE names another.
    let device = std::env::var("BURN_DEVICE").unwrap_or_else(|_| "flex".into());
    let mut command = Command::new(scratch.binary());
    if opts.int64 {
        command.env("ONNX2BURN_CHECK_INT64", "1");
    }
    let run = command
        .env("BURN_DEVICE", &device)
        .arg(&data)
        .arg(&ours)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", scratch.binary().display()))?;
    let stdout = String::from_utf8_lossy(&run.stdout);
    if let Some(panic) = stdout.lines().find_map(|l| l.strip_prefix("PANIC\t")) {
        return Err(format!("the generated code panicked: {panic}"));
    }
    if !run.status.success() {
        return Err(format!(
            "the generated code exited with {}: {}",
            run.status,
            String::from_utf8_lossy(&run.stderr).trim()
        ));
    }

    // The outputs' table.
    let mut text = String::new();
    let source = match opts.expected.len() {
        0 => "ONNX Runtime",
        n if n == output_names.len() => "the expected values",
        _ => "the expected values given, ONNX Runtime for the others",
    };
    let ints = if opts.int64 { ", 64-bit ints" } else { "" };
    let _ = writeln!(text, "{input_notes}; on Burn's {device} device{ints}");
    let width = output_names.iter().map(String::len).max().unwrap_or(6).max(6);
    let _ =
        writeln!(text, "{:width$}  {:16}  {:>12}  {:>12}  result", "output", "shape", "max abs diff", "max rel diff");
    let mut passed = true;
    for (k, name) in output_names.iter().enumerate() {
        let ours_file = ours.join("plain").join(format!("output_{k}.npy"));
        let line = match (ours_file.is_file(), expected.get(&k)) {
            (false, _) => "not compared: not a tensor".to_string(),
            (true, None) => "not compared: no expected value (not a tensor for ONNX Runtime)".to_string(),
            (true, Some(want)) => {
                let diff = compare(&npy::read_tensor(&ours_file)?, want, opts.rtol, opts.atol);
                passed &= diff.passed();
                let verdict = match &diff.mismatch {
                    Some(m) => format!("FAIL: {m}"),
                    None if diff.passed() => "pass".to_string(),
                    None => format!("FAIL ({} of {} elements)", diff.beyond, diff.elements),
                };
                format!(
                    "{:16}  {:>12}  {:>12}  {verdict}",
                    format!("{:?}", diff.shape),
                    sci(diff.max_abs),
                    sci(diff.max_rel)
                )
            }
        };
        let _ = writeln!(text, "{name:width$}  {line}");
    }
    let _ = writeln!(
        text,
        "{}: outputs against {source}, rtol {}, atol {}",
        if passed { "PASS" } else { "DIFFER" },
        opts.rtol,
        opts.atol
    );
    if let Some(errors) = bisect_failure {
        let _ = writeln!(text, "\nbisect: the model with its intermediate values exposed does not build:\n{errors}");
    } else if opts.bisect {
        text.push_str(&bisect_report(
            opts,
            &proto,
            &candidates,
            &ours.join("exposed"),
            &ort_dir,
            graph.outputs.len(),
            passed,
        )?);
    }
    Ok(Report { text, passed })
}

/// An intermediate value --bisect exposes: its ONNX name, IR value and the node computing it.
struct Candidate {
    value: String,
    id: onnx_ir::ValueId,
    node: String,
    op_type: String,
}

fn candidates(proto: &ModelProto, graph: &Graph) -> Vec<Candidate> {
    let Some(g) = proto.graph.as_ref() else { return vec![] };
    // The file's node of each value it computes (IR nodes a lowering made have values the file
    // does not name; ONNX Runtime cannot be asked for those).
    let mut producer: HashMap<&str, (String, String)> = HashMap::new();
    for (k, node) in g.node.iter().enumerate() {
        let name = if node.name().is_empty() { format!("{}_{k}", node.op_type()) } else { node.name().to_string() };
        for out in node.output.iter().filter(|o| !o.is_empty()) {
            producer.insert(out.as_str(), (name.clone(), node.op_type().to_string()));
        }
    }
    let outputs: HashSet<&str> = g.output.iter().map(|o| o.name()).collect();
    let mut seen = HashSet::new();
    let mut list = vec![];
    for node in &graph.nodes {
        for &id in &node.outputs {
            let value = &graph.values[id];
            let Some((name, op_type)) = producer.get(value.name.as_str()) else { continue };
            let numeric = matches!(value.ty.dtype.kind(), Kind::Float | Kind::Int | Kind::Bool);
            if !value.ty.is_tensor()
                || !numeric
                || value.constant.is_some()
                || op_type == "Constant"
                || outputs.contains(value.name.as_str())
                || !seen.insert(value.name.clone())
            {
                continue;
            }
            list.push(Candidate { value: value.name.clone(), id, node: name.clone(), op_type: op_type.clone() });
        }
    }
    list
}

/// A graph output for `name` of type `ty`.
fn value_info(name: &str, ty: &onnx_ir::TensorType) -> ValueInfoProto {
    let dim = |d: &Dim| Dimension {
        value: match d {
            Dim::Static(n) => Some(DimValue::DimValue(*n as i64)),
            Dim::Symbolic(s) => Some(DimValue::DimParam(s.clone())),
            Dim::Unknown => None,
        },
        ..Default::default()
    };
    let tensor = TensorTypeProto {
        elem_type: Some(npy::onnx_code(ty.dtype)),
        shape: Some(TensorShapeProto { dim: ty.shape.iter().map(dim).collect() }),
    };
    ValueInfoProto {
        name: Some(name.to_string()),
        r#type: Some(TypeProto { value: Some(TypeValue::TensorType(tensor)), ..Default::default() }),
        ..Default::default()
    }
}

/// SplitMix64: the seeded values of inputs not given as files.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Writes `input_<j>.pb` for every graph input: the file given, checked against the input's
/// type, or seeded random values of its declared shape. Returns a line saying where they came
/// from.
fn write_inputs(opts: &CheckOptions, graph: &Graph, data: &Path) -> Result<String, String> {
    let names: Vec<&str> = graph.inputs.iter().map(|&id| graph.values[id].name.as_str()).collect();
    for (name, _) in &opts.inputs {
        if !names.contains(&name.as_str()) {
            return Err(format!("--input {name}: the model has no input `{name}` (its inputs: {})", names.join(", ")));
        }
    }
    let mut rng = Rng(opts.seed);
    let mut random = vec![];
    for (j, &id) in graph.inputs.iter().enumerate() {
        let value = &graph.values[id];
        let ty = &value.ty;
        let name = &value.name;
        if !ty.is_tensor() || ty.dtype == DType::String {
            return Err(format!("input `{name}` is a {} value: check takes tensor inputs only", ty.dtype));
        }
        let tensor = match opts.inputs.iter().find(|(n, _)| n == name) {
            Some((_, path)) => {
                let t = npy::read_tensor(path)?;
                if t.dtype.carrier() != ty.dtype.carrier() {
                    return Err(format!("{}: {} values, input `{name}` takes {}", path.display(), t.dtype, ty.dtype));
                }
                let fits = t.shape.len() == ty.rank()
                    && t.shape.iter().zip(&ty.shape).all(|(&n, d)| d.as_static().is_none_or(|s| s == n));
                if !fits {
                    return Err(format!(
                        "{}: shape {:?}, input `{name}` takes {}",
                        path.display(),
                        t.shape,
                        shape_text(&ty.shape)
                    ));
                }
                t
            }
            None => {
                let shape: Option<Vec<usize>> = ty.shape.iter().map(Dim::as_static).collect();
                let shape = shape.ok_or_else(|| {
                    format!(
                        "input `{name}` has the shape {}: give it as a file (--input {name}=FILE.npy) or fix its dims \
                         (--dim NAME=SIZE, --input-shape '{name}=[...]')",
                        shape_text(&ty.shape)
                    )
                })?;
                random.push(name.as_str());
                random_tensor(ty.dtype, shape, &mut rng)?
            }
        };
        let bytes = tensor.resident().ok_or("tensor data not in memory")?.to_vec();
        let proto = TensorProto {
            dims: tensor.shape.iter().map(|&d| d as i64).collect(),
            data_type: Some(npy::onnx_code(tensor.dtype)),
            raw_data: Some(bytes),
            name: Some(name.clone()),
            ..Default::default()
        };
        write_if_changed(&data.join(format!("input_{j}.pb")), &proto.encode_to_vec())?;
    }
    Ok(match random.len() {
        0 => "inputs: the files given".to_string(),
        _ => format!(
            "inputs: {} seeded random (seed {}: floats uniform in [-1, 1), ints in [0, 10), bools 50/50)",
            random.join(", "),
            opts.seed
        ),
    })
}

fn shape_text(shape: &[Dim]) -> String {
    let dims: Vec<String> = shape
        .iter()
        .map(|d| match d {
            Dim::Static(n) => n.to_string(),
            Dim::Symbolic(s) => s.clone(),
            Dim::Unknown => "?".into(),
        })
        .collect();
    format!("[{}]", dims.join(", "))
}

fn random_tensor(dtype: DType, shape: Vec<usize>, rng: &mut Rng) -> Result<TensorData, String> {
    let n: usize = shape.iter().product();
    match dtype.kind() {
        Kind::Float => {
            let values: Vec<f64> = (0..n).map(|_| rng.unit() * 2.0 - 1.0).collect();
            TensorData::from_f64s(dtype, shape, &values).ok_or_else(|| format!("no random values of {dtype}"))
        }
        Kind::Int | Kind::Bool => {
            let top = if dtype == DType::Bool { 2 } else { 10 };
            let values: Vec<u64> = (0..n).map(|_| rng.next() % top).collect();
            let size = dtype.size();
            let bytes = values.iter().flat_map(|v| v.to_le_bytes()[..size].to_vec()).collect();
            Ok(TensorData::new(dtype, shape, bytes))
        }
        Kind::String => Err("no random strings".into()),
    }
}

/// Runs the ONNX Runtime script: the outputs, and the candidates' values.
fn run_ort(
    opts: &CheckOptions,
    model: &Path,
    data: &Path,
    out: &Path,
    candidates: &[Candidate],
    work: &Path,
) -> Result<(), String> {
    let python = &opts.python;
    let probe = Command::new(python).args(["-c", "import onnxruntime, onnx, numpy"]).output();
    let works = probe.as_ref().is_ok_and(|o| o.status.success());
    if !works {
        let why = match &probe {
            Err(e) => format!("cannot run {}: {e}", python.display()),
            Ok(o) => String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("").to_string(),
        };
        let what =
            if opts.bisect { "--bisect compares with ONNX Runtime" } else { "some outputs have no --expected file" };
        return Err(format!(
            "{what}, and `{} -c \"import onnxruntime, onnx, numpy\"` fails ({why}): pip install onnxruntime onnx numpy, \
             or name a Python that has them with --python PATH",
            python.display()
        ));
    }
    let script = work.join("ort_check.py");
    write_if_changed(&script, include_str!("ort_check.py").as_bytes())?;
    let names = work.join("values.txt");
    let list: String = candidates.iter().map(|c| format!("{}\n", c.value)).collect();
    write_if_changed(&names, list.as_bytes())?;
    eprintln!("onnx2burn check: running ONNX Runtime ({})", python.display());
    let run = Command::new(python)
        .arg(&script)
        .arg(model)
        .arg(data)
        .arg(out)
        .arg(&names)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !run.status.success() {
        let stderr = String::from_utf8_lossy(&run.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
        return Err(format!("ONNX Runtime failed on the model: {}", tail.join("\n")));
    }
    Ok(())
}

/// One module of the generated program: the model through `#[onnx_model]` (as users import
/// it), and `run(data, out, device)` writing each of its `outputs` outputs as `.npy`.
fn module_source(module: &str, model: &Path, opts: &CheckOptions, graph: &Graph, outputs: usize) -> String {
    let mut options = vec![format!("{:?}", model.display().to_string())];
    if !opts.simplify {
        options.push("simplify = false".into());
    }
    if !opts.input_shapes.is_empty() {
        let list: Vec<String> = opts.input_shapes.iter().map(|s| format!("{:?}", s.to_string())).collect();
        options.push(format!("input_shapes = [{}]", list.join(", ")));
    }
    if !opts.dim_sizes.is_empty() {
        let list: Vec<String> = opts.dim_sizes.iter().map(|s| format!("{:?}", s.to_string())).collect();
        options.push(format!("dims = [{}]", list.join(", ")));
    }
    if !opts.custom_ops.is_empty() {
        let list: Vec<String> = opts.custom_ops.iter().map(|(op, f)| format!("{op:?} => crate::hooks::{f}")).collect();
        options.push(format!("custom_ops = [{}]", list.join(", ")));
    }
    let inputs: Vec<String> =
        (0..graph.inputs.len()).map(|j| format!("onnx_tests::input(data, {j}, device)")).collect();
    let names: Vec<String> = (0..outputs).map(|k| format!("o{k}")).collect();
    let pattern = if outputs == 1 { names[0].clone() } else { format!("({},)", names.join(", ")) };
    let saves: String =
        names.iter().enumerate().map(|(k, n)| format!("        crate::save(out, {k}, {n})?;\n")).collect();
    format!(
        r#"
mod {module} {{
    use burn_onnx::burn::tensor::Device;

    #[burn_onnx::onnx_model({options})]
    pub struct Model;

    pub fn run(data: &std::path::Path, out: &std::path::Path, device: &Device) -> Result<(), String> {{
        let model = Model::default();
        let {pattern} = model.forward({inputs});
{saves}        Ok(())
    }}
}}
"#,
        options = options.join(", "),
        inputs = inputs.join(", "),
    )
}

fn main_source(modules: &[String], hooks: Option<&Path>) -> String {
    let hooks = hooks.map_or(String::new(), |h| format!("#[path = {:?}]\nmod hooks;\n", h.display().to_string()));
    let names: Vec<&str> = ["plain", "exposed"].into_iter().take(modules.len()).collect();
    let runs: String =
        names.iter().map(|m| format!("        {m}::run(&data, &out.join({m:?}), &device)?;\n")).collect();
    format!(
        r#"// @generated by `onnx2burn check`: the model's generated code, run on the inputs in the
// folder given first, its outputs written as .npy into the folder given second.
#![allow(warnings)]
use burn_onnx::burn;
use std::io::Write;
{hooks}{modules}
/// Writes output `k` as `output_<k>.npy` (values that are no tensor are not written).
fn save<T: onnx_tests::Output>(out: &std::path::Path, k: usize, value: T) -> Result<(), String> {{
    match onnx_tests::Output::into_output(value) {{
        onnx_tests::Returned::Tensor(data) => {{
            write_npy(&out.join(format!("output_{{k}}.npy")), &data).map_err(|e| e.to_string())
        }}
        _ => Ok(()),
    }}
}}
{npy}
fn main() {{
    let mut args = std::env::args().skip(1);
    let (data, out) = (std::path::PathBuf::from(args.next().expect("data folder")), std::path::PathBuf::from(args.next().expect("output folder")));
    std::panic::set_hook(Box::new(|_| {{}}));
    let result = std::panic::catch_unwind(|| -> Result<(), String> {{
        let mut device = burn::tensor::Device::default();
        if std::env::var_os("ONNX2BURN_CHECK_INT64").is_some() {{
            device.configure(burn::tensor::IntDType::I64).map_err(|e| format!("64-bit ints: {{e:?}}"))?;
        }}
{runs}        Ok(())
    }});
    let message = match result {{
        Ok(Ok(())) => return,
        Ok(Err(e)) => e,
        Err(panic) => panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    }};
    println!("PANIC\t{{}}", message.replace(['\n', '\t'], " "));
    let _ = std::io::stdout().flush();
    std::process::exit(3);
}}
"#,
        modules = modules.concat(),
        npy = npy::write_npy_source(),
    )
}

/// `--bisect`: the candidates compared in execution order; the first that differs, with its
/// inputs' status.
fn bisect_report(
    opts: &CheckOptions,
    proto: &ModelProto,
    candidates: &[Candidate],
    ours: &Path,
    ort: &Path,
    outputs: usize,
    outputs_passed: bool,
) -> Result<String, String> {
    let mut text = String::new();
    let mut diffs: HashMap<&str, Result<Diff, &'static str>> = HashMap::new();
    let mut first: Option<(&Candidate, Diff)> = None;
    let mut later: Vec<String> = vec![];
    let mut differing = 0;
    let mut compared = 0;
    for (i, c) in candidates.iter().enumerate() {
        let (mine, theirs) = (ours.join(format!("output_{}.npy", outputs + i)), ort.join(format!("value_{i}.npy")));
        let result = match (mine.is_file(), theirs.is_file()) {
            (true, true) => Ok(compare(&npy::read_tensor(&mine)?, &npy::read_tensor(&theirs)?, opts.rtol, opts.atol)),
            (false, _) => Err("not a tensor in the generated code"),
            (true, false) => Err("ONNX Runtime gave no array"),
        };
        if let Ok(diff) = &result {
            compared += 1;
            if !diff.passed() {
                differing += 1;
                if first.is_none() {
                    first = Some((c, diff.clone()));
                } else if later.len() < 5 {
                    later.push(format!("`{}` ({}, {})", c.node, c.op_type, diff.summary()));
                }
            }
        }
        diffs.insert(c.value.as_str(), result);
    }
    let _ = writeln!(
        text,
        "\nbisect: {compared} of {} intermediate values compared with ONNX Runtime in execution order, {differing} differ \
         (the model imported with every intermediate exposed as an output{})",
        candidates.len(),
        if opts.simplify { ", so nothing is fused across them" } else { ", simplify off" }
    );
    let Some((c, diff)) = first else {
        let _ = writeln!(text, "no intermediate value differs");
        if !outputs_passed {
            let _ = writeln!(
                text,
                "the outputs do differ: then the difference comes from the import's simplification (fusions across \
                 values that --bisect exposes, which it cannot make there); try --no-simplify"
            );
        }
        return Ok(text);
    };
    let _ =
        writeln!(text, "first difference: node `{}` ({}), output `{}`: {}", c.node, c.op_type, c.value, diff.summary());
    let g = proto.graph.as_ref();
    let initializers: HashSet<&str> = g.map(|g| g.initializer.iter().map(|t| t.name()).collect()).unwrap_or_default();
    let graph_inputs: HashSet<&str> = g.map(|g| g.input.iter().map(|i| i.name()).collect()).unwrap_or_default();
    let node = g.and_then(|g| g.node.iter().find(|n| n.output.contains(&c.value)));
    let statuses: Vec<String> = node
        .map(|n| n.input.iter().filter(|i| !i.is_empty()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|input| {
            let status = match diffs.get(input.as_str()) {
                Some(Ok(d)) if d.passed() => format!("matches (max abs diff {})", sci(d.max_abs)),
                Some(Ok(d)) => format!("differs ({})", d.summary()),
                Some(Err(why)) => format!("not compared: {why}"),
                None if initializers.contains(input.as_str()) => "an initializer".into(),
                None if graph_inputs.contains(input.as_str()) => "a graph input (the same values for both)".into(),
                None => "a constant".into(),
            };
            format!("  input `{input}`: {status}")
        })
        .collect();
    let _ = writeln!(text, "{}", statuses.join("\n"));
    let inputs_match = statuses.iter().all(|s| !s.contains(": differs") && !s.contains(": not compared"));
    if inputs_match {
        let _ =
            writeln!(text, "  its inputs are within tolerance: the difference starts, or grows past tolerance, here");
    }
    if differing > 1 {
        let _ = writeln!(text, "then {} later value(s) differ, the first ones from nodes:", differing - 1);
        for line in &later {
            let _ = writeln!(text, "  {line}");
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_are_measured_against_the_tolerance() {
        let t = |v: &[f64]| TensorData::from_f64s(DType::F32, vec![v.len()], v).expect("f32");
        let d = compare(&t(&[1.0, 2.0, f64::NAN]), &t(&[1.0, 2.5, f64::NAN]), 1e-4, 1e-4);
        assert_eq!((d.beyond, d.elements, d.max_abs, d.max_rel), (1, 3, 0.5, 0.2));
        assert!(compare(&t(&[1.0, 2.0]), &t(&[1.0, 2.0001]), 1e-4, 1e-4).passed());
        assert!(compare(&t(&[1.0]), &t(&[1.0, 2.0]), 1e-4, 1e-4).mismatch.is_some());
        let scalar = TensorData::from_f64s(DType::F32, vec![], &[1.0]).expect("f32");
        assert!(compare(&scalar, &t(&[1.0]), 1e-4, 1e-4).mismatch.is_some(), "a rank differs");
    }

    #[test]
    fn the_seeded_values_do_not_change() {
        let mut rng = Rng(0);
        let t = random_tensor(DType::F32, vec![3], &mut rng).expect("f32");
        let again = random_tensor(DType::F32, vec![3], &mut Rng(0)).expect("f32");
        assert_eq!(t.to_f64s(), again.to_f64s());
        assert!(t.to_f64s().expect("resident").iter().all(|v| (-1.0..1.0).contains(v)));
        let ints = random_tensor(DType::I64, vec![4], &mut rng).expect("i64");
        assert!(ints.to_f64s().expect("resident").iter().all(|v| (0.0..10.0).contains(v)));
    }
}
