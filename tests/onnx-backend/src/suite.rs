//! The generated suite crate: one module per imported test (the code generator's output, or
//! `#[onnx_model]` on the model file, plus a `run` function feeding its data sets), and a
//! `main` that runs them one by one and prints one `RESULT` line each. Kept outside the
//! repository, it builds into the workspace's target folder so burn is compiled only once.

use crate::cases::Case;
use onnx_codegen::model::{default_impl, BpkPath, StructSpec, WeightsSource};
use onnx_codegen::{prelude, weights, CodegenError};
use onnx_ir::proto::{GraphProto, ModelProto, NodeProto};
use onnx_ir::{import, ImportOptions};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use prost::Message;
use quote::{format_ident, quote};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use onnx_harness::BURN_FEATURES;

/// The Burn backend the suite runs on (the bench always runs on flex).
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Backend {
    Flex,
    #[value(name = "ndarray")]
    NdArray,
    /// Burn's wgpu backend (a GPU, or Mesa's software Vulkan driver), see
    /// `scripts/wgpu_models.sh`.
    Wgpu,
    /// A device of Burn's remote backend: the suite binary serves a flex device on 127.0.0.1 in
    /// a second process (`--serve`), and each output must also equal, bit for bit, a local run
    /// through the same Burn flex ops. Always with 64-bit integers (as `--int64`): Burn 0.22.1's
    /// remote server cannot cast between integer types (its interpreter's `unreachable!()`), and
    /// int64 weights need no cast on a device whose integers are int64.
    Remote,
    /// Burn's CUDA backend (an NVIDIA GPU; `scripts/gpu_check.sh`). The suite then builds burn
    /// with the `cuda` feature, apart from the workspace's build.
    Cuda,
}

impl Backend {
    /// The name Burn's `Device::default()` reads from `BURN_DEVICE`.
    pub fn device_name(self) -> &'static str {
        match self {
            Backend::Flex => "flex",
            Backend::NdArray => "ndarray",
            Backend::Wgpu => "wgpu",
            Backend::Remote => "remote",
            Backend::Cuda => "cuda",
        }
    }
}

pub struct Suite {
    pub dir: PathBuf,
    pub repo: PathBuf,
    /// `(rtol, atol)` of float comparisons.
    pub tolerance: (f64, f64),
    /// Import through `#[onnx_model]` (as users do) rather than writing the generated code.
    pub via_macro: bool,
    /// Run the import-time optimisations (`simplify = false` must give the same outputs).
    pub simplify: bool,
    /// Top-level nodes per submodule (code generator mode only).
    pub part_nodes: usize,
    /// Build with `--release` (the benchmark) rather than the dev profile.
    pub release: bool,
    /// `cargo check` the suite instead of building it (`--check-only`).
    pub check_only: bool,
    /// The backend the tests run on.
    pub backend: Backend,
    /// The device's default int type set to int64 (`--int64`; `ONNX_BACKEND_INT64` for the suite).
    pub int64: bool,
    /// Instead of comparing outputs, check that one backward pass gives every float
    /// initializer of the file a non-zero gradient (`run_fn`).
    pub grad_check: bool,
    /// `--export-dir`: each model's module is exported back to ONNX (`burn_onnx_export`) on its
    /// first data set's inputs, into `<dir>/<test>/model.onnx`, or `error.txt` saying why not.
    pub export_dir: Option<PathBuf>,
}

/// What importing one test produced: its module, and facts for the report.
pub struct Generated {
    pub module: String,
    /// ONNX nodes, subgraphs included, and the default-domain opset.
    pub nodes: usize,
    pub opset: i64,
    /// Import, inference and code generation (the macro's work), in milliseconds.
    pub import_ms: f64,
    /// Float initializers of the file (what `--grad-check` counts).
    pub float_initializers: usize,
    /// Whether `forward` was split into submodules (more top-level nodes than `part_nodes`).
    pub split: bool,
    /// Whether the model may draw random values (see [`RandomDraws`]).
    pub random: RandomDraws,
}

impl Suite {
    /// Imports one test's model and writes its module; returns what it generated, or the
    /// import failure.
    pub fn generate_case(&self, case: &Case) -> Result<Generated, String> {
        let module = format!("case_{}", onnx_codegen::snake_case(&case.name));
        let bytes = std::fs::read(&case.model).map_err(|e| format!("cannot read {}: {e}", case.model.display()))?;
        let proto = ModelProto::decode(&bytes[..]).map_err(|e| e.to_string())?;
        let nodes = proto.graph.as_ref().map_or(0, GraphProto::node_count);
        let float_initializers = proto.graph.as_ref().map_or(0, float_initializers);
        let random = proto.graph.as_ref().map_or(RandomDraws::None, random_draws);
        let opset = onnx_ir::domain::default_opset(&proto);
        let started = Instant::now();
        let attempt = std::panic::catch_unwind(|| -> Result<(String, bool), String> {
            let options = ImportOptions {
                simplify: self.simplify,
                input_shapes: case.input_shapes.clone(),
                ..Default::default()
            };
            let graph = import(&bytes, options).map_err(|e| CodegenError::from(e).to_string())?;
            let lowered =
                onnx_codegen::model::lower_with(&graph, &[], Some(self.part_nodes)).map_err(|e| e.to_string())?;
            let proto_graph = proto.graph.as_ref().ok_or("the model has no graph")?;
            let run = self.run_fn(case, proto_graph, &graph, lowered.has_weights())?;
            let model = if self.via_macro {
                // What users write; the import above only reports errors and times.
                let path = case.model.display().to_string();
                let simplify = (!self.simplify).then(|| quote! { , simplify = false });
                let shapes = case.input_shapes.iter().map(ToString::to_string);
                let shapes = (!case.input_shapes.is_empty()).then(|| quote! { , input_shapes = [#(#shapes),*] });
                quote! {
                    use burn_onnx::burn::tensor::Device;
                    #[burn_onnx::onnx_model(#path #simplify #shapes)]
                    pub struct Model;
                }
            } else {
                self.generated_model(&module, &lowered).map_err(|e| e.to_string())?
            };
            Ok((quote! { #model #run }.to_string(), lowered.is_split()))
        });
        let import_ms = started.elapsed().as_secs_f64() * 1e3;
        let (code, split) = match attempt {
            Ok(result) => result?,
            Err(panic) => return Err(format!("importer panicked: {}", panic_message(&panic))),
        };
        write_if_changed(&self.dir.join("src").join("cases").join(format!("{module}.rs")), code.as_bytes())?;
        Ok(Generated { module, nodes, opset, import_ms, float_initializers, split, random })
    }

    /// The code generator's output for the model, weights in the suite's weights folder.
    fn generated_model(
        &self,
        module: &str,
        lowered: &onnx_codegen::model::Lowered,
    ) -> Result<TokenStream, CodegenError> {
        let source = if lowered.has_weights() {
            let bpk = self.dir.join("weights").join(format!("{module}.bpk"));
            let packed = weights::pack(&lowered.weights)?;
            write_if_changed(&bpk, &packed)
                .map_err(|message| CodegenError::Write { path: bpk.display().to_string(), message })?;
            WeightsSource::Embedded(BpkPath::Literal(bpk.display().to_string()))
        } else {
            WeightsSource::None
        };
        let model = Ident::new("Model", Span::call_site());
        let spec = StructSpec { name: &model, vis: quote! { pub }, attrs: quote! {} };
        let items = lowered.items(&spec, &source);
        let default = default_impl(&model, &source, lowered.has_weights());
        let prelude = prelude();
        Ok(quote! { #prelude #items #default })
    }

    /// `run(data sets, device)`: feeds every data set in order (a `feed` input from the
    /// previous outputs), compares outputs (and top-1 classes), and times data set 0's forward
    /// when ONNX Runtime's time is known. Returns the largest difference and that time.
    fn run_fn(
        &self,
        case: &Case,
        proto: &GraphProto,
        graph: &onnx_ir::Graph,
        has_weights: bool,
    ) -> Result<TokenStream, String> {
        let fed = match &case.feed {
            None => None,
            Some((output, input)) => {
                let inits: Vec<&str> = proto.initializer.iter().map(|t| t.name()).collect();
                let inputs = proto.input.iter().filter(|i| !inits.contains(&i.name()));
                match (
                    proto.output.iter().position(|o| o.name() == output),
                    inputs.map(|i| i.name()).position(|i| i == input),
                ) {
                    (Some(o), Some(i)) => Some((o, i)),
                    _ => {
                        return Err(format!(
                            "case.txt: `feed {output} {input}`: the model has no such output and input"
                        ))
                    }
                }
            }
        };
        let inputs = (0..graph.inputs.len()).map(|j| match fed {
            Some((_, i)) if i == j => quote! { fed.take().unwrap_or_else(|| onnx_tests::input(dir, #j, device)) },
            _ => quote! { onnx_tests::input(dir, #j, device) },
        });
        let declare_fed = fed.map(|_| quote! { let mut fed = None; });
        let keep_fed = match fed {
            Some((o, _)) if graph.outputs.len() > 1 => {
                let o = Literal::usize_unsuffixed(o);
                quote! { fed = Some(outputs.#o.clone()); }
            }
            Some(_) => quote! { fed = Some(outputs.clone()); },
            None => quote! {},
        };
        let top1 = case.top1.then(
            || quote! { onnx_tests::check_top1(dir, &outputs).map_err(|e| onnx_tests::in_data_set(sets, k, e))?; },
        );
        // Setup (the inputs of a data set folder, untimed) and one timed forward with its
        // outputs read back: for the report's time and for the benchmark.
        let args: Vec<Ident> = (0..graph.inputs.len()).map(|j| format_ident!("input_{j}")).collect();
        let loads = (0..graph.inputs.len()).map(|j| quote! { onnx_tests::input(dir, #j, device) });
        let load = quote! { let load = |dir: &std::path::Path| (#(#loads,)*); };
        let returned = outputs_list(quote! { model.forward(#(#args),*) }, graph.outputs.len());
        let forward = quote! { |(#(#args,)*)| #returned };
        let timed = if case.ort_ms.is_some() {
            quote! {{ #load Some(onnx_tests::median_ms(3, || load(sets[0]), #forward)) }}
        } else {
            quote! { None }
        };
        if self.grad_check {
            return Ok(Self::grad_check_fn(proto, &args, graph.outputs.len()));
        }
        let (rtol, atol) = self.tolerance;
        let export = self.export_code(case, graph, &args, &load);
        let listed = outputs_list(quote! { outputs }, graph.outputs.len());
        let remote = (self.backend == Backend::Remote)
            .then(|| Self::remote_check(case, graph, fed, has_weights, &forward, &load));
        let (remote_setup, remote_compare, remote_times) = remote.unwrap_or_default();
        Ok(quote! {
            /// Times `iterations` forwards on the data set in `dir` (inputs built untimed, outputs
            /// read back to the host), after one warm-up forward; milliseconds each.
            pub fn bench(dir: &std::path::Path, device: &Device, iterations: usize) -> Vec<f64> {
                let model = Model::default();
                #load
                onnx_tests::times_ms(iterations + 1, || load(dir), #forward).split_off(1)
            }

            pub fn run(sets: &[&std::path::Path], device: &Device) -> Result<(f64, Option<f64>), String> {
                let model = Model::default();
                let tolerance = onnx_tests::Tolerance { rtol: #rtol, atol: #atol };
                let mut max_diff = 0.0f64;
                #declare_fed
                #remote_setup
                for (k, &dir) in sets.iter().enumerate() {
                    let outputs = model.forward(#(#inputs),*);
                    #keep_fed
                    let outputs = #listed;
                    #remote_compare
                    #top1
                    let diff = onnx_tests::compare_outputs(dir, outputs, tolerance).map_err(|e| onnx_tests::in_data_set(sets, k, e))?;
                    max_diff = max_diff.max(diff);
                }
                let forward_ms = { #timed };
                #remote_times
                #export
                Ok((max_diff, forward_ms))
            }
        })
    }

    /// `--backend remote`: the pieces `run` adds. Setup: the model on a local flex device. Per
    /// data set: the same forward there (its own fed-back value) with burn_onnx's flex kernels
    /// off, so that every op is Burn's own flex op as on the server; its outputs must equal the
    /// remote ones bit for bit. After: data set 0's forward timed on a local flex device, with
    /// and without burn_onnx's kernels, printed beside the remote time.
    fn remote_check(
        case: &Case,
        graph: &onnx_ir::Graph,
        fed: Option<(usize, usize)>,
        has_weights: bool,
        forward: &TokenStream,
        load: &TokenStream,
    ) -> (TokenStream, TokenStream, TokenStream) {
        let load_on = |device: TokenStream| {
            if has_weights {
                quote! { Model::from_embedded(&#device) }
            } else {
                quote! { Model::new(&#device) }
            }
        };
        let reference_model = load_on(quote! { reference });
        let declare_fed = fed.map(|_| quote! { let mut reference_fed = None; });
        let setup = quote! {
            // The remote device's integer type (64-bit, see `Backend::Remote`) on the reference too.
            let mut reference = Device::flex();
            let int_dtype = device.settings().int_dtype;
            let _ = reference.configure(int_dtype);
            if reference.settings().int_dtype != int_dtype {
                return Err(format!("the local reference device cannot take the remote's int type {int_dtype:?}"));
            }
            let reference_model = #reference_model;
            #declare_fed
        };
        let inputs = (0..graph.inputs.len()).map(|j| match fed {
            Some((_, i)) if i == j => {
                quote! { reference_fed.take().unwrap_or_else(|| onnx_tests::input(dir, #j, &reference)) }
            }
            _ => quote! { onnx_tests::input(dir, #j, &reference) },
        });
        let keep = match fed {
            Some((o, _)) if graph.outputs.len() > 1 => {
                let o = Literal::usize_unsuffixed(o);
                quote! { reference_fed = Some(reference_outputs.#o.clone()); }
            }
            Some(_) => quote! { reference_fed = Some(reference_outputs.clone()); },
            None => quote! {},
        };
        let listed = outputs_list(quote! { reference_outputs }, graph.outputs.len());
        let compare = quote! {
            burn_onnx::set_flex_kernels(false);
            let reference_outputs = reference_model.forward(#(#inputs),*);
            #keep
            let reference_outputs = #listed;
            burn_onnx::set_flex_kernels(true);
            onnx_tests::identical(&outputs, &reference_outputs)
                .map_err(|e| onnx_tests::in_data_set(sets, k, format!("remote vs local: {e}")))?;
        };
        let local_model = load_on(quote! { local });
        let name = &case.name;
        let times = quote! {
            if let Some(remote_ms) = forward_ms {
                let local = Device::flex();
                let (device, model) = (&local, #local_model);
                #load
                let local_ms = onnx_tests::median_ms(3, || load(sets[0]), #forward);
                burn_onnx::set_flex_kernels(false);
                let burn_ops_ms = onnx_tests::median_ms(3, || load(sets[0]), #forward);
                burn_onnx::set_flex_kernels(true);
                println!(
                    "NOTE\t{}: forward of data set 0, median of 3: local flex {local_ms:.2} ms (burn_onnx's kernels), {burn_ops_ms:.2} ms (Burn's ops), remote {remote_ms:.2} ms",
                    #name
                );
            }
        };
        (setup, compare, times)
    }

    /// `run` of `--grad-check`: on an Autodiff device over the run's backend, one forward on data
    /// set 0, the sum of squares of the float outputs, one backward pass; it fails unless the
    /// model has one float parameter per float initializer of the file and each gets a
    /// non-zero gradient (fine-tuning trains the whole model).
    fn grad_check_fn(proto: &GraphProto, args: &[Ident], outputs: usize) -> TokenStream {
        let initializers = float_initializers(proto);
        let (pattern, names) = outputs_pattern(outputs);
        // The sum of the outputs' terms (`None` without a float output).
        let loss = quote! {{
            let #pattern = model.forward(#(#args),*);
            [#(onnx_tests::Output::loss_term(#names)),*].into_iter().flatten().reduce(|sum, term| sum + term)
        }};
        let loads = (0..args.len()).map(|j| quote! { onnx_tests::input(sets[0], #j, &device) });
        quote! {
            pub fn bench(_dir: &std::path::Path, _device: &Device, _iterations: usize) -> Vec<f64> {
                unreachable!("--grad-check does not bench")
            }

            pub fn run(sets: &[&std::path::Path], device: &Device) -> Result<(f64, Option<f64>), String> {
                let device = device.clone().autodiff();
                let model = Model::from_embedded(&device);
                let (#(#args,)*) = (#(#loads,)*);
                let loss = #loss.ok_or("the model has no float output")?;
                let (params, missing) = onnx_tests::gradient_check(&model, loss);
                if params != #initializers || !missing.is_empty() {
                    return Err(format!(
                        "{params} float parameters for the file's {} float initializers; without a non-zero gradient: [{}]",
                        #initializers,
                        missing.join(", ")
                    ));
                }
                Ok((0.0, None))
            }
        }
    }

    /// With `--export-dir`: the module exported on data set 0's inputs (after the comparison,
    /// whose outcome it does not change), written as `<dir>/<test>/model.onnx`, or the reason it
    /// cannot be as `error.txt`. Rank-0 inputs and outputs are plain Rust values in `forward`,
    /// which a recorded graph cannot take or return.
    fn export_code(&self, case: &Case, graph: &onnx_ir::Graph, args: &[Ident], load: &TokenStream) -> TokenStream {
        let Some(root) = &self.export_dir else { return quote! {} };
        let folder = root.join(&case.name).display().to_string();
        let scalar = |ids: &[onnx_ir::ValueId]| ids.iter().position(|&id| graph.values[id].ty.rank() == 0);
        let export = match (scalar(&graph.inputs), scalar(&graph.outputs)) {
            (Some(k), _) => {
                let reason = format!("input {k} is rank 0, a plain Rust value of forward, not a tensor");
                quote! { Err::<burn_onnx_export::ExportedModel, String>(#reason.to_string()) }
            }
            (_, Some(k)) => {
                let reason = format!("output {k} is rank 0, a plain Rust value of forward, not a tensor");
                quote! { Err::<burn_onnx_export::ExportedModel, String>(#reason.to_string()) }
            }
            (None, None) => quote! {{
                #load
                burn_onnx_export::OnnxExporter::new()
                    .export(&model, load(sets[0]), |model: &Model, (#(#args,)*)| model.forward(#(#args),*))
                    .map_err(|e| e.to_string())
            }},
        };
        quote! {
            let folder = std::path::Path::new(#folder);
            let written = std::fs::create_dir_all(folder).map_err(|e| e.to_string()).and_then(|_| match #export {
                Ok(exported) => exported.save(folder.join("model.onnx")).map_err(|e| e.to_string()),
                Err(reason) => std::fs::write(folder.join("error.txt"), reason).map_err(|e| e.to_string()),
            });
            written.map_err(|e| format!("export: {e}"))?;
        }
    }

    /// The built suite's executable.
    pub fn binary(&self, target: &std::path::Path) -> PathBuf {
        self.scratch(target).binary()
    }

    /// The suite's throwaway crate, built into `target`.
    pub fn scratch(&self, target: &Path) -> onnx_harness::ScratchCrate {
        onnx_harness::ScratchCrate {
            dir: self.dir.clone(),
            name: "onnx-backend-suite".into(),
            repo: self.repo.clone(),
            target: target.to_path_buf(),
            release: self.release,
            check_only: self.check_only,
            cuda: self.backend == Backend::Cuda,
        }
    }

    /// Prepares the crate folder (manifest, lock file copy: see `onnx_harness`). Files of the
    /// previous run stay until `write_main` removes the stale ones: a file rewritten with the
    /// same bytes keeps its time stamp, so running the same tests again (on another backend)
    /// rebuilds nothing.
    pub fn init(&self, target: &Path) -> Result<(), String> {
        for sub in ["src/cases", "weights"] {
            std::fs::create_dir_all(self.dir.join(sub)).map_err(|e| e.to_string())?;
        }
        self.scratch(target).init()
    }

    /// Removes the case modules and weight files that `modules` does not name.
    fn remove_stale(&self, modules: &[(String, String)]) -> Result<(), String> {
        let keep: std::collections::BTreeSet<&str> = modules.iter().map(|(_, m)| m.as_str()).collect();
        for (folder, extension) in [("src/cases", "rs"), ("weights", "bpk")] {
            let entries = std::fs::read_dir(self.dir.join(folder)).map_err(|e| e.to_string())?;
            for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                if path.extension().is_some_and(|e| e == extension) && !keep.contains(stem.as_str()) {
                    std::fs::remove_file(&path).map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
                }
            }
        }
        Ok(())
    }

    /// Writes `main.rs`: it runs the `(test, data set folder)` lines of the manifest file given
    /// as its first argument, from the line given as its second.
    pub fn write_main(&self, modules: &[(String, String)]) -> Result<(), String> {
        self.remove_stale(modules)?;
        let mods = modules.iter().map(|(_, m)| format_ident!("{m}"));
        let entries = modules.iter().map(|(name, m)| {
            let m = format_ident!("{m}");
            quote! { (#name, cases::#m::run as Runner, cases::#m::bench as Bench) }
        });
        let code = quote! {
            #![allow(warnings)]
            use burn_onnx::burn::tensor::Device;
            use std::io::Write;
            use std::path::Path;

            mod cases {
                #(pub mod #mods;)*
            }

            /// The largest difference, and data set 0's forward time in ms when measured.
            type Runner = fn(&[&Path], &Device) -> Result<(f64, Option<f64>), String>;
            /// Forward times in ms on one data set folder.
            type Bench = fn(&Path, &Device, usize) -> Vec<f64>;

            const TESTS: &[(&str, Runner, Bench)] = &[#(#entries),*];

            fn one_line(s: &str) -> String {
                s.replace(['\n', '\t', '\r'], " ")
            }

            /// `--bench NAME DATA_SET ITERATIONS`: prints `TIMES\t<ms>\t<ms>...`.
            fn bench(mut args: impl Iterator<Item = String>) {
                let usage = "usage: suite --bench <test> <data set folder> <iterations>";
                let (name, dir, iterations) = (args.next().expect(usage), args.next().expect(usage), args.next().and_then(|n| n.parse().ok()).expect(usage));
                let (_, _, bench) = TESTS.iter().find(|(n, _, _)| *n == name).expect("no such test");
                let times = bench(Path::new(&dir), &Device::flex(), iterations);
                println!("TIMES\t{}", times.iter().map(|t| format!("{t:.4}")).collect::<Vec<_>>().join("\t"));
            }

            /// `--serve`: a Burn remote server hosting one flex device over a WebSocket on
            /// 127.0.0.1 (a port the OS picks, printed as `ws://127.0.0.1:<port>`), until stdin
            /// is closed (`--backend remote`: the runner holds it).
            fn serve() {
                use std::io::Read;
                let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
                println!("ws://{}", listener.local_addr().expect("the bound address"));
                let _ = std::io::stdout().flush();
                std::thread::spawn(move || {
                    let served = burn::server::RemoteServer::new([Device::flex()])
                        .serve(burn::server::WebSocketTransport::from_listener(listener));
                    std::process::exit(if served.is_ok() { 0 } else { 1 });
                });
                let mut sink = [0u8; 64];
                while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
            }

            fn main() {
                let mut args = std::env::args().skip(1).peekable();
                if args.peek().map(String::as_str) == Some("--bench") {
                    return bench(args.skip(1));
                }
                if args.peek().map(String::as_str) == Some("--serve") {
                    return serve();
                }
                let manifest = std::fs::read_to_string(args.next().expect("usage: suite <manifest> [skip]")).expect("manifest");
                let skip: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                std::panic::set_hook(Box::new(|_| {}));
                // The runner names the backend in `BURN_DEVICE`; `--int64` asks for 64-bit ints.
                let mut device = Device::default();
                if std::env::var_os("ONNX_BACKEND_INT64").is_some() {
                    device.configure(burn::tensor::IntDType::I64).expect("the int type is set before any tensor");
                }
                let mut out = std::io::stdout();
                for line in manifest.lines().skip(skip) {
                    let mut fields = line.split('\t');
                    let Some(name) = fields.next() else { continue };
                    let sets: Vec<&Path> = fields.map(Path::new).collect();
                    let Some((_, run, _)) = TESTS.iter().find(|(n, _, _)| *n == name) else { continue };
                    let _ = writeln!(out, "START\t{name}");
                    let _ = out.flush();
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&sets, &device)));
                    let line = match result {
                        Ok(Ok((diff, forward_ms))) => format!("pass\t{diff:e}\t{}", forward_ms.map_or("-".to_string(), |ms| format!("{ms:.3}"))),
                        Ok(Err(e)) => format!("mismatch\t{}\t-", one_line(&e)),
                        Err(panic) => {
                            let message = panic
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_default();
                            format!("runtime-error\tpanic: {}\t-", one_line(&message))
                        }
                    };
                    let _ = writeln!(out, "RESULT\t{name}\t{line}");
                    let _ = out.flush();
                }
            }
        };
        write_if_changed(&self.dir.join("src").join("main.rs"), code.to_string().as_bytes())
    }
}

use onnx_harness::write_if_changed;

/// Whether a model's outputs are random draws, which no two generators agree on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RandomDraws {
    /// No node draws.
    None,
    /// A random op: a match with the expected values is chance.
    Always,
    /// A Dropout whose training_mode (and ratio) are inputs: random when the data set asks
    /// for training with a non-zero ratio, exact otherwise.
    Dropout,
}

fn random_draws(graph: &GraphProto) -> RandomDraws {
    const RANDOM: [&str; 6] =
        ["RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Bernoulli", "Multinomial"];
    let training_input = |n: &NodeProto| n.input.get(2).is_some_and(|t| !t.is_empty());
    if graph.node.iter().any(|n| RANDOM.contains(&n.op_type())) {
        RandomDraws::Always
    } else if graph.node.iter().any(|n| n.op_type() == "Dropout" && training_input(n)) {
        RandomDraws::Dropout
    } else {
        RandomDraws::None
    }
}

/// The pattern that takes apart what `forward` returns for `count` outputs (one value, or a
/// tuple of them), and its names. Destructured in the generated code, so a model may have any
/// number of outputs (a trait over tuples stops at some size).
fn outputs_pattern(count: usize) -> (TokenStream, Vec<Ident>) {
    let names: Vec<Ident> = (0..count).map(|o| format_ident!("output_{o}")).collect();
    let pattern = if count == 1 {
        quote! { #(#names)* }
    } else {
        quote! { (#(#names,)*) }
    };
    (pattern, names)
}

/// `value`, what `forward` returned for `count` outputs, as the list the comparison reads.
fn outputs_list(value: TokenStream, count: usize) -> TokenStream {
    let (pattern, names) = outputs_pattern(count);
    quote! {{
        let #pattern = #value;
        vec![#(onnx_tests::Output::into_output(#names)),*]
    }}
}

/// The initializers of a float type (f32, f64, f16, bf16): what `--grad-check` expects to train.
fn float_initializers(graph: &GraphProto) -> usize {
    use onnx_ir::proto::tensor_proto::DataType;
    let floats = [DataType::Float, DataType::Double, DataType::Float16, DataType::Bfloat16].map(|t| t as i32);
    graph.initializer.iter().filter(|t| t.data_type.is_some_and(|d| floats.contains(&d))).count()
}

pub fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
