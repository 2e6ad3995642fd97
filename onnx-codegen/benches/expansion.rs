//! What `#[onnx_model]` costs inside rustc (SPEC section 6), measured rather than asserted:
//! a first expansion (import, inference, code generation, weights packed and written), a
//! cached re-expansion (what `cargo check` and rust-analyzer do on an unchanged model), and
//! the process's peak memory, for synthetic models built here:
//!
//! - `resnet50`: ResNet-50's exact topology (53 Conv + BatchNorm, 16 residual Adds, 25.6 M
//!   parameters as seeded pseudo-random floats, ~100 MB of weights);
//! - `graph28k`: 28,000 small nodes (MatMul, Add, Relu chains), the size of a diffusion UNet.
//!
//! ```text
//! cargo bench -p onnx-codegen --bench expansion              # optimised, as the README's profile
//! cargo test -p onnx-codegen --bench expansion               # tiny sizes: checks it runs
//! ```
//! Each case runs in a child process of its own so that peak memory is that case's.

use onnx_codegen::{expand, Request, WeightsMode};
use onnx_ir::proto::tensor_shape_proto::{dimension::Value as DimValue, Dimension};
use onnx_ir::proto::*;
use prost::Message;
use quote::{format_ident, quote};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Seeded floats in [-0.05, 0.05) as raw little-endian bytes (xorshift; no dependency).
fn weights(count: usize, seed: &mut u64) -> Vec<u8> {
    (0..count)
        .flat_map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            ((*seed >> 40) as f32 / (1u64 << 24) as f32 * 0.1 - 0.05).to_le_bytes()
        })
        .collect()
}

fn float_value(name: &str, dims: &[i64]) -> ValueInfoProto {
    let dim = dims.iter().map(|&d| Dimension { value: Some(DimValue::DimValue(d)), ..Default::default() }).collect();
    let tensor_type = type_proto::Tensor { elem_type: Some(1), shape: Some(TensorShapeProto { dim }) };
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto { value: Some(type_proto::Value::TensorType(tensor_type)), ..Default::default() }),
        ..Default::default()
    }
}

fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_type::INTS),
        ints: v.to_vec(),
        ..Default::default()
    }
}

/// Accumulates nodes and initializers, naming values in order.
#[derive(Default)]
struct Builder {
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
    seed: u64,
    next: usize,
}

impl Builder {
    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}_{}", self.next)
    }

    fn weight(&mut self, dims: &[i64]) -> String {
        let name = self.fresh("w");
        let count = dims.iter().product::<i64>() as usize;
        let raw_data = weights(count, &mut self.seed);
        self.initializers.push(TensorProto {
            name: Some(name.clone()),
            data_type: Some(1),
            dims: dims.to_vec(),
            raw_data: Some(raw_data),
            ..Default::default()
        });
        name
    }

    fn node(&mut self, op: &str, inputs: Vec<String>, attribute: Vec<AttributeProto>) -> String {
        let output = self.fresh(&op.to_lowercase());
        self.nodes.push(NodeProto {
            op_type: Some(op.into()),
            name: Some(output.clone()),
            input: inputs,
            output: vec![output.clone()],
            attribute,
            ..Default::default()
        });
        output
    }

    fn conv_bn(&mut self, x: String, cin: i64, cout: i64, kernel: i64, stride: i64) -> String {
        let w = self.weight(&[cout, cin, kernel, kernel]);
        let pad = kernel / 2;
        let attrs = vec![
            ints("kernel_shape", &[kernel, kernel]),
            ints("strides", &[stride, stride]),
            ints("pads", &[pad, pad, pad, pad]),
        ];
        let conv = self.node("Conv", vec![x, w], attrs);
        let bn: Vec<String> = (0..4).map(|_| self.weight(&[cout])).collect();
        self.node("BatchNormalization", std::iter::once(conv).chain(bn).collect(), vec![])
    }

    fn model(self, input: ValueInfoProto, output: String) -> Vec<u8> {
        let graph = GraphProto {
            node: self.nodes,
            initializer: self.initializers,
            input: vec![input],
            output: vec![ValueInfoProto { name: Some(output), ..Default::default() }],
            ..Default::default()
        };
        let opset = OperatorSetIdProto { domain: Some(String::new()), version: Some(17) };
        ModelProto { ir_version: Some(8), opset_import: vec![opset], graph: Some(graph), ..Default::default() }
            .encode_to_vec()
    }
}

/// ResNet-50 (or, with `smoke`, its first stage only).
fn resnet50(smoke: bool) -> Vec<u8> {
    let mut b = Builder { seed: 0x9e37_79b9_7f4a_7c15, ..Default::default() };
    let stem = b.conv_bn("x".into(), 3, 64, 7, 2);
    let stem = b.node("Relu", vec![stem], vec![]);
    let mut x = b.node(
        "MaxPool",
        vec![stem],
        vec![ints("kernel_shape", &[3, 3]), ints("strides", &[2, 2]), ints("pads", &[1, 1, 1, 1])],
    );
    let stages: &[(usize, i64, i64)] =
        if smoke { &[(1, 64, 1)] } else { &[(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)] };
    let mut channels = 64;
    for &(blocks, width, stride) in stages {
        for block in 0..blocks {
            let s = if block == 0 { stride } else { 1 };
            let a = b.conv_bn(x.clone(), channels, width, 1, 1);
            let a = b.node("Relu", vec![a], vec![]);
            let a = b.conv_bn(a, width, width, 3, s);
            let a = b.node("Relu", vec![a], vec![]);
            let a = b.conv_bn(a, width, 4 * width, 1, 1);
            let shortcut = if block == 0 { b.conv_bn(x.clone(), channels, 4 * width, 1, s) } else { x.clone() };
            let sum = b.node("Add", vec![a, shortcut], vec![]);
            x = b.node("Relu", vec![sum], vec![]);
            channels = 4 * width;
        }
    }
    let pooled = b.node("GlobalAveragePool", vec![x], vec![]);
    let flat = b.node("Flatten", vec![pooled], vec![]);
    let (w, bias) = (b.weight(&[1000, channels]), b.weight(&[1000]));
    let transposed = AttributeProto {
        name: Some("transB".into()),
        r#type: Some(attribute_type::INT),
        i: Some(1),
        ..Default::default()
    };
    let logits = b.node("Gemm", vec![flat, w, bias], vec![transposed]);
    b.model(float_value("x", &[1, 3, 224, 224]), logits)
}

/// `nodes` nodes: MatMul by a 16x16 weight, Add a bias, Relu, repeated.
fn long_chain(nodes: usize) -> Vec<u8> {
    let mut b = Builder { seed: 0x2545_f491_4f6c_dd1d, ..Default::default() };
    let mut x = "x".to_string();
    for _ in 0..nodes / 3 {
        let w = b.weight(&[16, 16]);
        let product = b.node("MatMul", vec![x, w], vec![]);
        let bias = b.weight(&[16]);
        let sum = b.node("Add", vec![product, bias], vec![]);
        x = b.node("Relu", vec![sum], vec![]);
    }
    b.model(float_value("x", &[1, 16]), x)
}

/// Peak resident memory of this process in MB (Linux), if known.
fn peak_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 =
        status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb / 1024.0)
}

/// Child process: expands one model twice (fresh cache, then cached) and prints
/// `first_ms cached_ms peak_mb nodes model_mb`.
fn measure(case: &str, smoke: bool) -> Result<(), String> {
    let bytes = match case {
        "resnet50" => resnet50(smoke),
        "graph28k" => long_chain(if smoke { 300 } else { 28_000 }),
        other => return Err(format!("unknown case {other}")),
    };
    let nodes = ModelProto::decode(&bytes[..]).map_err(|e| e.to_string())?.graph.map_or(0, |g| g.node.len());
    let dir = std::env::temp_dir().join(format!("burn-onnx-bench-{case}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("model.onnx"), &bytes).map_err(|e| e.to_string())?;
    let request = Request {
        manifest_dir: dir.clone(),
        model: "model.onnx".into(),
        weights: Some(WeightsMode::Embed),
        simplify: true,
        partition: true,
        dump: None,
        name: format_ident!("Model"),
        vis: quote! { pub },
        attrs: quote! {},
        input_shapes: vec![],
        dim_sizes: vec![],
        hooks: vec![],
    };
    let timed = || {
        let start = Instant::now();
        expand(&request).map(|_| start.elapsed().as_secs_f64() * 1e3).map_err(|e| e.to_string())
    };
    let (first, cached) = (timed()?, timed()?);
    let _ = std::fs::remove_dir_all(&dir);
    println!("{first:.1} {cached:.2} {:.0} {nodes} {:.1}", peak_mb().unwrap_or(f64::NAN), bytes.len() as f64 / 1e6);
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`; `cargo test` runs it at smoke size.
    let smoke = !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--smoke");
    if let Some(i) = args.iter().position(|a| a == "--case") {
        if let Err(e) = measure(args.get(i + 1).map_or("", String::as_str), smoke) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    println!(
        "{:<10} {:>6} {:>9} {:>15} {:>15} {:>13}",
        "model", "nodes", "model MB", "first expansion", "cached", "peak memory"
    );
    let exe = std::env::current_exe().expect("the bench binary's path");
    for case in ["resnet50", "graph28k"] {
        let mut child = Command::new(&exe);
        child.args(["--case", case]).env("CARGO_TARGET_DIR", Path::new("target"));
        child.arg(if smoke { "--smoke" } else { "--bench" });
        let output = child.output().expect("the bench binary runs");
        let line = String::from_utf8_lossy(&output.stdout);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [first, cached, peak, nodes, size] = fields[..] else {
            eprintln!("{case}: {}", String::from_utf8_lossy(&output.stderr));
            std::process::exit(1);
        };
        println!(
            "{case:<10} {nodes:>6} {size:>9} {:>15} {:>15} {:>13}",
            format!("{first} ms"),
            format!("{cached} ms"),
            format!("{peak} MB")
        );
    }
}
