//! Throwaway: imports every ONNX backend node test (no burn) and prints `name ok` or
//! `name error: message`, one line each, sorted by name.

fn main() {
    let dir = std::env::args().nth(1).expect("usage: node_suite_import <node folder>");
    let mut cases: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    cases.sort();
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(bytes) = std::fs::read(case.join("model.onnx")) else { continue };
        let outcome = std::panic::catch_unwind(|| -> Result<(), String> {
            let graph =
                onnx_ir::import(&bytes, onnx_ir::ImportOptions { simplify: true }).map_err(|e| e.to_string())?;
            onnx_codegen::model::lower_with(&graph, &[], Some(onnx_codegen::partition::PART_NODES))
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        match outcome {
            Ok(Ok(())) => println!("{name} ok"),
            Ok(Err(e)) => println!("{name} error: {}", e.replace('\n', " ")),
            Err(_) => println!("{name} error: panic"),
        }
    }
}
