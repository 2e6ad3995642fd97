//! Runs the ONNX backend node tests (the `onnx==1.22.0` wheel's `backend/test/data/node`)
//! through the code generator: import every model, compile the successes together, run them
//! on `test_data_set_0`, compare with the expected outputs, and check the outcomes against
//! `expectations.toml`.
//!
//! ```text
//! cargo run -p onnx-backend -- --data <node dir> [--filter PATTERN] [--update]
//! ```
//! Exits 1 when a test listed as `pass` does not pass.

mod compile;
mod expectations;
mod suite;

use expectations::Outcome;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use suite::Suite;

struct Args {
    data: PathBuf,
    filter: Option<String>,
    update: bool,
    expectations: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut args = Args { data: PathBuf::new(), filter: None, update: false, expectations: here.join("expectations.toml") };
    let mut data = std::env::var_os("ONNX_BACKEND_DATA").map(PathBuf::from);
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--data" => data = it.next().map(PathBuf::from),
            "--filter" => args.filter = it.next(),
            "--update" => args.update = true,
            "--expectations" => args.expectations = it.next().map(PathBuf::from).ok_or("--expectations needs a path")?,
            "-h" | "--help" => {
                println!("usage: onnx-backend --data <onnx/backend/test/data/node> [--filter PATTERN] [--update] [--expectations FILE]");
                println!("  PATTERN: a substring of test names, or a glob with `*` (e.g. 'test_conv*')");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}` (see --help)")),
        }
    }
    args.data = data.ok_or("the node test folder is needed: --data DIR or ONNX_BACKEND_DATA")?;
    Ok(args)
}

fn matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains('*') {
        return name.contains(pattern);
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = name;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else { return false };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            let Some(pos) = rest.find(part) else { return false };
            rest = &rest[pos + part.len()..];
        }
    }
    rest.is_empty()
}

fn list_tests(data: &Path, filter: Option<&str>) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(data).map_err(|e| format!("cannot list {}: {e}", data.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("model.onnx").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| filter.is_none_or(|p| matches(p, n)))
        .collect();
    names.sort();
    Ok(names)
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
    let tests = list_tests(&args.data, args.filter.as_deref())?;
    if tests.is_empty() {
        return Err(format!("no tests in {} match", args.data.display()));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().map_err(|e| e.to_string())?;
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo.join("target"));
    let suite = Suite { dir: target.join("onnx-backend-suite"), repo: repo.clone() };
    suite.init()?;

    let mut outcomes: BTreeMap<String, Outcome> = BTreeMap::new();
    let started = Instant::now();
    let mut imported = vec![];
    for name in &tests {
        match suite.generate_case(name, &args.data.join(name).join("model.onnx")) {
            Ok(()) => imported.push(name.clone()),
            Err(e) => {
                outcomes.insert(name.clone(), Outcome::new("import-error", &e));
            }
        }
    }
    let import_time = started.elapsed();
    eprintln!("imported {} of {} tests in {:.1}s", imported.len(), tests.len(), import_time.as_secs_f64());

    let started = Instant::now();
    let compiled = compile::compile(&suite, &target, imported, &mut outcomes)?;
    let compile_time = started.elapsed();
    eprintln!("compiled {} tests in {:.1}s", compiled.len(), compile_time.as_secs_f64());

    let started = Instant::now();
    compile::run_suite(&target, &args.data, &compiled, &mut outcomes)?;
    let run_time = started.elapsed();

    Ok(report(&args, &outcomes, [import_time, compile_time, run_time]))
}

/// Prints the comparison with the expectations and the closing line; the exit code.
fn report(args: &Args, outcomes: &BTreeMap<String, Outcome>, times: [std::time::Duration; 3]) -> i32 {
    let expected = match std::fs::read_to_string(&args.expectations) {
        Ok(text) => match expectations::parse(&text) {
            Ok(map) => map,
            Err(e) => {
                eprintln!("onnx-backend: {}: {e}", args.expectations.display());
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
        println!("{} test(s) now pass that expectations.toml does not list as passing (run with --update and commit):", newly_passing.len());
        for n in &newly_passing {
            println!("  {n}");
        }
    }
    if args.update {
        let mut merged = expected.clone();
        merged.extend(outcomes.iter().map(|(k, v)| (k.clone(), v.clone())));
        match std::fs::write(&args.expectations, expectations::write(&merged)) {
            Ok(()) => println!("wrote {}", args.expectations.display()),
            Err(e) => eprintln!("cannot write {}: {e}", args.expectations.display()),
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
