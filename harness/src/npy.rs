//! NumPy's `.npy` files (format versions 1 to 3, C order, little-endian numbers and bools): what
//! `onnx2burn check` reads for `--input` and `--expected`, and what its generated program writes
//! (`write_npy_source`) and the ONNX Runtime script saves.

use onnx_ir::DType;
use std::path::Path;

/// The element types an `.npy` file and a tensor both have: NumPy's `descr`, and the ONNX type.
const TYPES: &[(&str, DType)] = &[
    ("f2", DType::F16),
    ("f4", DType::F32),
    ("f8", DType::F64),
    ("i1", DType::I8),
    ("i2", DType::I16),
    ("i4", DType::I32),
    ("i8", DType::I64),
    ("u1", DType::U8),
    ("u2", DType::U16),
    ("u4", DType::U32),
    ("u8", DType::U64),
    ("b1", DType::Bool),
];

/// The ONNX `TensorProto.DataType` of `dtype`.
pub fn onnx_code(dtype: DType) -> i32 {
    (1..=26).find(|&code| DType::from_onnx(code) == Some(dtype)).unwrap_or(0)
}

/// Decodes an `.npy` file's bytes into a tensor.
pub fn decode(bytes: &[u8]) -> Result<onnx_ir::TensorData, String> {
    let magic = b"\x93NUMPY";
    if bytes.len() < 10 || &bytes[..6] != magic {
        return Err("not an .npy file (no \\x93NUMPY magic)".into());
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(format!(".npy format version {v} is not one this reads (1 to 3)")),
    };
    let header = bytes.get(start..start + header_len).ok_or("the .npy header is truncated")?;
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let field = |key: &str| -> Result<&str, String> {
        let at = header.find(&format!("'{key}'")).ok_or(format!("the .npy header has no '{key}'"))?;
        let rest = header[at + key.len() + 2..].trim_start();
        Ok(rest.strip_prefix(':').unwrap_or(rest).trim_start())
    };
    let descr = field("descr")?;
    let descr = descr.strip_prefix('\'').and_then(|d| d.split('\'').next()).ok_or("a .npy descr that is no string")?;
    if field("fortran_order")?.starts_with("True") {
        return Err("a Fortran-order .npy file: save it in C order (np.ascontiguousarray)".into());
    }
    let shape = field("shape")?;
    let shape = shape.strip_prefix('(').and_then(|s| s.split(')').next()).ok_or("a .npy shape that is no tuple")?;
    let shape: Vec<usize> = shape
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.trim_end_matches('L').parse().map_err(|_| format!("a .npy dim `{d}` that is no size")))
        .collect::<Result<_, _>>()?;
    let (order, code) = descr.split_at(descr.len().min(1));
    let dtype = TYPES.iter().find(|(c, _)| *c == code).map(|&(_, t)| t);
    let dtype = match (order, dtype) {
        ("<" | "|", Some(t)) => t,
        ("=", Some(t)) if cfg!(target_endian = "little") => t,
        (">", Some(_)) => return Err(format!("big-endian .npy data ({descr}): save it little-endian")),
        _ => return Err(format!("the .npy element type {descr} is not a tensor type (f2/f4/f8, i1..i8, u1..u8, b1)")),
    };
    let data = &bytes[start + header_len..];
    let expected = shape.iter().try_fold(dtype.size(), |n, &d| n.checked_mul(d));
    let expected = expected.ok_or_else(|| format!("a .npy shape {shape:?} too large to hold"))?;
    if data.len() != expected {
        return Err(format!("{} bytes of data for shape {shape:?} of {descr}, expected {expected}", data.len()));
    }
    Ok(onnx_ir::TensorData::new(dtype, shape, data.to_vec()))
}

/// Reads a tensor from an `.npy` file or a `.pb` file (a serialized ONNX `TensorProto`), by the
/// file's extension.
pub fn read_tensor(path: &Path) -> Result<onnx_ir::TensorData, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let decoded = match path.extension().and_then(|e| e.to_str()) {
        Some("npy") => decode(&bytes),
        Some("pb") => onnx_ir::TensorData::decode(&bytes).map_err(|e| format!("not a TensorProto: {e}")),
        _ => return Err(format!("{}: a tensor file is .npy or .pb (a serialized TensorProto)", path.display())),
    };
    decoded.map_err(|e| format!("{}: {e}", path.display()))
}

/// The Rust source of `fn write_npy(path, &TensorData)` for the generated program: Burn's data
/// as an `.npy` file (bf16 widened to f32, which NumPy has no type for).
pub fn write_npy_source() -> &'static str {
    r#"
fn write_npy(path: &std::path::Path, data: &burn::tensor::TensorData) -> std::io::Result<()> {
    use burn::tensor::DType;
    let (descr, bytes): (&str, Vec<u8>) = match data.dtype() {
        DType::F64 => ("<f8", data.as_bytes().to_vec()),
        DType::F32 | DType::Flex32 => ("<f4", data.as_bytes().to_vec()),
        DType::F16 => ("<f2", data.as_bytes().to_vec()),
        DType::BF16 => ("<f4", data.iter::<f32>().flat_map(f32::to_le_bytes).collect()),
        DType::I64 => ("<i8", data.as_bytes().to_vec()),
        DType::I32 => ("<i4", data.as_bytes().to_vec()),
        DType::I16 => ("<i2", data.as_bytes().to_vec()),
        DType::I8 => ("|i1", data.as_bytes().to_vec()),
        DType::U64 => ("<u8", data.as_bytes().to_vec()),
        DType::U32 => ("<u4", data.as_bytes().to_vec()),
        DType::U16 => ("<u2", data.as_bytes().to_vec()),
        DType::U8 => ("|u1", data.as_bytes().to_vec()),
        DType::Bool(_) => ("|b1", data.iter::<bool>().map(u8::from).collect()),
        _ => ("<f8", data.iter::<f64>().flat_map(f64::to_le_bytes).collect()),
    };
    let dims: Vec<String> = data.shape().as_slice().iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&bytes);
    std::fs::write(path, out)
}
"#
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
        let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}\n");
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_numbers_bools_and_scalars() {
        let floats: Vec<u8> = [1.5f32, -2.0, 0.25, 4.0, 5.0, 6.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let t = decode(&npy("<f4", "(2, 3)", &floats)).expect("reads");
        assert_eq!((t.dtype, t.shape.clone()), (DType::F32, vec![2, 3]));
        assert_eq!(t.to_f64s().expect("resident")[..3], [1.5, -2.0, 0.25]);
        let t = decode(&npy("|b1", "(2,)", &[1, 0])).expect("reads");
        assert_eq!((t.dtype, t.to_f64s().expect("resident")), (DType::Bool, vec![1.0, 0.0]));
        let t = decode(&npy("<i8", "()", &7i64.to_le_bytes())).expect("reads");
        assert_eq!((t.shape.len(), t.to_f64s().expect("resident")), (0, vec![7.0]));
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert!(decode(b"hello, world").unwrap_err().contains("not an .npy file"));
        assert!(decode(&npy("<f4", "(3,)", &[0; 8])).unwrap_err().contains("8 bytes of data"));
        assert!(decode(&npy(">f4", "(1,)", &[0; 4])).unwrap_err().contains("big-endian"));
        assert!(decode(&npy("<c8", "(1,)", &[0; 8])).unwrap_err().contains("not a tensor type"));
        let huge = "(18446744073709551615, 2)";
        assert!(decode(&npy("<f4", huge, &[])).unwrap_err().contains("too large"));
        assert!(decode(&npy("<f4", "(2, x)", &[])).unwrap_err().contains("no size"));
        assert_eq!(onnx_code(DType::F32), 1);
        assert_eq!(onnx_code(DType::Bool), 9);
    }
}
