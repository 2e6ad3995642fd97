//! Opset compliance: every (supported op, since-version) pair with a model in
//! tests/opset-compliance (built by scripts/make_opset_compliance.py from the official backend
//! tests, validated by onnx.checker at that opset) must import and lower to Burn code. Pairs
//! that do not are listed with their error in EXPECTED-FAILURES.txt; the list must stay exact.

use onnx_ir::{import, ImportOptions};
use std::collections::BTreeMap;
use std::path::Path;

fn lowers(bytes: &[u8]) -> Result<(), String> {
    let graph = import(bytes, ImportOptions::default()).map_err(|e| e.to_string())?;
    onnx_codegen::model::lower(&graph).map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn every_covered_pair_imports() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/opset-compliance");
    let expected: BTreeMap<String, String> = std::fs::read_to_string(dir.join("EXPECTED-FAILURES.txt"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t').map(|(a, b)| (a.to_string(), b.to_string())))
        .collect();
    let mut models: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/opset-compliance")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
        .collect();
    models.sort();
    let mut problems = vec![];
    let mut passed = 0;
    for path in &models {
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        let bytes = std::fs::read(path).expect("model");
        match (lowers(&bytes), expected.get(&name)) {
            (Ok(()), None) => passed += 1,
            (Ok(()), Some(_)) => problems.push(format!("{name}: imports now; remove it from EXPECTED-FAILURES.txt")),
            (Err(e), Some(why)) if e.contains(why.as_str()) => {}
            (Err(e), _) => problems.push(format!("{name}\t{e}")),
        }
    }
    println!("opset compliance: {passed} of {} (op, since-version) models import", models.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
