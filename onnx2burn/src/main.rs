//! `onnx2burn <model.onnx> <out_dir>`: writes `<name>.rs` (formatted, `@generated`) and
//! `<name>.bpk`, plus IR dumps unless `--no-development`. Same code as `#[onnx_model]` and
//! `ModelGen`, from the same library.
//!
//! `onnx2burn check <model.onnx>`: builds and runs that code against ONNX Runtime's outputs
//! (`check.rs`, over `onnx_harness::check`).
#![forbid(unsafe_code)]

mod check;

use clap::Parser;
use onnx_codegen::generate::{generate, type_name, write_files, GenerateOptions, LoadStrategy};
use onnx_codegen::FrontDoor;
use onnx_codegen::{DimSize, InputShape};
use std::path::PathBuf;
use std::process::ExitCode;

/// Generate Burn code from an ONNX model.
///
/// Writes <OUT_DIR>/<name>.rs (formatted Burn module), <OUT_DIR>/<name>.bpk (weights), and,
/// unless --no-development, <name>.ir.txt and <name>.simplified.ir.txt (the IR before/after
/// simplification).
///
/// `onnx2burn check MODEL` runs the generated code against ONNX Runtime instead (see
/// `onnx2burn check --help`).
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The ONNX model.
    model: PathBuf,
    /// Where the files go.
    out_dir: PathBuf,
    /// Struct name, a Rust type name [default: from the file name, e.g. digits.onnx -> Digits]
    #[arg(long)]
    name: Option<String>,
    /// Embed the weights in the binary (include_bytes of the .bpk beside the .rs); by default
    /// Default::default() reads <OUT_DIR>/<name>.bpk at run time
    #[arg(long)]
    embed_states: bool,
    /// Skip the IR simplification passes
    #[arg(long)]
    no_simplify: bool,
    /// Keep one struct and one forward (large graphs are split into submodules)
    #[arg(long)]
    no_partition: bool,
    /// Do not write the IR dumps
    #[arg(long)]
    no_development: bool,
    /// Declare the shape of a graph input the model leaves open, e.g. `x=[batch, 3, ?]` (each
    /// dim a size, a name or `?`; for an input sequence, its tensors' shape); repeatable
    #[arg(long = "input-shape", value_name = "NAME=[DIMS]")]
    input_shapes: Vec<InputShape>,
    /// Fix a dim the model names (or denotes) to a size wherever the model uses it, e.g.
    /// `DynamicDimension.1=320` (ONNX Runtime's free-dimension overrides); `forward` checks it;
    /// repeatable
    #[arg(long = "dim", value_name = "DIM_NAME=SIZE")]
    dim_sizes: Vec<DimSize>,
}

fn run(args: &Args) -> Result<(), String> {
    let bytes = std::fs::read(&args.model).map_err(|e| format!("cannot read `{}`: {e}", args.model.display()))?;
    let stem = args.model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
    let name = args.name.clone().unwrap_or_else(|| type_name(&stem));
    let strategy = if args.embed_states { LoadStrategy::Embedded } else { LoadStrategy::File };
    let opts = GenerateOptions {
        strategy,
        simplify: !args.no_simplify,
        partition: !args.no_partition,
        external_data_dir: Some(&onnx_codegen::model_folder(&args.model)),
        ir_dumps: !args.no_development,
        input_shapes: &args.input_shapes,
        dim_sizes: &args.dim_sizes,
        ..GenerateOptions::new(&name, &args.out_dir)
    };
    let started = std::time::Instant::now();
    let model =
        generate(&bytes, &opts).map_err(|e| format!("{}: {}", args.model.display(), e.report(FrontDoor::Cli)))?;
    if model.nodes > 300 {
        eprintln!(
            "onnx2burn: {} nodes after simplification, imported and lowered in {:.1}s; writing",
            model.nodes,
            started.elapsed().as_secs_f64()
        );
    }
    for path in write_files(&model, &args.out_dir).map_err(|e| e.to_string())? {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    if std::env::args_os().nth(1).is_some_and(|a| a == "check") {
        let program = args.next();
        return check::main(program.into_iter().chain(args.skip(1)));
    }
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("onnx2burn: {e}");
            ExitCode::FAILURE
        }
    }
}
