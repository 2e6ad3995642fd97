//! `onnx2burn check MODEL`: the command line of `onnx_harness::check`.

use clap::Parser;
use onnx_codegen::{DimSize, InputShape};
use onnx_harness::check::{check, CheckOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Check the generated code of a model against ONNX Runtime (or expected outputs you give).
///
/// Builds the code `#[onnx_model]` generates for MODEL in a throwaway crate against this
/// repository's burn-onnx, runs it on the inputs (files, or seeded random values of the declared
/// shapes), and compares every output with the expected values: files given with --expected,
/// else ONNX Runtime's, computed by a Python that can `import onnxruntime`. With --bisect, the
/// model is also built with every intermediate value exposed as an output, and the first node
/// whose output differs from ONNX Runtime's is named.
///
/// Exit code: 0 when every output is within tolerance, 1 when one differs, 2 on an error.
#[derive(Parser)]
#[command(name = "onnx2burn check")]
pub struct CheckArgs {
    /// The ONNX model.
    model: PathBuf,
    /// A graph input's values, from an .npy file or a .pb file (a serialized TensorProto);
    /// repeatable. Inputs not given are seeded random values of their declared shape
    #[arg(long = "input", value_name = "NAME=FILE", value_parser = name_and_file)]
    inputs: Vec<(String, PathBuf)>,
    /// The seed of the random inputs (floats uniform in [-1, 1), ints in [0, 10), bools)
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// An output's expected values (.npy or .pb); repeatable. Outputs not given are compared
    /// with ONNX Runtime
    #[arg(long = "expected", value_name = "NAME=FILE", value_parser = name_and_file)]
    expected: Vec<(String, PathBuf)>,
    /// Relative tolerance: |ours - expected| <= atol + rtol * |expected|
    #[arg(long, default_value_t = 1e-4)]
    rtol: f64,
    /// Absolute tolerance
    #[arg(long, default_value_t = 1e-4)]
    atol: f64,
    /// Also expose every intermediate value of the model as an output and report the first
    /// node, in execution order, whose output differs from ONNX Runtime's
    #[arg(long)]
    bisect: bool,
    /// Import without the simplification passes (as `simplify = false`)
    #[arg(long)]
    no_simplify: bool,
    /// Set the device's default int type to int64 (Burn's flex default is int32), for a model
    /// whose int values pass 2^31. The device is flex unless BURN_DEVICE names another
    #[arg(long)]
    int64: bool,
    /// Declare the shape of a graph input the model leaves open, as for code generation
    #[arg(long = "input-shape", value_name = "NAME=[DIMS]")]
    input_shapes: Vec<InputShape>,
    /// Fix a dim the model names to a size (random inputs need every dim known)
    #[arg(long = "dim", value_name = "DIM_NAME=SIZE")]
    dim_sizes: Vec<DimSize>,
    /// A Rust file of `#[onnx_custom_op]` functions, compiled into the check as module `hooks`
    #[arg(long, value_name = "FILE.rs")]
    hooks: Option<PathBuf>,
    /// Route an op to a function of the --hooks file, as `custom_ops = ["OP" => function]`
    /// does: e.g. `com.microsoft::FastGelu=fast_gelu` or `MatMul=my_matmul`; repeatable
    #[arg(long = "custom-op", value_name = "OP=FUNCTION", value_parser = op_and_function)]
    custom_ops: Vec<(String, String)>,
    /// The Python that runs ONNX Runtime (needs onnxruntime, onnx and numpy)
    #[arg(long, value_name = "PATH", default_value = "python3")]
    python: PathBuf,
    /// Cargo's target folder for the throwaway crate [default: CARGO_TARGET_DIR, else the
    /// repository's target/, whose build of burn it reuses]
    #[arg(long, value_name = "DIR")]
    target_dir: Option<PathBuf>,
}

fn name_and_file(value: &str) -> Result<(String, PathBuf), String> {
    match value.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => Ok((name.to_string(), PathBuf::from(file))),
        _ => Err(format!("`{value}` is not NAME=FILE")),
    }
}

fn op_and_function(value: &str) -> Result<(String, String), String> {
    match value.rsplit_once('=') {
        Some((op, f)) if !op.is_empty() && !f.is_empty() && f.split("::").all(is_identifier) => {
            Ok((op.to_string(), f.to_string()))
        }
        _ => Err(format!("`{value}` is not OP=FUNCTION (a Rust path in the --hooks file)")),
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Runs `onnx2burn check` with these arguments (after `check`).
pub fn main(args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    let args = match CheckArgs::try_parse_from(args) {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("onnx2burn check: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: CheckArgs) -> Result<bool, String> {
    // The generated code is built against this repository's runtime crate.
    let repo = onnx_harness::workspace_root(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))?;
    let target = args.target_dir.clone().unwrap_or_else(|| onnx_harness::default_target(&repo));
    let target = std::path::absolute(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    let options = CheckOptions {
        model: args.model,
        inputs: args.inputs,
        seed: args.seed,
        expected: args.expected,
        python: args.python,
        rtol: args.rtol,
        atol: args.atol,
        bisect: args.bisect,
        simplify: !args.no_simplify,
        int64: args.int64,
        input_shapes: args.input_shapes,
        dim_sizes: args.dim_sizes,
        hooks: args.hooks,
        custom_ops: args.custom_ops,
        repo,
        target,
    };
    let report = check(&options)?;
    print!("{}", report.text);
    Ok(report.passed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        CheckArgs::command().debug_assert();
        let args = CheckArgs::try_parse_from([
            "check",
            "m.onnx",
            "--input",
            "x=a.npy",
            "--custom-op",
            "com.microsoft::FastGelu=fast_gelu",
        ])
        .expect("parses");
        assert_eq!(args.inputs, [("x".to_string(), PathBuf::from("a.npy"))]);
        assert_eq!(args.custom_ops, [("com.microsoft::FastGelu".to_string(), "fast_gelu".to_string())]);
        assert!(CheckArgs::try_parse_from(["check", "m.onnx", "--input", "a.npy"]).is_err());
        assert!(CheckArgs::try_parse_from(["check", "m.onnx", "--custom-op", "Sub=not a path"]).is_err());
    }
}
