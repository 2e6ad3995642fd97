//! `--bench`: inference time of the generated code beside ONNX Runtime's, in one run. After the
//! usual check of every output (a fast wrong answer cannot pass), each passing model is timed
//! in `rounds` interleaved rounds: per round and thread count, our forward (the suite binary,
//! `RAYON_NUM_THREADS` threads) then ONNX Runtime's (`scripts/ort_bench.py`, a server kept
//! for the whole run, `intra_op_num_threads` threads), each the median of its iterations on
//! data set 0 after a warm-up. The result per model is the median over rounds; the summary is
//! the geometric mean of the ratios, over all models and over those where ONNX Runtime takes at
//! least 1 ms (where a per-call overhead cannot carry the ratio), with the slowest. ONNX Runtime's
//! time is its run without the Python call around it (`scripts/ort_bench.py` says how: I/O
//! binding or its profiler, whichever is lower; the table counts each).

use crate::cases::Case;
use crate::suite::{Backend, Suite};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

pub struct BenchOptions {
    pub rounds: usize,
    pub threads: Vec<usize>,
    /// The Python with onnxruntime (the test venv's by default).
    pub python: PathBuf,
    /// Iterations per round are chosen so that a round takes about this long (at least 2).
    pub round_ms: f64,
}

/// Medians over rounds, per thread count: `(ours, ORT)` in ms.
pub struct Timing {
    pub name: String,
    pub per_threads: Vec<(f64, f64)>,
    /// How ONNX Runtime was timed, per thread count (the last round's method).
    pub ort_methods: Vec<String>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn parse_times(line: &str) -> Result<Vec<f64>, String> {
    let mut fields = line.trim_end().split('\t');
    match fields.next() {
        Some("TIMES") => fields.map(|t| t.parse::<f64>().map_err(|e| format!("bad time `{t}`: {e}"))).collect(),
        _ => Err(line.trim().to_string()),
    }
}

struct Ort {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Ort {
    fn start(python: &Path, script: &Path) -> Result<Ort, String> {
        let mut child = Command::new(python)
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {} {}: {e}", python.display(), script.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Ort { child, stdin, stdout })
    }

    /// The method ONNX Runtime was timed by, and the times.
    fn times(&mut self, case: &Case, threads: usize, iterations: usize) -> Result<(String, Vec<f64>), String> {
        let request =
            format!("RUN\t{}\t{}\t{threads}\t{iterations}\n", case.model.display(), case.data_sets[0].display());
        self.stdin.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
        self.stdin.flush().map_err(|e| e.to_string())?;
        let mut line = String::new();
        self.stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        let error = |e: String| format!("{}: ONNX Runtime: {e}", case.name);
        let (method, times) = line
            .trim_end()
            .strip_prefix("TIMES\t")
            .and_then(|rest| rest.split_once('\t'))
            .ok_or_else(|| error(line.trim().to_string()))?;
        Ok((method.to_string(), parse_times(&format!("TIMES\t{times}")).map_err(error)?))
    }
}

impl Drop for Ort {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ours(binary: &Path, case: &Case, threads: usize, iterations: usize) -> Result<Vec<f64>, String> {
    let output = Command::new(binary)
        .args(["--bench", &case.name])
        .arg(&case.data_sets[0])
        .arg(iterations.to_string())
        .env("RAYON_NUM_THREADS", threads.to_string())
        // The suite's burn also has wgpu, which Burn would pick by default; the bench is flex's.
        .env("BURN_DEVICE", Backend::Flex.device_name())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find(|l| l.starts_with("TIMES")).unwrap_or("no TIMES line (the process failed)");
    parse_times(line).map_err(|e| format!("{}: ours: {e}", case.name))
}

/// Iterations per round for a forward that took `ms` once.
fn iterations(ms: f64, round_ms: f64) -> usize {
    ((round_ms / ms.max(1e-3)).ceil() as usize).clamp(2, 200)
}

/// Times every case (all of them passed the output check) as described in the module docs.
pub fn run(suite: &Suite, target: &Path, cases: &[&Case], options: &BenchOptions) -> Result<Vec<Timing>, String> {
    let binary = suite.binary(target);
    let mut ort = Ort::start(&options.python, &suite.repo.join("scripts").join("ort_bench.py"))?;
    // Calibration: one timed forward each (after the warm-up), at the first thread count.
    let mut counts = vec![];
    for case in cases {
        let threads = options.threads[0];
        let ours_ms = median(ours(&binary, case, threads, 1)?);
        let ort_ms = median(ort.times(case, threads, 1)?.1);
        counts.push((iterations(ours_ms, options.round_ms), iterations(ort_ms, options.round_ms)));
    }
    let mut rounds: Vec<Vec<Vec<(f64, f64)>>> = vec![vec![vec![]; options.threads.len()]; cases.len()];
    let mut methods = vec![vec![String::new(); options.threads.len()]; cases.len()];
    for round in 0..options.rounds {
        eprintln!("bench round {} of {}", round + 1, options.rounds);
        for (c, case) in cases.iter().enumerate() {
            for (t, &threads) in options.threads.iter().enumerate() {
                let (n_ours, n_ort) = counts[c];
                let a = median(ours(&binary, case, threads, n_ours)?);
                let (method, times) = ort.times(case, threads, n_ort)?;
                rounds[c][t].push((a, median(times)));
                methods[c][t] = method;
            }
        }
    }
    Ok(cases
        .iter()
        .zip(rounds)
        .zip(methods)
        .map(|((case, per_threads), ort_methods)| Timing {
            name: case.name.clone(),
            ort_methods,
            per_threads: per_threads
                .into_iter()
                .map(|r| (median(r.iter().map(|x| x.0).collect()), median(r.iter().map(|x| x.1).collect())))
                .collect(),
        })
        .collect())
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The CPU this ran on (model name, logical cores, widest x86 vector extension).
fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info.lines().find_map(|l| l.strip_prefix("model name")).map(|m| m.trim_start_matches([' ', '\t', ':']));
    let cores = info.lines().filter(|l| l.starts_with("processor")).count();
    let flags = info.lines().find_map(|l| l.strip_prefix("flags")).unwrap_or("");
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    let simd = if has("avx512f") {
        "AVX-512"
    } else if has("avx2") {
        "AVX2"
    } else {
        "no AVX2"
    };
    format!("{} ({cores} logical cores, {simd})", model.unwrap_or("unknown CPU"))
}

/// The results as markdown: one row per model (with its import time, `import_ms`, by name), the
/// geometric mean of the ratios per thread count, and how it was measured.
pub fn markdown(
    timings: &[Timing],
    import_ms: &dyn Fn(&str) -> Option<f64>,
    options: &BenchOptions,
    burn_features: &str,
) -> String {
    let mut out = format!(
        "<!-- Written by `scripts/bench.sh` (`onnx-backend --bench ... --bench-report`); do not edit by hand. -->\n\n\
         Machine: {}. Ours: release build, burn features `{burn_features}`, `RAYON_NUM_THREADS` threads. ORT: \
         onnxruntime (CPU provider, default graph optimisations, `intra_op_num_threads`), its run timed without the \
         Python call around it (`run_with_iobinding` with the inputs bound once, or its profiler's `model_run`, \
         whichever is lower per model). Each time is the median over \
         {} interleaved rounds of the median forward (data set 0, outputs read back) in the round; ratio = ours / ORT. \
         Import: what `#[onnx_model]` does on a first expansion (parsing, inference, optimisation, code generation), \
         timed in this release-built runner, as the macro runs with the README's `build-override` advice.\n\n",
        machine(),
        options.rounds
    );
    out.push_str("| model | import |");
    for t in &options.threads {
        out.push_str(&format!(" ours {t}T | ORT {t}T | ratio {t}T |"));
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---|---|---|".repeat(options.threads.len()));
    out.push('\n');
    for timing in timings {
        let import = import_ms(&timing.name).map_or("–".to_string(), |v| format!("{} ms", ms(v)));
        out.push_str(&format!("| {} | {import} |", timing.name));
        for &(a, b) in &timing.per_threads {
            out.push_str(&format!(" {} ms | {} ms | {:.2}× |", ms(a), ms(b), a / b));
        }
        out.push('\n');
    }
    let all: Vec<&Timing> = timings.iter().collect();
    out.push_str(&summary_row("all models", &all, options.threads.len(), None));
    // The models where ORT takes 1 ms or more differ per thread count: a row each, its column only.
    for (t, threads) in options.threads.iter().enumerate() {
        let heavy: Vec<&Timing> = timings.iter().filter(|x| x.per_threads[t].1 >= 1.0).collect();
        out.push_str(&summary_row(&format!("ORT ≥ 1 ms at {threads}T"), &heavy, options.threads.len(), Some(t)));
    }
    out.push('\n');
    for (t, threads) in options.threads.iter().enumerate() {
        if let Some((ratio, name)) = slowest(timings, t) {
            out.push_str(&format!("Slowest at {threads} thread(s): {name} ({ratio:.2}×). "));
        }
        let by_profiler = timings.iter().filter(|x| x.ort_methods.get(t).is_some_and(|m| m == "profiler")).count();
        out.push_str(&format!(
            "ORT at {threads} thread(s) timed by I/O binding for {} models, by its profiler for {by_profiler}. ",
            timings.len() - by_profiler
        ));
    }
    out.push('\n');
    out
}

/// The geometric mean of ours / ORT over `timings` at thread count index `t`.
fn geomean(timings: &[&Timing], t: usize) -> f64 {
    let sum: f64 = timings.iter().map(|x| (x.per_threads[t].0 / x.per_threads[t].1).ln()).sum();
    (sum / timings.len().max(1) as f64).exp()
}

/// A table row of geometric means, at every thread count or only at index `only`.
fn summary_row(label: &str, timings: &[&Timing], thread_counts: usize, only: Option<usize>) -> String {
    let mut row = format!("| **geometric mean, {label} ({} models)** | |", timings.len());
    for t in 0..thread_counts {
        let cell = match only {
            Some(i) if i != t => String::new(),
            _ => format!("**{:.2}×**", geomean(timings, t)),
        };
        row.push_str(&format!(" | | {cell} |"));
    }
    row + "\n"
}

/// The model with the highest ratio at thread count index `t`.
fn slowest(timings: &[Timing], t: usize) -> Option<(f64, String)> {
    timings.iter().map(|x| (x.per_threads[t].0 / x.per_threads[t].1, x.name.clone())).max_by(|a, b| a.0.total_cmp(&b.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(name: &str, ours: f64, ort: f64, method: &str) -> Timing {
        Timing { name: name.into(), per_threads: vec![(ours, ort)], ort_methods: vec![method.into()] }
    }

    /// The summary: the geometric mean over all models and over those where ONNX Runtime takes
    /// 1 ms or more, the slowest, and how ONNX Runtime was timed.
    #[test]
    fn summary_separates_the_models_of_a_millisecond_or_more() {
        let timings = [
            timing("tiny", 0.2, 0.1, "iobinding"),
            timing("big", 3.0, 2.0, "profiler"),
            timing("bigger", 8.0, 16.0, "iobinding"),
        ];
        let options = BenchOptions { rounds: 1, threads: vec![1], python: PathBuf::from("python3"), round_ms: 1.0 };
        let table = markdown(&timings, &|_| None, &options, "flex");
        // (2 * 1.5 * 0.5)^(1/3) over all; (1.5 * 0.5)^(1/2) over the two of 1 ms or more.
        assert!(table.contains("geometric mean, all models (3 models)** | | | | **1.14×**"), "{table}");
        assert!(table.contains("geometric mean, ORT ≥ 1 ms at 1T (2 models)** | | | | **0.87×**"), "{table}");
        assert!(table.contains("Slowest at 1 thread(s): tiny (2.00×)"), "{table}");
        assert!(table.contains("by I/O binding for 2 models, by its profiler for 1"), "{table}");
    }
}
