//! The generated suite crate: one module per imported test (code from the code generator plus
//! a `run` function feeding `test_data_set_0`), and a `main` that runs them one by one and
//! prints one `RESULT` line each. Kept outside the repository, it builds into the workspace's
//! target folder so the dependency graph (burn) is compiled only once.

use onnx_codegen::model::{default_impl, BpkPath, StructSpec, WeightsSource};
use onnx_codegen::{prelude, weights, CodegenError};
use onnx_ir::{import, ImportOptions};
use proc_macro2::{Ident, Span};
use quote::{format_ident, quote};
use std::path::{Path, PathBuf};

pub struct Suite {
    pub dir: PathBuf,
    pub repo: PathBuf,
    /// `(rtol, atol)` of float comparisons.
    pub tolerance: (f64, f64),
}

impl Suite {
    /// Imports one test's model and writes its module; returns the module name, or the
    /// import failure.
    pub fn generate_case(&self, name: &str, model_path: &Path) -> Result<String, String> {
        let module = format!("case_{}", onnx_codegen::snake_case(name));
        let bytes = std::fs::read(model_path).map_err(|e| format!("cannot read {}: {e}", model_path.display()))?;
        let attempt = std::panic::catch_unwind(|| -> Result<String, CodegenError> {
            let graph = import(&bytes, ImportOptions::default())?;
            let lowered = onnx_codegen::model::lower(&graph)?;
            let source = if lowered.has_weights() {
                let bpk = self.dir.join("weights").join(format!("{module}.bpk"));
                let packed = weights::pack(&lowered.weights)?;
                std::fs::write(&bpk, packed).map_err(|e| CodegenError::Write { path: bpk.display().to_string(), message: e.to_string() })?;
                WeightsSource::Embedded(BpkPath::Literal(bpk.display().to_string()))
            } else {
                WeightsSource::None
            };
            let model = Ident::new("Model", Span::call_site());
            let spec = StructSpec { name: &model, vis: quote! { pub }, attrs: quote! {} };
            let items = lowered.items(&spec, &source);
            let default = default_impl(&model, &source, lowered.has_weights());
            let inputs = (0..graph.inputs.len()).map(|i| quote! { onnx_tests::input(dir, #i, device) });
            let prelude = prelude();
            let (rtol, atol) = self.tolerance;
            let tokens = quote! {
                #prelude
                #items
                #default
                pub fn run(dir: &std::path::Path, device: &Device) -> Result<f64, String> {
                    let _ = device;
                    let model = Model::default();
                    let outputs = model.forward(#(#inputs),*);
                    let tolerance = onnx_tests::Tolerance { rtol: #rtol, atol: #atol };
                    onnx_tests::compare_outputs(dir, onnx_tests::Outputs::into_outputs(outputs), tolerance)
                }
            };
            Ok(tokens.to_string())
        });
        let code = match attempt {
            Ok(result) => result.map_err(|e| e.to_string())?,
            Err(panic) => return Err(format!("importer panicked: {}", panic_message(&panic))),
        };
        std::fs::write(self.dir.join("src").join("cases").join(format!("{module}.rs")), code).map_err(|e| e.to_string())?;
        Ok(module)
    }

    /// Prepares the crate folder (manifest, lock file copy, empty cases).
    pub fn init(&self) -> Result<(), String> {
        let _ = std::fs::remove_dir_all(self.dir.join("src"));
        let _ = std::fs::remove_dir_all(self.dir.join("weights"));
        for sub in ["src/cases", "weights"] {
            std::fs::create_dir_all(self.dir.join(sub)).map_err(|e| e.to_string())?;
        }
        let repo = self.repo.display();
        let manifest = format!(
            r#"[package]
name = "onnx-backend-suite"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
burn = {{ version = "=0.22.1", default-features = false, features = ["std", "flex"] }}
burn-onnx = {{ path = "{repo}/runtime-support" }}
onnx-tests = {{ path = "{repo}/tests" }}

# Same profile as the main workspace, so the dependencies built there are reused.
[profile.dev.package."*"]
opt-level = 3

[profile.dev]
debug = "line-tables-only"
"#
        );
        std::fs::write(self.dir.join("Cargo.toml"), manifest).map_err(|e| e.to_string())?;
        std::fs::copy(self.repo.join("Cargo.lock"), self.dir.join("Cargo.lock")).map_err(|e| e.to_string())?;
        Ok(())
    }

    /// Writes `main.rs`: it runs the `(test, data set folder)` lines of the manifest file given
    /// as its first argument, from the line given as its second.
    pub fn write_main(&self, modules: &[(String, String)]) -> Result<(), String> {
        let mods = modules.iter().map(|(_, m)| format_ident!("{m}"));
        let entries = modules.iter().map(|(name, m)| {
            let m = format_ident!("{m}");
            quote! { (#name, cases::#m::run as Runner) }
        });
        let code = quote! {
            #![allow(warnings)]
            use burn_onnx::burn::tensor::Device;
            use std::io::Write;
            use std::path::Path;

            mod cases {
                #(pub mod #mods;)*
            }

            type Runner = fn(&Path, &Device) -> Result<f64, String>;

            const TESTS: &[(&str, Runner)] = &[#(#entries),*];

            fn one_line(s: &str) -> String {
                s.replace(['\n', '\t', '\r'], " ")
            }

            fn main() {
                let mut args = std::env::args().skip(1);
                let manifest = std::fs::read_to_string(args.next().expect("usage: suite <manifest> [skip]")).expect("manifest");
                let skip: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                std::panic::set_hook(Box::new(|_| {}));
                let device = Device::flex();
                let mut out = std::io::stdout();
                for line in manifest.lines().skip(skip) {
                    let Some((name, dir)) = line.split_once('\t') else { continue };
                    let Some((_, run)) = TESTS.iter().find(|(n, _)| *n == name) else { continue };
                    let _ = writeln!(out, "START\t{name}");
                    let _ = out.flush();
                    let started = std::time::Instant::now();
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(Path::new(dir), &device)));
                    let ms = started.elapsed().as_secs_f64() * 1e3;
                    let line = match result {
                        Ok(Ok(diff)) => format!("pass\t{diff:e}"),
                        Ok(Err(e)) => format!("mismatch\t{}", one_line(&e)),
                        Err(panic) => {
                            let message = panic
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_default();
                            format!("runtime-error\tpanic: {}", one_line(&message))
                        }
                    };
                    let _ = writeln!(out, "RESULT\t{name}\t{line}\t{ms:.1}");
                    let _ = out.flush();
                }
            }
        };
        std::fs::write(self.dir.join("src").join("main.rs"), code.to_string()).map_err(|e| e.to_string())
    }
}

pub fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}
