//! Runs ONNX backend test suites (the pinned onnx wheel's `backend/test/data/<suite>`, the node
//! suite as scripts/make_node_data.py writes it from the wheel's test cases, or any folder in the
//! same layout) through the code generator: import every model, compile the
//! successes together, run each on every `test_data_set_N`, compare with the expected outputs,
//! and check the outcomes against the suite's expectations file.
//!
//! ```text
//! cargo run -p onnx-backend -- --data <onnx/backend/test/data> [--suite node] [--filter PATTERN] [--update]
//! cargo run -p onnx-backend -- --dir <folder> [--macro] [--no-simplify] [--report book/src/real-models.md]
//! ```
//! Exits 1 when a test listed as `pass` does not pass (or, for `--dir` without expectations,
//! when any test fails).
#![forbid(unsafe_code)]

mod bench;
mod cases;
mod compile;
mod expectations;
mod report_file;
mod suite;

use clap::Parser;
use expectations::Outcome;
use report_file::{ReportFile, REPORT_START};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use suite::{RandomDraws, Suite};

/// The suites shipped in the onnx wheel.
const SUITES: &[&str] = &["node", "simple", "pytorch-converted", "pytorch-operator", "light"];

struct Args {
    /// The folder of test cases.
    folder: PathBuf,
    /// Suite name, for messages and the expectations file; `None` for `--dir`.
    suite: Option<String>,
    filter: Option<Filter>,
    update: bool,
    /// `None` for a `--dir` run without `--expectations`: report only.
    expectations: Option<PathBuf>,
    /// `(rtol, atol)`; ONNX's backend runner uses 1e-3 and 1e-7.
    tolerance: (f64, f64),
    /// A markdown table of the results is written here.
    report: Option<ReportFile>,
    /// Import through `#[onnx_model]` rather than the code generator's output.
    via_macro: bool,
    simplify: bool,
    part_nodes: usize,
    /// `--bench`: time the passing models against ONNX Runtime.
    bench: Option<bench::BenchOptions>,
    /// Build the suite in release (the default with `--bench`) or the dev profile.
    release: bool,
    bench_report: Option<ReportFile>,
    backend: suite::Backend,
    int64: bool,
    grad_check: bool,
    check_only: bool,
    export_dir: Option<PathBuf>,
}

/// Runs ONNX backend test suites through the code generator and checks the outcomes against
/// the suite's expectations file.
#[derive(Parser)]
#[command(version, after_help = format!(
    "--report FILE writes between the `{REPORT_START}` line and its end line (with --report-name NAME, \
     `<!-- onnx-backend report (NAME): start -->`; likewise --bench-report), and refuses a FILE without them."
), group(clap::ArgGroup::new("reports").multiple(true)))]
struct Cli {
    /// The onnx wheel's backend/test/data folder
    #[arg(long, env = "ONNX_BACKEND_DATA")]
    data: Option<PathBuf>,
    /// The suite under --data
    #[arg(long, default_value = "node", value_parser = clap::builder::PossibleValuesParser::new(SUITES))]
    suite: String,
    /// A folder of test cases in the same layout, instead of --data and --suite
    #[arg(long)]
    dir: Option<PathBuf>,
    /// A substring of test names, or a glob (e.g. 'test_conv*')
    #[arg(long, value_name = "PATTERN", value_parser = Filter::parse)]
    filter: Option<Filter>,
    /// Rewrite the expectations file with these outcomes
    #[arg(long)]
    update: bool,
    /// The expectations file [default: the suite's, under tests/onnx-backend; none for --dir]
    #[arg(long, value_name = "FILE")]
    expectations: Option<PathBuf>,
    /// Relative float tolerance (ONNX's backend runner uses 1e-3)
    #[arg(long, default_value_t = 1e-3)]
    rtol: f64,
    /// Absolute float tolerance (ONNX's backend runner uses 1e-7)
    #[arg(long, default_value_t = 1e-7)]
    atol: f64,
    /// Also write the per-test results as a markdown table
    #[arg(long, value_name = "FILE", group = "reports")]
    report: Option<PathBuf>,
    /// Write the report between `<!-- onnx-backend report (NAME): start -->` and its end line
    /// (the book's PyTorch zoo table, book/src/pytorch.md), instead of the backend's markers;
    /// likewise the benchmark's table between `<!-- onnx-backend bench (NAME): start -->` and its end
    #[arg(long, value_name = "NAME", requires = "reports")]
    report_name: Option<String>,
    /// Import each model with #[onnx_model] (as users do) instead of writing its code
    #[arg(long = "macro")]
    via_macro: bool,
    /// Skip the import-time optimisations (outputs must not change)
    #[arg(long)]
    no_simplify: bool,
    /// The Burn backend to run the tests on (the node suite's expectations default to
    /// tests/onnx-backend/<backend>/ for a backend other than flex)
    #[arg(long, value_enum, default_value = "flex")]
    backend: suite::Backend,
    /// Configure the device's default int type as int64 before the tests (Burn's flex default is
    /// int32); node suite expectations default to tests/onnx-backend/int64/
    #[arg(long)]
    int64: bool,
    /// Instead of comparing outputs: one backward pass on an Autodiff device must give every float
    /// initializer of the file (each a parameter) a non-zero gradient
    #[arg(long, conflicts_with = "bench")]
    grad_check: bool,
    /// Generate and type-check the suite (`cargo check`) without building or running it: the
    /// CUDA path compiles on a machine without a GPU (`--backend cuda --check-only`)
    #[arg(long, conflicts_with_all = ["bench", "update", "report"])]
    check_only: bool,
    /// Split forward into methods of N top-level nodes; below the default, models with no more
    /// top-level nodes than N (not split: the default run's code) are left out
    #[arg(long, value_name = "N", default_value_t = onnx_codegen::partition::PART_NODES, value_parser = positive)]
    part_nodes: usize,
    /// Build in release and time every passing model against ONNX Runtime, interleaved
    #[arg(long)]
    bench: bool,
    /// With --bench: rounds
    #[arg(long, value_name = "N", default_value_t = 6, value_parser = positive)]
    rounds: usize,
    /// With --bench: thread counts
    #[arg(long, value_delimiter = ',', default_value = "1,2", value_parser = positive)]
    threads: Vec<usize>,
    /// With --bench: milliseconds of iterations per round
    #[arg(long, value_name = "MS", default_value_t = 300.0)]
    round_ms: f64,
    /// With --bench: onnxruntime's Python [default: the test venv]
    #[arg(long, value_name = "PATH")]
    python: Option<PathBuf>,
    /// With --bench: write the table to FILE
    #[arg(long, value_name = "FILE", group = "reports")]
    bench_report: Option<PathBuf>,
    /// With --bench: build in the dev profile (a smoke run)
    #[arg(long)]
    dev_profile: bool,
    /// Also export each compiled model's module back to ONNX (burn_onnx_export) on its first
    /// data set's inputs: DIR/<test>/model.onnx, or DIR/<test>/error.txt with the reason;
    /// DIR/<test>/source.txt names the original model and data set (scripts/check_reexport.py)
    #[arg(long, value_name = "DIR")]
    export_dir: Option<PathBuf>,
}

fn positive(value: &str) -> Result<usize, String> {
    value.parse().ok().filter(|&n| n > 0).ok_or_else(|| format!("`{value}` is not a positive number"))
}

/// `--filter`: a glob when the pattern has glob syntax, else a substring of the test name.
#[derive(Clone)]
enum Filter {
    Substring(String),
    Glob(globset::GlobMatcher),
}

impl Filter {
    fn parse(pattern: &str) -> Result<Self, String> {
        if !pattern.contains(['*', '?', '[', '{']) {
            return Ok(Self::Substring(pattern.to_string()));
        }
        let glob = globset::Glob::new(pattern).map_err(|e| e.to_string())?;
        Ok(Self::Glob(glob.compile_matcher()))
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            Self::Substring(s) => name.contains(s.as_str()),
            Self::Glob(glob) => glob.is_match(name),
        }
    }
}

fn parse_args() -> Result<Args, String> {
    let cli = Cli::parse();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cache = std::env::var_os("BURN_ONNX_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/burn-onnx")))
        .unwrap_or_default();
    let bench = cli.bench.then(|| bench::BenchOptions {
        rounds: cli.rounds,
        threads: cli.threads.clone(),
        python: cli.python.clone().unwrap_or_else(|| cache.join("venv/bin/python")),
        round_ms: cli.round_ms,
    });
    if cli.bench && cli.backend != suite::Backend::Flex {
        return Err("--bench times the flex backend only".into());
    }
    let (folder, suite, expectations) = match cli.dir {
        // The generated crate lives elsewhere: its model paths must not be relative.
        Some(folder) => (
            std::path::absolute(&folder).map_err(|e| format!("cannot list {}: {e}", folder.display()))?,
            None,
            cli.expectations,
        ),
        None => {
            let data = cli.data.ok_or(
                "the test data folder is needed: --data <onnx/backend/test/data> (or ONNX_BACKEND_DATA), or --dir",
            )?;
            let suite = cli.suite;
            let file = if suite == "node" { "expectations.toml".to_string() } else { format!("{suite}.toml") };
            let folder = match cli.backend {
                suite::Backend::Flex if cli.int64 => here.join("int64"),
                suite::Backend::Flex => here.to_path_buf(),
                other => here.join(other.device_name()),
            };
            (data.join(&suite), Some(suite), cli.expectations.or(Some(folder.join(file))))
        }
    };
    // Each backend's results table has its own markers (flex's are the plain ones), unless named.
    let results_name = match (&cli.report_name, cli.backend) {
        (Some(name), _) => Some(name.clone()),
        (None, suite::Backend::Flex) => None,
        (None, other) => Some(other.device_name().to_string()),
    };
    // A file without the markers is refused now, not after the suite ran.
    let report = cli.report.map(|path| ReportFile::results(path, results_name.as_deref())).transpose()?;
    let bench_report = cli.bench_report.map(|path| ReportFile::bench(path, cli.report_name.as_deref())).transpose()?;
    Ok(Args {
        folder,
        suite,
        filter: cli.filter,
        update: cli.update,
        expectations,
        tolerance: (cli.rtol, cli.atol),
        report,
        via_macro: cli.via_macro,
        simplify: !cli.no_simplify,
        part_nodes: cli.part_nodes,
        bench,
        release: cli.bench && !cli.dev_profile,
        bench_report,
        backend: cli.backend,
        // The remote backend runs with 64-bit integers (see `suite::Backend::Remote`).
        int64: cli.int64 || cli.backend == suite::Backend::Remote,
        grad_check: cli.grad_check,
        check_only: cli.check_only,
        export_dir: cli.export_dir.map(|d| std::path::absolute(&d).unwrap_or(d)),
    })
}

fn main() {
    match run() {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("onnx-backend: {e}");
            std::process::exit(2);
        }
    }
}

fn run() -> Result<i32, String> {
    let args = parse_args()?;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().map_err(|e| e.to_string())?;
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo.join("target"));
    let declared = cases::declared_input_shapes(&repo.join("tests/onnx-backend/input-shapes.txt"))?;
    let mut cases = cases::list(&args.folder, &target.join("onnx-backend-generated"), &declared)?;
    cases.retain(|c| args.filter.as_ref().is_none_or(|f| f.matches(&c.name)));
    if cases.is_empty() {
        return Err(format!("no tests in {} match", args.folder.display()));
    }
    let suite = Suite {
        dir: target.join("onnx-backend-suite"),
        repo: repo.clone(),
        tolerance: args.tolerance,
        via_macro: args.via_macro,
        simplify: args.simplify,
        part_nodes: args.part_nodes,
        release: args.release,
        backend: args.backend,
        int64: args.int64,
        grad_check: args.grad_check,
        check_only: args.check_only,
        export_dir: args.export_dir.clone(),
    };
    suite.init(&target)?;

    let mut outcomes: BTreeMap<String, Outcome> = BTreeMap::new();
    let started = Instant::now();
    let mut imported = vec![];
    let mut generated = BTreeMap::new();
    // Small parts (`--part-nodes` below the default) test the splitting: a model with no more
    // top-level nodes than a part is not split, its code is the unsplit run's, and is left out.
    let splitting_only = args.part_nodes < onnx_codegen::partition::PART_NODES;
    let mut unsplit = 0;
    for case in &cases {
        match suite.generate_case(case) {
            Ok(g) if splitting_only && !g.split => unsplit += 1,
            Ok(g) => {
                imported.push((case, g.module.clone()));
                generated.insert(case.name.clone(), g);
            }
            Err(e) => {
                outcomes.insert(case.name.clone(), Outcome::new("import-error", &e));
            }
        }
    }
    let import_time = started.elapsed();
    eprintln!("imported {} of {} tests in {:.1}s", imported.len() + unsplit, cases.len(), import_time.as_secs_f64());
    if unsplit > 0 {
        eprintln!(
            "{unsplit} of them have no more top-level nodes than a part: not split, the same code as unsplit, left out"
        );
    }

    let started = Instant::now();
    let compiled = compile::compile(&suite, &target, imported, &mut outcomes)?;
    let compile_time = started.elapsed();
    eprintln!("compiled {} tests in {:.1}s", compiled.len(), compile_time.as_secs_f64());
    if args.check_only {
        let failed: Vec<&String> = outcomes.keys().collect();
        println!("checked: {} of {} tests compile (cargo check, not run)", compiled.len(), cases.len());
        return Ok(if failed.is_empty() {
            0
        } else {
            println!("not compiling: {}", failed.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", "));
            1
        });
    }

    if let Some(dir) = &args.export_dir {
        write_export_sources(dir, &compiled)?;
    }
    let started = Instant::now();
    compile::run_suite(&suite, &target, &compiled, &mut outcomes)?;
    let run_time = started.elapsed();
    // A model that draws random values matches its expected values only by chance: once it ran,
    // its outcome says so (errors stay errors). A Dropout that may train is random only where
    // it does not match (a ratio of 0, or inference, is exact).
    for (name, outcome) in outcomes.iter_mut() {
        let mismatch = outcome.status == "mismatch";
        let chance = match generated.get(name).map_or(RandomDraws::None, |g| g.random) {
            RandomDraws::Always => mismatch || outcome.passed(),
            RandomDraws::Dropout => mismatch,
            RandomDraws::None => false,
        };
        if chance {
            *outcome = Outcome::new(
                "random",
                "the expected values are numpy's random draws, which no other generator gives \
                 (tests/src/random.rs checks the distributions instead)",
            );
        }
    }

    if args.grad_check {
        for (name, g) in &generated {
            if outcomes.get(name).is_some_and(Outcome::passed) {
                let n = g.float_initializers;
                println!("{name}: {n} of {n} float initializers of the file are parameters with a non-zero gradient");
            }
        }
    }
    if let Some(report) = &args.report {
        let table = markdown(&cases, &generated, &outcomes, args.tolerance, compile_time.as_secs_f64(), args.backend);
        report.write(&table)?;
    }
    if let Some(options) = &args.bench {
        let passing: Vec<&cases::Case> =
            compiled.iter().map(|(c, _)| *c).filter(|c| outcomes.get(&c.name).is_some_and(Outcome::passed)).collect();
        let timings = bench::run(&suite, &target, &passing, options)?;
        let import_ms = |name: &str| generated.get(name).map(|g| g.import_ms);
        let table = bench::markdown(&timings, &import_ms, options, suite::BURN_FEATURES);
        println!("{table}");
        if let Some(report) = &args.bench_report {
            report.write(&table)?;
        }
    }
    Ok(report(&args, &outcomes, [import_time, compile_time, run_time]))
}

/// `--export-dir`: a fresh folder per compiled test, with `source.txt` naming the original model
/// and the data set the export ran on (what `scripts/check_reexport.py` compares against).
fn write_export_sources(dir: &Path, compiled: &[(&cases::Case, String)]) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    for (case, _) in compiled {
        let Some(data_set) = case.data_sets.first() else { continue };
        let folder = dir.join(&case.name);
        std::fs::create_dir_all(&folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
        let source = format!("model\t{}\ndata_set\t{}\n", case.model.display(), data_set.display());
        std::fs::write(folder.join("source.txt"), source).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn ms(value: Option<f64>) -> String {
    match value {
        Some(v) if v >= 100.0 => format!("{v:.0} ms"),
        Some(v) if v >= 1.0 => format!("{v:.1} ms"),
        Some(v) => format!("{v:.2} ms"),
        None => "–".into(),
    }
}

/// The results as a markdown table (written by `--report`).
fn markdown(
    cases: &[cases::Case],
    generated: &BTreeMap<String, suite::Generated>,
    outcomes: &BTreeMap<String, Outcome>,
    (rtol, atol): (f64, f64),
    compile_s: f64,
    backend: suite::Backend,
) -> String {
    let passed = outcomes.values().filter(|o| o.passed()).count();
    let mut out = format!(
        "<!-- Written by `cargo run -p onnx-backend -- ... --report`; do not edit by hand. -->\n\n\
         **{passed} of {} pass**: every output of every data set within rtol {rtol:e} and atol {atol:e} of ONNX Runtime \
         (and the same top-1 class for classifiers). Import: parsing, inference and code generation, as the macro does it \
         (this runner's build). Ours: `forward` of data set 0 on the {backend} backend, median of 3; ORT: onnxruntime on the \
         same input, median of 9. rustc: all {} models compile together in one crate in {compile_s:.0} s; the share of each \
         is not measured.\n\n\
         | model | nodes | opset | data sets | import | ours | ORT | max abs diff | result |\n|---|---|---|---|---|---|---|---|---|\n",
        outcomes.len(),
        generated.len(),
        backend = backend.device_name(),
    );
    for case in cases {
        let Some(o) = outcomes.get(&case.name) else { continue };
        let g = generated.get(&case.name);
        let facts = g.map_or(("–".into(), "–".into(), "–".into()), |g| {
            (g.nodes.to_string(), g.opset.to_string(), ms(Some(g.import_ms)))
        });
        let sets = match &case.feed {
            Some((output, input)) => format!("{} in a row, `{output}` fed back as `{input}`", case.data_sets.len()),
            None => case.data_sets.len().to_string(),
        };
        let diff = o.max_diff.map_or("–".into(), |d| format!("{d:.1e}"));
        let result = match (o.passed(), case.top1) {
            (true, true) => "pass, top-1 = ORT".to_string(),
            (true, false) => "pass".to_string(),
            (false, _) => format!("{}: {}", o.status, o.reason.replace('|', "\\|")),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {sets} | {} | {} | {} | {diff} | {result} |\n",
            case.name,
            facts.0,
            facts.1,
            facts.2,
            ms(o.forward_ms),
            ms(case.ort_ms)
        ));
    }
    out
}

/// Prints the comparison with the expectations and the closing line; the exit code.
fn report(args: &Args, outcomes: &BTreeMap<String, Outcome>, times: [std::time::Duration; 3]) -> i32 {
    let Some(expectations_file) = &args.expectations else {
        return report_table(outcomes);
    };
    let expected = match std::fs::read_to_string(expectations_file) {
        Ok(text) => match expectations::parse(&text) {
            Ok(map) => map,
            Err(e) => {
                eprintln!("onnx-backend: {}: {e}", expectations_file.display());
                return 2;
            }
        },
        Err(_) => BTreeMap::new(),
    };
    let mut regressions = vec![];
    let mut newly_passing = vec![];
    for (name, outcome) in outcomes {
        let was_pass = expected.get(name).is_some_and(Outcome::passed);
        if was_pass && !outcome.passed() {
            regressions.push(format!("{name}: {} ({})", outcome.status, outcome.reason));
        } else if !was_pass && outcome.passed() {
            newly_passing.push(name.clone());
        }
    }
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    for o in outcomes.values() {
        *by_status.entry(o.status.as_str()).or_default() += 1;
    }
    println!("status counts: {by_status:?}");
    println!(
        "time: import {:.1}s, compile {:.1}s, run {:.1}s",
        times[0].as_secs_f64(),
        times[1].as_secs_f64(),
        times[2].as_secs_f64()
    );
    if !newly_passing.is_empty() {
        println!(
            "{} test(s) now pass that expectations.toml does not list as passing (run with --update and commit):",
            newly_passing.len()
        );
        for n in &newly_passing {
            println!("  {n}");
        }
    }
    if args.update {
        let mut merged = expected.clone();
        merged.extend(outcomes.iter().map(|(k, v)| (k.clone(), v.clone())));
        let folder = args.folder.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let suite = args.suite.clone().unwrap_or(folder);
        let suite = suite.as_str();
        // A new backend's or mode's folder (tests/onnx-backend/<name>/) is made on the first update.
        let written = expectations_file.parent().map_or(Ok(()), std::fs::create_dir_all);
        match written.and_then(|()| std::fs::write(expectations_file, expectations::write(suite, &merged))) {
            Ok(()) => println!("wrote {}", expectations_file.display()),
            Err(e) => eprintln!("cannot write {}: {e}", expectations_file.display()),
        }
    } else if !regressions.is_empty() {
        println!("REGRESSIONS: {} test(s) listed as passing no longer pass:", regressions.len());
        for r in &regressions {
            println!("  {r}");
        }
    }
    let passed = outcomes.values().filter(|o| o.passed()).count();
    println!("{} passed, {} failed", passed, outcomes.len() - passed);
    i32::from(!args.update && !regressions.is_empty())
}

/// `--dir` without expectations: one line per test (with the largest difference or the
/// reason), the closing line, and exit 1 when any test failed.
fn report_table(outcomes: &BTreeMap<String, Outcome>) -> i32 {
    let width = outcomes.keys().map(String::len).max().unwrap_or(4);
    for (name, o) in outcomes {
        let detail = if o.passed() { format!("max diff {:e}", o.max_diff.unwrap_or(0.0)) } else { o.reason.clone() };
        println!("{name:width$}  {:14} {detail}", o.status);
    }
    let passed = outcomes.values().filter(|o| o.passed()).count();
    println!("{} passed, {} failed", passed, outcomes.len() - passed);
    i32::from(passed != outcomes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn filters_are_substrings_or_globs() {
        let matches = |pattern: &str, name: &str| Filter::parse(pattern).expect("a valid pattern").matches(name);
        assert!(matches("conv", "test_conv_with_strides"));
        assert!(matches("test_conv*", "test_conv_with_strides") && !matches("test_conv*", "test_deconv"));
        assert!(matches("*_example", "test_acos_example") && !matches("*_example", "test_acos_example_expanded"));
        assert!(matches("test_*_expanded", "test_softmax_expanded") && !matches("test_*_expanded", "test_softmax"));
        assert!(Filter::parse("test_[").is_err());
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from(["onnx-backend", "--dir", "d", "--threads", "1,4", "--macro"]).expect("parses");
        assert_eq!((cli.threads, cli.via_macro, cli.suite.as_str()), (vec![1, 4], true, "node"));
        assert!(Cli::try_parse_from(["onnx-backend", "--suite", "nodes"]).is_err());
        let named = ["onnx-backend", "--dir", "d", "--report", "R.md", "--report-name", "zoo"];
        assert_eq!(Cli::try_parse_from(named).expect("parses").report_name.as_deref(), Some("zoo"));
        assert!(Cli::try_parse_from(["onnx-backend", "--dir", "d", "--report-name", "zoo"]).is_err());
        let bench = ["onnx-backend", "--dir", "d", "--bench", "--bench-report", "R.md", "--report-name", "ml"];
        assert_eq!(Cli::try_parse_from(bench).expect("parses").report_name.as_deref(), Some("ml"));
    }
}
