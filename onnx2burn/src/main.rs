//! `onnx2burn <model.onnx> <out_dir>`: writes `<name>.rs` (formatted, `@generated`) and
//! `<name>.bpk`, plus IR dumps unless `--no-development`. Same code as `#[onnx_model]` and
//! `ModelGen`, from the same library.

use onnx_codegen::generate::{generate, type_name, write_files, BpkLocation, GenerateOptions, LoadStrategy};
use std::path::PathBuf;
use std::process::ExitCode;

const HELP: &str = "\
onnx2burn: generate Burn code from an ONNX model

usage: onnx2burn <model.onnx> <out_dir> [options]

writes <out_dir>/<name>.rs (formatted Burn module), <out_dir>/<name>.bpk (weights), and, unless
--no-development, <name>.ir.txt and <name>.simplified.ir.txt (the IR before/after simplification)

options:
  --name NAME        struct name (default: from the file name, e.g. digits.onnx -> Digits)
  --embed-states     embed the weights in the binary (include_bytes of the .bpk beside the .rs);
                     by default Default::default() reads <out_dir>/<name>.bpk at run time
  --no-simplify      skip the IR simplification passes
  --no-partition     keep one struct and one forward (large graphs are split into submodules)
  --no-development   do not write the IR dumps
  -h, --help         this text
";

struct Args {
    model: PathBuf,
    out_dir: PathBuf,
    name: Option<String>,
    embed: bool,
    simplify: bool,
    partition: bool,
    development: bool,
}

fn parse() -> Result<Args, String> {
    let mut positional = vec![];
    let mut args = Args {
        model: PathBuf::new(),
        out_dir: PathBuf::new(),
        name: None,
        embed: false,
        simplify: true,
        partition: true,
        development: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{HELP}");
                std::process::exit(0);
            }
            "--embed-states" => args.embed = true,
            "--no-simplify" => args.simplify = false,
            "--no-partition" => args.partition = false,
            "--no-development" => args.development = false,
            "--name" => args.name = Some(it.next().ok_or("--name needs a value")?),
            flag if flag.starts_with('-') => return Err(format!("unknown option `{flag}` (see --help)")),
            _ => positional.push(PathBuf::from(arg)),
        }
    }
    let [model, out_dir] =
        <[PathBuf; 2]>::try_from(positional).map_err(|_| "expected <model.onnx> <out_dir> (see --help)".to_string())?;
    args.model = model;
    args.out_dir = out_dir;
    Ok(args)
}

fn run(args: &Args) -> Result<(), String> {
    let bytes = std::fs::read(&args.model).map_err(|e| format!("cannot read `{}`: {e}", args.model.display()))?;
    let stem = args.model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
    let name = args.name.clone().unwrap_or_else(|| type_name(&stem));
    let strategy = if args.embed { LoadStrategy::Embedded } else { LoadStrategy::File };
    let opts = GenerateOptions {
        name: &name,
        strategy,
        simplify: args.simplify,
        partition: args.partition,
        location: BpkLocation::Beside,
        out_dir: &args.out_dir,
        hooks: &[],
    };
    let started = std::time::Instant::now();
    let model = generate(&bytes, &opts).map_err(|e| format!("{}: {e}", args.model.display()))?;
    if model.nodes > 300 {
        eprintln!(
            "onnx2burn: {} nodes imported and lowered in {:.1}s; writing",
            model.nodes,
            started.elapsed().as_secs_f64()
        );
    }
    for path in write_files(&model, &args.out_dir, args.development).map_err(|e| e.to_string())? {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    match parse().and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("onnx2burn: {e}");
            ExitCode::FAILURE
        }
    }
}
